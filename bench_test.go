package axle_test

import (
	"testing"

	"github.com/axle-ml/axle"
)

// scalarAdd is ../shared/bench/scalar_add.hlo: the smallest useful
// computation, so the benchmark measures the per-call cost.
const scalarAdd = `HloModule scalar_add
ENTRY main {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}`

// BenchmarkExecuteScalarAdd: dispatch latency of Execute on the cpu
// backend, releasing the output every call as a serving loop would.
func BenchmarkExecuteScalarAdd(b *testing.B) {
	c := newClient(b, "cpu")
	x := compile(b, c, scalarAdd)
	a, _ := axle.BufferFromScalar(c, float32(1))
	two, _ := axle.BufferFromScalar(c, float32(2))
	// One call outside the loop checks the result (and warms the pools).
	outs, err := x.Execute(a, two)
	if err != nil {
		b.Fatal(err)
	}
	if v := floats(b, outs[0]); v[0] != 3 {
		b.Fatalf("1+2 = %v", v)
	}
	outs[0].Release()
	b.ReportAllocs()
	for b.Loop() {
		outs, err := x.Execute(a, two)
		if err != nil {
			b.Fatal(err)
		}
		outs[0].Release()
	}
}
