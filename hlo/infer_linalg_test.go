package hlo_test

import "testing"

func conv(lhs, rhs, attrs string) string {
	return binary("convolution", lhs, rhs, attrs)
}

func TestInferLinalg(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "matmul", doc: "DotGeneral: the result holds batch, then lhs free, then rhs free dimensions",
			hlo: binary("dot", "f32[2,3]", "f32[3,4]", ", lhs_contracting_dims={1}, rhs_contracting_dims={0}"), want: "f32[2,4]"},
		{name: "vector dot", doc: "Dot: vector x vector is a scalar",
			hlo: binary("dot", "f32[3]", "f32[3]", ", lhs_contracting_dims={0}, rhs_contracting_dims={0}"), want: "f32[]"},
		{name: "batch matmul", doc: "DotGeneral: batch dimensions come first",
			hlo: binary("dot", "f32[5,2,3]", "f32[5,3,4]", ", lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"), want: "f32[5,2,4]"},
		{name: "inner batch dims", doc: "DotGeneral: batch dimensions come first even when they are not leading",
			hlo: binary("dot", "f32[2,5,3]", "f32[3,5,4]", ", lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}"), want: "f32[5,2,4]"},
		{name: "outer product", doc: "DotGeneral: with no contracting dimensions the free dimensions concatenate",
			hlo: binary("dot", "f32[2]", "f32[3]", ""), want: "f32[2,3]"},
		{name: "contracting mismatch", doc: "DotGeneral: contracting dimensions have equal sizes",
			hlo: binary("f32[2,5] dot", "f32[2,3]", "f32[4,5]", ", lhs_contracting_dims={1}, rhs_contracting_dims={0}"), err: "dot: contracting dimension sizes do not match: 3 vs 4"},
		{name: "batch mismatch", doc: "DotGeneral: batch dimensions have equal sizes",
			hlo: binary("f32[5,2,4] dot", "f32[5,2,3]", "f32[6,3,4]", ", lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"), err: "batch dimension sizes must match"},
		{name: "preferred type", doc: "DotGeneral: preferred_element_type widens s8 x s8 to s32",
			hlo: binary("s32[2,4] dot", "s8[2,3]", "s8[3,4]", ", lhs_contracting_dims={1}, rhs_contracting_dims={0}"), want: "s32[2,4]"},
		{name: "preferred type narrower", doc: "ShapeInference: preferred_element_type must not narrow an integer type",
			hlo: binary("s8[2,4] dot", "s32[2,3]", "s32[3,4]", ", lhs_contracting_dims={1}, rhs_contracting_dims={0}"), err: "must not be narrower"},
		{name: "conv valid", doc: "Conv: VALID padding gives input - window + 1 positions",
			hlo: conv("f32[1,5,5,2]", "f32[3,3,2,4]", ", window={size=3x3}, dim_labels=b01f_01io->b01f"), want: "f32[1,3,3,4]"},
		{name: "conv stride pad", doc: "Conv: (input + padding - window) / stride + 1 positions",
			hlo: conv("f32[1,5,5,2]", "f32[3,3,2,4]", ", window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"), want: "f32[1,3,3,4]"},
		{name: "conv lhs dilation", doc: "Conv: base dilation d turns n elements into (n-1)*d+1",
			hlo: conv("f32[1,5,5,2]", "f32[3,3,2,4]", ", window={size=3x3 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"), want: "f32[1,7,7,4]"},
		{name: "conv rhs dilation", doc: "Conv: window dilation d makes a window of size (k-1)*d+1",
			hlo: conv("f32[1,5,5,2]", "f32[3,3,2,4]", ", window={size=3x3 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f"), want: "f32[1,1,1,4]"},
		{name: "conv layouts", doc: "Conv: dim_labels say which dimension is batch, feature and spatial",
			hlo: conv("f32[1,2,5,5]", "f32[4,2,3,3]", ", window={size=3x3}, dim_labels=bf01_oi01->bf01"), want: "f32[1,4,3,3]"},
		{name: "conv feature groups", doc: "Conv: with feature_group_count G the kernel takes input features / G",
			hlo: conv("f32[1,5,5,4]", "f32[3,3,2,6]", ", window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2"), want: "f32[1,3,3,6]"},
		{name: "conv batch groups", doc: "Conv: with batch_group_count G the output batch is input batch / G",
			hlo: conv("f32[4,5,5,2]", "f32[3,3,2,6]", ", window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2"), want: "f32[2,3,3,6]"},
		{name: "conv feature mismatch", doc: "Conv: the kernel's input features are the input's features / feature_group_count",
			hlo: binary("f32[1,3,3,4] convolution", "f32[1,5,5,2]", "f32[3,3,3,4]", ", window={size=3x3}, dim_labels=b01f_01io->b01f"), err: "feature_group_count"},
		{name: "conv window mismatch", doc: "Conv: window sizes are the kernel's spatial sizes",
			hlo: binary("f32[1,3,3,4] convolution", "f32[1,5,5,2]", "f32[3,3,2,4]", ", window={size=2x2}, dim_labels=b01f_01io->b01f"), err: "window dimensions do not match"},
		{name: "fft", doc: "Fft FFT: complex to complex of the same shape",
			hlo: unaryAttrs("fft", "c64[4,8]", ", fft_type=FFT, fft_length={8}"), want: "c64[4,8]"},
		{name: "rfft", doc: "Fft RFFT: the innermost dimension becomes fft_length/2+1 complex values",
			hlo: unaryAttrs("fft", "f32[4,8]", ", fft_type=RFFT, fft_length={8}"), want: "c64[4,5]"},
		{name: "irfft", doc: "Fft IRFFT: fft_length/2+1 complex values become fft_length reals",
			hlo: unaryAttrs("fft", "c128[4,5]", ", fft_type=IRFFT, fft_length={8}"), want: "f64[4,8]"},
		{name: "rfft length", doc: "Fft RFFT: the innermost dimensions are fft_length",
			hlo: unaryAttrs("c64[4,5] fft", "f32[4,6]", ", fft_type=RFFT, fft_length={8}"), err: "should be 8"},
		{name: "cholesky", doc: "Cholesky: batches of square matrices keep their shape",
			hlo: unaryAttrs("cholesky", "f32[3,4,4]", ", lower=true"), want: "f32[3,4,4]"},
		{name: "cholesky non-square", doc: "Cholesky: the two minor dimensions are equal",
			hlo: unaryAttrs("f32[3,4] cholesky", "f32[3,4]", ""), err: "must have equal size"},
		{name: "triangular-solve left", doc: "TriangularSolve: left_side solves a x = b; the result has b's shape",
			hlo: binary("triangular-solve", "f32[4,4]", "f32[4,3]", ", left_side=true, lower=true, transpose_a=NO_TRANSPOSE"), want: "f32[4,3]"},
		{name: "triangular-solve right mismatch", doc: "TriangularSolve: a's size matches b's minor dimension when solving x a = b",
			hlo: binary("f32[4,3] triangular-solve", "f32[4,4]", "f32[4,3]", ", left_side=false, lower=true, transpose_a=NO_TRANSPOSE"), err: "shared dimension"},
		{name: "batch-norm-training", doc: "BatchNormTraining: (normalized, batch mean, batch variance)",
			hlo: module("", `
  x = f32[2,3,4,5] parameter(0)
  s = f32[5] parameter(1)
  o = f32[5] parameter(2)
  ROOT b = batch-norm-training(x, s, o), epsilon=0.001, feature_index=3`), want: "(f32[2,3,4,5], f32[5], f32[5])"},
		{name: "batch-norm-inference", doc: "BatchNormInference: the normalized operand",
			hlo: module("", `
  x = f32[2,3,4,5] parameter(0)
  v = f32[3] parameter(1)
  ROOT b = batch-norm-inference(x, v, v, v, v), epsilon=0.001, feature_index=1`), want: "f32[2,3,4,5]"},
		{name: "batch-norm-grad", doc: "BatchNormGrad: (grad operand, grad scale, grad offset)",
			hlo: module("", `
  x = f32[2,3] parameter(0)
  v = f32[3] parameter(1)
  ROOT b = batch-norm-grad(x, v, v, v, x), epsilon=0.001, feature_index=1`), want: "(f32[2,3], f32[3], f32[3])"},
		{name: "batch-norm feature count", doc: "BatchNorm: scale has one entry per feature",
			hlo: module("", `
  x = f32[2,3,4,5] parameter(0)
  s = f32[4] parameter(1)
  ROOT b = (f32[2,3,4,5], f32[5], f32[5]) batch-norm-training(x, s, s), epsilon=0.001, feature_index=3`), err: "feature count"},
	})
}
