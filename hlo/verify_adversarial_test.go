package hlo_test

import (
	"errors"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// TestShapeByteSize: hand-worked sizes, and the first sizes past int64.
func TestShapeByteSize(t *testing.T) {
	for _, c := range []struct {
		s           hlo.Shape
		elems, size int64 // size -1: overflow
	}{
		{hlo.ArrayShape(hlo.F32, 2, 3), 6, 24},
		{hlo.ScalarShape(hlo.C128), 1, 16},
		{hlo.ArrayShape(hlo.S4, 3), 3, 3}, // sub-byte elements take a byte each
		{hlo.ArrayShape(hlo.F32, 0, 1<<62, 1<<62), 0, 0},
		{hlo.ArrayShape(hlo.F32, 1<<61-1), 1<<61 - 1, 1<<63 - 4},
		{hlo.ArrayShape(hlo.F32, 1<<61), 1 << 61, -1},
		{hlo.ArrayShape(hlo.S8, 1<<32, 1<<32), -1, -1},
		{hlo.ArrayShape(hlo.S8, 1<<31, 1<<31, 2), -1, -1},
		{hlo.TupleShape(hlo.ArrayShape(hlo.S8, 5), hlo.ArrayShape(hlo.F32, 2)), -2, 13},
		{hlo.TupleShape(hlo.ArrayShape(hlo.S8, 1<<62), hlo.ArrayShape(hlo.S8, 1<<62)), -2, -1},
		{hlo.TokenShape(), -2, 0},
	} {
		size, err := c.s.ByteSize()
		if c.size < 0 {
			if !errors.Is(err, hlo.ErrShapeTooLarge) {
				t.Errorf("%s: ByteSize = %d, %v; want ErrShapeTooLarge", c.s, size, err)
			}
		} else if err != nil || size != c.size {
			t.Errorf("%s: ByteSize = %d, %v; want %d", c.s, size, err, c.size)
		}
		if c.elems == -2 {
			continue
		}
		n, err := c.s.CheckedNumElements()
		if c.elems < 0 {
			if !errors.Is(err, hlo.ErrShapeTooLarge) {
				t.Errorf("%s: CheckedNumElements = %d, %v; want ErrShapeTooLarge", c.s, n, err)
			}
		} else if err != nil || n != c.elems {
			t.Errorf("%s: CheckedNumElements = %d, %v; want %d", c.s, n, err, c.elems)
		}
	}
}

// TestVerifyRejectsOversizedShapes: shapes past int64 elements or bytes,
// written (set after parsing, as the parser refuses them) or inferred, are
// verifier errors naming the instruction (Axle issue 43). The pad and
// reduce-window cases wrap around to the written size: 5 + 4*2^62 is 5
// modulo 2^64, and (5-1)*2^62 + 1 is 1.
func TestVerifyRejectsOversizedShapes(t *testing.T) {
	cases := []struct {
		name, hlo, instr, msg string
		edit                  func(m *hlo.Module)
	}{
		{"written", module("", `
  ROOT p = f32[2,2] parameter(0)`), "p", "element count of f32[4294967296,4294967296] overflows int64",
			func(m *hlo.Module) { m.Entry.Root.Shape.Dims = []int64{1 << 32, 1 << 32} }},
		{"broadcast", module("", `
  z = f32[] constant(0)
  ROOT b = f32[4] broadcast(z), dimensions={}`), "b", "byte size of f32[4611686018427387904]",
			func(m *hlo.Module) { m.Entry.Root.Shape.Dims = []int64{1 << 62} }},
		{"pad interior wraps", module("", `
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[5] pad(x, z), padding=0_0_4611686018427387904`), "p", "the padded size of dimension 0 overflows int64", nil},
		{"pad high", module("", `
  x = f32[2] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[2] pad(x, z), padding=0_9223372036854775807`), "p", "the padded size of dimension 0 overflows int64", nil},
		{"reduce-window dilation wraps", module(addF32, `
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1] reduce-window(x, z), window={size=1 lhs_dilate=4611686018427387904}, to_apply=add_f32`), "r", "overflows int64", nil},
		{"concatenate", module("", `
  a = s8[4] parameter(0)
  ROOT c = s8[8] concatenate(a, a), dimensions={0}`), "c", "the concatenated size of dimension 0 overflows int64",
			func(m *hlo.Module) { m.Entry.Instructions[0].Shape.Dims = []int64{1<<63 - 8} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustParse(t, c.hlo)
			if c.edit != nil {
				c.edit(m)
				m.EntryLayout = nil // the edit would also contradict it
			}
			err := hlo.Verify(m)
			wantProblem(t, err, "e", c.instr, c.msg)
		})
	}
}

// TestVerifyRejectsInvalidLayouts: minor_to_major must be a permutation of
// the dimensions (XLA's LayoutUtil::ValidateLayoutInShape); backends
// compute strides from it.
func TestVerifyRejectsInvalidLayouts(t *testing.T) {
	for _, c := range []struct{ shape, msg string }{
		{"f32[2,3]{0,0}", "minor_to_major field has duplicate values: 0"},
		{"f32[2,3]{2,0}", "minor_to_major field has out-of-bounds value: 2"},
		{"f32[2,3]{-1,0}", "minor_to_major field has out-of-bounds value: -1"},
		{"(s32[], f32[2,3]{1,1})", "tuple element 1: layout minor_to_major field has duplicate values: 1"},
	} {
		m := mustParse(t, module("", "  ROOT p = "+c.shape+" parameter(0)"))
		wantProblem(t, hlo.Verify(m), "e", "p", c.msg)
	}
	// The parser refuses a wrong length; a module built in Go can have one.
	m := mustParse(t, module("", "  ROOT p = f32[2,3] parameter(0)"))
	m.Entry.Root.Shape.Layout = &hlo.Layout{MinorToMajor: []int64{0}}
	m.EntryLayout = nil
	wantProblem(t, hlo.Verify(m), "e", "p", "mismatched minor-to-major size 1 and dimension size 2")
}

// TestVerifyClosesExecuteGaps: modules that verified and then panicked in
// Execute (or ran on nonsense), each now a verifier error naming the
// instruction (Axle issue 43). The rules are XLA's and StableHLO's:
// TopK's result is (values, s32 indices) of the operand's shape with k
// in the last dimension; batching dimensions of gather/scatter indices are
// in range and pair with operand dimensions of the same size; a bitcast
// keeps the bits; rng-bit-generator's state is u64[2] (three-fry) or
// u64[2|3] (philox) and its result is (state, bits); FFT lengths are the
// operand's trailing dimensions; broadcast dimensions are distinct and in
// range (a transposing broadcast, dimensions={1,0}, stays valid as in
// XLA: see TestVerifyAcceptsTransposingBroadcast).
func TestVerifyClosesExecuteGaps(t *testing.T) {
	const addS32 = `
upd {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
`
	cases := []struct{ name, hlo, instr, msg string }{
		{"topk k too large", module("", `
  x = f32[4,8] parameter(0)
  ROOT t = (f32[4,9], s32[4,9]) custom-call(x), custom_call_target="TopK"`), "t", "k=9 is out of range for the last dimension of f32[4,8]"},
		{"topk indices disagree", module("", `
  x = f32[4,8] parameter(0)
  ROOT t = (f32[4,2], s32[4,3]) custom-call(x), custom_call_target="TopK"`), "t", "expected instruction to have shape equal to (f32[4,2], s32[4,2])"},
		{"topk rank", module("", `
  x = f32[4,8] parameter(0)
  ROOT t = (f32[2], s32[2]) custom-call(x), custom_call_target="TopK"`), "t", "returns a tuple (values, indices) of rank 2"},
		{"gather index batching out of range", module("", `
  x = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={7}, index_vector_dim=2, slice_sizes={1,1}`),
			"g", "invalid start_indices_batching_dims {7}: dimensions must be unique and in [0, 2)"},
		{"gather batching sizes", module("", `
  x = s32[3,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}`),
			"g", "operand_batching_dims dimension 0 (size 3) and start_indices_batching_dims dimension 0 (size 2) must have the same size"},
		{"gather batching is index_vector_dim", module("", `
  x = s32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = s32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={1}, index_vector_dim=1, slice_sizes={1,1}`),
			"g", "start_indices_batching_dims cannot contain index_vector_dim 1"},
		{"scatter index batching out of range", module(addS32, `
  x = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  u = s32[2,2] parameter(2)
  ROOT s = s32[2,3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={9}, index_vector_dim=2, to_apply=upd`),
			"s.1", "invalid scatter_indices_batching_dims {9}"},
		{"bitcast element count", module("", `
  x = f32[2,3] parameter(0)
  ROOT b = f32[100] bitcast(x)`), "b", "bitcast cannot change the size in bits: operand f32[2,3] has 6 elements of 32 bits, result f32[100] has 100 elements of 32 bits"},
		{"bitcast element width", module("", `
  x = f32[2,3] parameter(0)
  ROOT b = f64[6] bitcast(x)`), "b", "bitcast cannot change the size in bits"},
		{"rng state size", module("", `
  s = u64[1] parameter(0)
  ROOT r = (u64[1], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry`), "r", "the rng-bit-generator state must be u64[2] for algorithm rng_three_fry, got u64[1]"},
		{"rng state type", module("", `
  s = f32[2] parameter(0)
  ROOT r = (f32[2], u32[4]) rng-bit-generator(s), algorithm=rng_philox`), "r", "the rng-bit-generator state must be u64[2 or 3] for algorithm rng_philox, got f32[2]"},
		{"rng not a tuple", module("", `
  s = u64[2] parameter(0)
  ROOT r = u32[4] rng-bit-generator(s), algorithm=rng_three_fry`), "r", "expected tuple shape with 2 elements (state, bits)"},
		{"rng bits type", module("", `
  s = u64[2] parameter(0)
  ROOT r = (u64[2], pred[4]) rng-bit-generator(s), algorithm=rng_three_fry`), "r", "generates an array of integers or floats, got pred[4]"},
		{"fft length", module("", `
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={8}`), "f", "FFT requires innermost dimensions match fft_length but dimension 0 is 4 and should be 8"},
		{"ifft length", module("", `
  x = c64[3,4] parameter(0)
  ROOT f = c64[3,4] fft(x), fft_type=IFFT, fft_length={3,5}`), "f", "dimension 1 is 4 and should be 5"},
		{"irfft negative length", module("", `
  x = c64[0] parameter(0)
  ROOT f = f32[0] fft(x), fft_type=IRFFT, fft_length={-2}`), "f", "fft_length {-2} must not be negative"},
		{"broadcast repeated", module("", `
  x = f32[3,3] parameter(0)
  ROOT b = f32[3,3] broadcast(x), dimensions={1,1}`), "b", "broadcast dimension 1 is repeated in dimensions={1,1}"},
		{"broadcast out of range", module("", `
  x = f32[3] parameter(0)
  ROOT b = f32[3,3] broadcast(x), dimensions={7}`), "b", "broadcast dimension 7 is out of bounds for result rank 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, hlo.Verify(mustParse(t, c.hlo)), "e", c.instr, c.msg)
		})
	}
}

// TestVerifyAcceptsTransposingBroadcast: XLA's verifier checks broadcast
// dimensions only for range and sizes, so dimensions={1,0} (operand
// dimension 0 to result dimension 1) is valid HLO; xb's gradients emit it.
func TestVerifyAcceptsTransposingBroadcast(t *testing.T) {
	m := mustParse(t, module("", `
  x = f32[2,3] parameter(0)
  ROOT b = f32[3,4,2] broadcast(x), dimensions={2,0}`))
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
}
