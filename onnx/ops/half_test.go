package ops

import (
	"math"
	"math/rand"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// Float16 normalizations, Softmax, Gemm and average pools compute in float32 and round
// once, as ONNX Runtime does: each output is the float16 nearest to the
// exact result (within a hair of half an ulp), where rounding every step
// to float16 is up to an ulp or two off.

// halfTensor is a float16 tensor of seeded normal values (times scale,
// plus shift) and those values as float64.
func halfTensor(r *rand.Rand, scale, shift float64, dims ...int64) (*onnx.Tensor, []float64) {
	vals := make([]float64, numElems(dims))
	for i := range vals {
		vals[i] = r.NormFloat64()*scale + shift
	}
	t := onnx.TensorOf(literal(hlo.F16, vals, dims...))
	exact, err := Float64s(t)
	if err != nil {
		panic(err)
	}
	return t, exact
}

// halfCheck fails unless every got value is want rounded to float16.
func halfCheck(t *testing.T, name string, got *onnx.Tensor, want []float64) {
	t.Helper()
	g, err := Float64s(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(g), len(want))
	}
	for i, w := range want {
		e := math.Max(math.Abs(w), math.Ldexp(1, -14))
		ulp := math.Ldexp(1, int(math.Floor(math.Log2(e)))-10)
		if d := math.Abs(g[i] - w); d > 0.5001*ulp {
			t.Fatalf("%s[%d] = %v, exact %v: %.2f ulps off, want a correctly rounded float16", name, i, g[i], w, d/ulp)
		}
	}
}

func TestHalfComputesWide(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const rows, cols = 6, 48

	// LayerNormalization with scale and bias over the last axis.
	x, xv := halfTensor(r, 3, 2, rows, cols)
	s, sv := halfTensor(r, 1, 0, cols)
	b, bv := halfTensor(r, 1, 0, cols)
	want := make([]float64, rows*cols)
	for i := range rows {
		row := xv[i*cols : (i+1)*cols]
		m, v := 0.0, 0.0
		for _, a := range row {
			m += a
		}
		m /= cols
		for _, a := range row {
			v += (a - m) * (a - m)
		}
		inv := 1 / math.Sqrt(v/cols+1e-5)
		for j, a := range row {
			want[i*cols+j] = (a-m)*inv*sv[j] + bv[j]
		}
	}
	halfCheck(t, "LayerNormalization", mmTestRun(t, mmTestNode("LayerNormalization", 3), 17, x, s, b), want)

	// Softmax over the last axis.
	for i := range rows {
		row := xv[i*cols : (i+1)*cols]
		mx, sum := math.Inf(-1), 0.0
		for _, a := range row {
			mx = math.Max(mx, a)
		}
		for _, a := range row {
			sum += math.Exp(a - mx)
		}
		for j, a := range row {
			want[i*cols+j] = math.Exp(a-mx) / sum
		}
	}
	halfCheck(t, "Softmax", mmTestRun(t, mmTestNode("Softmax", 1), 13, x), want)

	// Gemm A[rows,cols] x B[cols,n] + C[n].
	const n = 5
	bm, bmv := halfTensor(r, 0.3, 0, cols, n)
	c, cv := halfTensor(r, 2, 0, n)
	gw := make([]float64, rows*n)
	for i := range rows {
		for j := range n {
			acc := cv[j]
			for k := range cols {
				acc += xv[i*cols+k] * bmv[k*n+j]
			}
			gw[i*n+j] = acc
		}
	}
	halfCheck(t, "Gemm", mmTestRun(t, mmTestNode("Gemm", 3), 13, x, bm, c), gw)

	// BatchNormalization (inference) and InstanceNormalization on [2, 3, 8].
	xi, xiv := halfTensor(r, 2, 1, 2, 3, 8)
	sc, scv := halfTensor(r, 1, 0, 3)
	bi, biv := halfTensor(r, 1, 0, 3)
	me, mev := halfTensor(r, 0.5, 0, 3)
	va, vav := halfTensor(r, 0.1, 1, 3)
	bw, iw := make([]float64, 48), make([]float64, 48)
	for nn := range 2 {
		for ch := range 3 {
			seg := xiv[(nn*3+ch)*8 : (nn*3+ch+1)*8]
			m, v := 0.0, 0.0
			for _, a := range seg {
				m += a
			}
			m /= 8
			for _, a := range seg {
				v += (a - m) * (a - m)
			}
			inv := 1 / math.Sqrt(v/8+1e-5)
			binv := 1 / math.Sqrt(vav[ch]+1e-5)
			for k, a := range seg {
				bw[(nn*3+ch)*8+k] = (a-mev[ch])*binv*scv[ch] + biv[ch]
				iw[(nn*3+ch)*8+k] = (a-m)*inv*scv[ch] + biv[ch]
			}
		}
	}
	halfCheck(t, "BatchNormalization", mmTestRun(t, mmTestNode("BatchNormalization", 5), 15, xi, sc, bi, me, va), bw)
	halfCheck(t, "InstanceNormalization", mmTestRun(t, mmTestNode("InstanceNormalization", 3), 6, xi, sc, bi), iw)

	// AveragePool (kernel 3, stride 1) and GlobalAveragePool of [2, 3, 8].
	aw, gw2 := make([]float64, 2*3*6), make([]float64, 6)
	for nc := range 6 {
		seg := xiv[nc*8 : (nc+1)*8]
		sum := 0.0
		for _, a := range seg {
			sum += a
		}
		gw2[nc] = sum / 8
		for k := range 6 {
			aw[nc*6+k] = (seg[k] + seg[k+1] + seg[k+2]) / 3
		}
	}
	halfCheck(t, "AveragePool", mmTestRun(t, mmTestNode("AveragePool", 1, mmIntsAttr("kernel_shape", 3)), 19, xi), aw)
	halfCheck(t, "GlobalAveragePool", mmTestRun(t, mmTestNode("GlobalAveragePool", 1), 1, xi), gw2)
}
