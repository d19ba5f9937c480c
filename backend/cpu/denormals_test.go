package cpu

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Attention with the magnitudes of a randomly initialised transformer:
// scores in the hundreds, so softmax's probabilities run deep into the
// subnormal range before P·V.
const attention = `HloModule attention
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  q = f32[2,64,32] parameter(0)
  k = f32[2,64,32] parameter(1)
  v = f32[2,64,32] parameter(2)
  big = f32[] constant(12)
  bb = f32[2,64,32] broadcast(big), dimensions={}
  qs = f32[2,64,32] multiply(q, bb)
  s = f32[2,64,64] dot(qs, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  ninf = f32[] constant(-inf)
  m = f32[2,64] reduce(s, ninf), dimensions={2}, to_apply=max
  mb = f32[2,64,64] broadcast(m), dimensions={0,1}
  d = f32[2,64,64] subtract(s, mb)
  e = f32[2,64,64] exponential(d)
  zero = f32[] constant(0)
  es = f32[2,64] reduce(e, zero), dimensions={2}, to_apply=add
  esb = f32[2,64,64] broadcast(es), dimensions={0,1}
  p = f32[2,64,64] divide(e, esb)
  o = f32[2,64,32] dot(p, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = (f32[2,64,64], f32[2,64,32]) tuple(p, o)
}`

// TestFlushDenormalsEndToEnd runs the attention above with the GEMM
// flushing subnormals and keeping them (the default): its probabilities
// run into the subnormal range (the evaluator's include some), and both
// runs agree with the evaluator within the usual tolerance.
func TestFlushDenormalsEndToEnd(t *testing.T) {
	m, err := hlotext.Parse(attention, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 7)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if subnormals(want.Elements()[0]) == 0 {
		t.Fatal("the evaluator's probabilities have no subnormal values: the test needs larger scores")
	}
	for _, flush := range []bool{true, false} {
		was := kernels.SetFlushDenormals(flush)
		x, err := Compile(m, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Execute(args...)
		kernels.SetFlushDenormals(was)
		if err != nil {
			t.Fatal(err)
		}
		if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-5, Rtol: 1e-5}); err != nil {
			t.Fatalf("flush %v: cpu and evaluator differ: %v", flush, err)
		}
	}
}

// subnormals counts the subnormal values of an f32 literal.
func subnormals(l *hlo.Literal) int {
	n := 0
	for _, v := range l.Data().([]float32) {
		if a := math.Abs(float64(v)); a != 0 && a < 0x1p-126 {
			n++
		}
	}
	return n
}
