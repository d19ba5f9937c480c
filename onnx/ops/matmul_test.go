package ops

import (
	"math"
	"math/rand"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

func mmTestTensor(r *rand.Rand, t hlo.DType, dims ...int64) *onnx.Tensor {
	n := numElems(dims)
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64(r.Intn(11) - 5)
	}
	return onnx.TensorOf(literal(t, vals, dims...))
}

func mmTestNode(op string, nIn int, attrs ...*onnxpb.AttributeProto) *onnx.Node {
	n := &onnx.Node{Op: op, Attrs: map[string]*onnxpb.AttributeProto{}}
	for i := 0; i < nIn; i++ {
		n.Inputs = append(n.Inputs, string(rune('a'+i)))
	}
	n.Outputs = []string{"y"}
	for _, a := range attrs {
		n.Attrs[a.GetName()] = a
	}
	return n
}

func mmIntAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), I: proto.Int64(v), Type: onnxpb.AttributeProto_INT.Enum()}
}

func mmTestRun(t *testing.T, n *onnx.Node, opset int, in ...*onnx.Tensor) *onnx.Tensor {
	t.Helper()
	l := &Lowerer{Opsets: map[string]int{"": opset}, Env: NewEnv(nil)}
	out, err := l.Evaluate(n, in)
	if err != nil {
		t.Fatalf("%s: %v", n.Op, err)
	}
	return out[0]
}

// mmRef is numpy's matmul on float64 values.
func mmRef(a []float64, ad []int64, b []float64, bd []int64) ([]float64, []int64) {
	aVec, bVec := len(ad) == 1, len(bd) == 1
	if aVec {
		ad = []int64{1, ad[0]}
	}
	if bVec {
		bd = []int64{bd[0], 1}
	}
	m, k, n := ad[len(ad)-2], ad[len(ad)-1], bd[len(bd)-1]
	batch, _ := BroadcastDims(ad[:len(ad)-2], bd[:len(bd)-2])
	nb := numElems(batch)
	idx := func(dims []int64, flat int64) int64 { // batch offset in an operand
		bdims := dims[:len(dims)-2]
		off, stride := int64(0), int64(1)
		rem := flat
		coords := make([]int64, len(batch))
		for i := len(batch) - 1; i >= 0; i-- {
			coords[i] = rem % batch[i]
			rem /= batch[i]
		}
		for i := len(bdims) - 1; i >= 0; i-- {
			c := coords[len(batch)-len(bdims)+i]
			if bdims[i] == 1 {
				c = 0
			}
			off += c * stride
			stride *= bdims[i]
		}
		return off
	}
	out := make([]float64, nb*m*n)
	for p := int64(0); p < nb; p++ {
		ao, bo := idx(ad, p)*m*k, idx(bd, p)*k*n
		for i := int64(0); i < m; i++ {
			for j := int64(0); j < n; j++ {
				s := 0.0
				for q := int64(0); q < k; q++ {
					s += a[ao+i*k+q] * b[bo+q*n+j]
				}
				out[p*m*n+i*n+j] = s
			}
		}
	}
	od := append([]int64(nil), batch...)
	if !aVec {
		od = append(od, m)
	}
	if !bVec {
		od = append(od, n)
	}
	return out, od
}

func TestMatqMatMulBroadcast(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := [][2][]int64{
		{{3}, {3}}, {{3}, {3, 4}}, {{2, 3}, {3}}, {{5, 2, 3}, {3}}, {{3}, {5, 3, 4}},
		{{2, 3}, {3, 4}}, {{5, 2, 3}, {3, 4}}, {{2, 3}, {5, 3, 4}},
		{{5, 2, 3}, {5, 3, 4}}, {{5, 1, 2, 3}, {6, 3, 4}}, {{1, 6, 2, 3}, {5, 1, 3, 4}},
		{{5, 6, 2, 3}, {1, 6, 3, 4}}, {{5, 1, 2, 3}, {1, 6, 3, 4}}, {{7, 1, 6, 2, 3}, {5, 1, 3, 4}},
		{{2, 0, 3}, {3, 4}}, {{2, 3, 0}, {0, 4}},
		// A dense layer over rows with batch dimensions: one dot on a as
		// it is (no reshapes).
		{{1, 2, 3}, {3, 4}}, {{2, 5, 2, 3}, {3, 4}}, {{1, 1, 2, 3}, {3, 4}}, {{2, 1, 3}, {3, 4}},
	}
	for _, cs := range cases {
		at, bt := mmTestTensor(r, hlo.F32, cs[0]...), mmTestTensor(r, hlo.F32, cs[1]...)
		got := mmTestRun(t, mmTestNode("MatMul", 2), 13, at, bt)
		a, _ := Float64s(at)
		b, _ := Float64s(bt)
		want, wd := mmRef(a, cs[0], b, cs[1])
		if !equalDims(got.Dims(), wd) {
			t.Fatalf("%v x %v: dims %v, want %v", cs[0], cs[1], got.Dims(), wd)
		}
		g, _ := Float64s(got)
		for i := range want {
			if g[i] != want[i] {
				t.Fatalf("%v x %v: element %d is %v, want %v", cs[0], cs[1], i, g[i], want[i])
			}
		}
	}
}

func TestMatqQuantizeBlocked(t *testing.T) {
	// x [2, 5] quantized in blocks of 2 along axis 1 (3 blocks, the last
	// one short).
	x := onnx.TensorOf(literal(hlo.F32, []float64{1, 2, 3, 4, 5, -1, -2, -3, -4, -5}, 2, 5))
	s := onnx.TensorOf(literal(hlo.F32, []float64{1, 2, 0.5, 1, 4, 2}, 2, 3))
	zp := onnx.TensorOf(literal(hlo.S8, []float64{0, 1, 2, 0, 0, -1}, 2, 3))
	axis, bs := mmIntAttr("axis", 1), mmIntAttr("block_size", 2)
	y := mmTestRun(t, mmTestNode("QuantizeLinear", 3, axis, bs), 21, x, s, zp)
	got, _ := Float64s(y)
	// 1/1=1, 2/1=2, 3/2=1.5->2 +1=3, 4/2=2 +1=3, 5/.5=10 +2=12
	// -1, -2, -3/4=-0.75->-1, -4/4=-1, -5/2=-2.5->-2 -1=-3
	want := []float64{1, 2, 3, 3, 12, -1, -2, -1, -1, -3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("blocked quantize: got %v, want %v", got, want)
		}
	}
	dq := mmTestRun(t, mmTestNode("DequantizeLinear", 3, axis, bs), 21, y, s, zp)
	dg, _ := Float64s(dq)
	wantD := []float64{1, 2, 4, 4, 5, -1, -2, -4, -4, -4}
	for i := range wantD {
		if math.Abs(dg[i]-wantD[i]) > 0 {
			t.Fatalf("blocked dequantize: got %v, want %v", dg, wantD)
		}
	}
}

func mmTestInts(r *rand.Rand, t hlo.DType, dims ...int64) (*onnx.Tensor, []float64) {
	lo, hi, _ := qIntRange(t)
	vals := make([]float64, numElems(dims))
	for i := range vals {
		vals[i] = lo + float64(r.Intn(int(hi-lo+1)))
	}
	return onnx.TensorOf(literal(t, vals, dims...)), vals
}

// TestMatqMatMulInteger checks MatMulInteger (zero points subtracted in s32) against
// the direct product, for u8 and s8 operands and all zero point forms.
func TestMatqMatMulInteger(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	type zpForm int
	const (
		none zpForm = iota
		scalar
		vector
	)
	shapes := [][2][]int64{{{3, 5}, {5, 4}}, {{2, 3, 5}, {5, 4}}, {{2, 3, 5}, {2, 5, 4}}, {{5}, {5, 4}}, {{3, 5}, {5}}, {{3, 5}, {2, 5, 4}}}
	for _, sh := range shapes {
		for _, ta := range []hlo.DType{hlo.U8, hlo.S8} {
			for _, tb := range []hlo.DType{hlo.U8, hlo.S8} {
				for _, fa := range []zpForm{none, scalar, vector} {
					for _, fb := range []zpForm{none, scalar, vector} {
						ad, bd := sh[0], sh[1]
						if (fa == vector && len(ad) == 1) || (fb == vector && len(bd) == 1) {
							continue
						}
						at, a := mmTestInts(r, ta, ad...)
						bt, b := mmTestInts(r, tb, bd...)
						in := []*onnx.Tensor{at, bt, nil, nil}
						m, n := int64(1), int64(1)
						if len(ad) > 1 {
							m = ad[len(ad)-2]
						}
						if len(bd) > 1 {
							n = bd[len(bd)-1]
						}
						k := ad[len(ad)-1]
						zaOf := func(i int64) float64 { return 0 }
						zbOf := func(j int64) float64 { return 0 }
						switch fa {
						case scalar:
							zt, z := mmTestInts(r, ta)
							in[2], zaOf = zt, func(int64) float64 { return z[0] }
						case vector:
							zt, z := mmTestInts(r, ta, m)
							in[2], zaOf = zt, func(i int64) float64 { return z[i] }
						}
						switch fb {
						case scalar:
							zt, z := mmTestInts(r, tb)
							in[3], zbOf = zt, func(int64) float64 { return z[0] }
						case vector:
							zt, z := mmTestInts(r, tb, n)
							in[3], zbOf = zt, func(j int64) float64 { return z[j] }
						}
						// Subtract the zero points, then the float reference.
						as, bs := append([]float64(nil), a...), append([]float64(nil), b...)
						for i := range as {
							as[i] -= zaOf(int64(i) / k % m)
						}
						for i := range bs {
							bs[i] -= zbOf(int64(i) % n)
						}
						want, wd := mmRef(as, ad, bs, bd)
						got := mmTestRun(t, mmTestNode("MatMulInteger", 4), 10, in...)
						if !equalDims(got.Dims(), wd) || got.Lit.DType() != hlo.S32 {
							t.Fatalf("%v %v: got %v, want dims %v", ad, bd, got.Lit.Shape(), wd)
						}
						g, _ := Float64s(got)
						for i := range want {
							if g[i] != want[i] {
								t.Fatalf("%v(%s, zp %d) x %v(%s, zp %d): element %d is %v, want %v", ad, ta, fa, bd, tb, fb, i, g[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

func mmIntsAttr(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Ints: v, Type: onnxpb.AttributeProto_INTS.Enum()}
}

// TestMatqConvInteger checks ConvInteger's geometry (groups, strides,
// dilations, SAME padding) and both of its forms (exact f32 and s32)
// against a direct loop.
func TestMatqConvInteger(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, tc := range []struct {
		n, c, h, w, m, kh, kw, group, s, d int64
		autoPad                            string
	}{
		{1, 4, 7, 6, 4, 3, 2, 2, 2, 1, "SAME_UPPER"},
		{2, 2, 5, 5, 3, 3, 3, 1, 1, 2, "SAME_LOWER"},
		{1, 40, 5, 4, 2, 3, 3, 1, 1, 1, "VALID"}, // 360 terms: the s32 form
		{1, 3, 6, 6, 6, 2, 2, 3, 3, 1, "NOTSET"},
	} {
		xt, x := mmTestInts(r, hlo.U8, tc.n, tc.c, tc.h, tc.w)
		wt, w := mmTestInts(r, hlo.S8, tc.m, tc.c/tc.group, tc.kh, tc.kw)
		zxt, zx := mmTestInts(r, hlo.U8)
		zwt, zw := mmTestInts(r, hlo.S8, tc.m)
		attrs := []*onnxpb.AttributeProto{mmIntAttr("group", tc.group), mmIntsAttr("strides", tc.s, tc.s), mmIntsAttr("dilations", tc.d, tc.d)}
		attrs = append(attrs, &onnxpb.AttributeProto{Name: proto.String("auto_pad"), S: []byte(tc.autoPad), Type: onnxpb.AttributeProto_STRING.Enum()})
		padT, padL := int64(0), int64(0)
		ekh, ekw := (tc.kh-1)*tc.d+1, (tc.kw-1)*tc.d+1
		var oh, ow int64
		switch tc.autoPad {
		case "VALID":
			oh, ow = (tc.h-ekh)/tc.s+1, (tc.w-ekw)/tc.s+1
		case "NOTSET":
			attrs = append(attrs, mmIntsAttr("pads", 1, 0, 0, 1))
			padT = 1
			oh, ow = (tc.h+1-ekh)/tc.s+1, (tc.w+1-ekw)/tc.s+1
		default:
			oh, ow = (tc.h+tc.s-1)/tc.s, (tc.w+tc.s-1)/tc.s
			th, tw := max(0, (oh-1)*tc.s+ekh-tc.h), max(0, (ow-1)*tc.s+ekw-tc.w)
			padT, padL = th/2, tw/2
			if tc.autoPad == "SAME_LOWER" {
				padT, padL = th-th/2, tw-tw/2
			}
		}
		got := mmTestRun(t, mmTestNode("ConvInteger", 4, attrs...), 10, xt, wt, zxt, zwt)
		g, _ := Float64s(got)
		if want := []int64{tc.n, tc.m, oh, ow}; !equalDims(got.Dims(), want) {
			t.Fatalf("%+v: dims %v, want %v", tc, got.Dims(), want)
		}
		cg, mg := tc.c/tc.group, tc.m/tc.group
		i := 0
		for b := int64(0); b < tc.n; b++ {
			for o := int64(0); o < tc.m; o++ {
				for y := int64(0); y < oh; y++ {
					for xx := int64(0); xx < ow; xx++ {
						s := 0.0
						for ci := int64(0); ci < cg; ci++ {
							ch := o/mg*cg + ci
							for ky := int64(0); ky < tc.kh; ky++ {
								for kx := int64(0); kx < tc.kw; kx++ {
									iy, ix := y*tc.s+ky*tc.d-padT, xx*tc.s+kx*tc.d-padL
									if iy < 0 || ix < 0 || iy >= tc.h || ix >= tc.w {
										continue
									}
									xv := x[((b*tc.c+ch)*tc.h+iy)*tc.w+ix] - zx[0]
									wv := w[((o*cg+ci)*tc.kh+ky)*tc.kw+kx] - zw[o]
									s += xv * wv
								}
							}
						}
						if g[i] != s {
							t.Fatalf("%+v: output %d is %v, want %v", tc, i, g[i], s)
						}
						i++
					}
				}
			}
		}
	}
}
