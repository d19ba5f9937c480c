package cpu

import (
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/randhlo"
)

// FuzzCPUBackend is the backend's differential test: random well-typed
// modules (elementwise chains, broadcasts, reshapes, transposes, slices,
// reductions, dots, selects over f32 and s32) run on the CPU backend and
// on the evaluator and must agree (f32 GEMMs and fused ops round
// differently from the evaluator's float64, hence the tolerance). `go
// test` runs the seed corpus; fuzz longer with
// `go test ./backend/cpu -run XXX -fuzz FuzzCPUBackend`. The GEMM keeps
// subnormal values here, as the evaluator does, whatever AXLE_DENORMALS
// says: flushing them (kernels.SetFlushDenormals) changes a product by
// more than the tolerance where a subnormal meets a huge value, which is
// the documented difference, not a finding.
func FuzzCPUBackend(f *testing.F) {
	was := kernels.SetFlushDenormals(false)
	f.Cleanup(func() { kernels.SetFlushDenormals(was) })
	// Every join of two branches a branch section, on two or three
	// threads: random modules are too small to make one otherwise.
	anySection = true
	f.Cleanup(func() { anySection = false })
	for seed := range uint64(64) {
		f.Add(seed, uint8(16), uint8(2))
	}
	// Modules whose compiled form has multi-output fusions (few random
	// ones do), on their thread counts.
	for _, seed := range []uint64{27, 46, 65, 74, 76, 91, 354, 359} {
		f.Add(seed, uint8(seed%40), uint8(seed%3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, size, threads uint8) {
		opts := randhlo.Options{Instructions: 4 + int(size%40), MaxDim: 9}
		m, err := randhlo.Module(seed, opts)
		if err != nil {
			t.Fatal(err)
		}
		args := eval.RandomArguments(m, seed)
		want, err := eval.Run(m, args...)
		if err != nil {
			t.Fatal(err)
		}
		x, err := Compile(m, Options{Threads: 1 + int(threads%3), Poison: true})
		if err != nil {
			t.Fatalf("%v\n%s", err, randhlo.Text(seed, opts))
		}
		// Twice: the second run reuses the first one's arena and, once
		// recycled, its output buffer.
		for run := range 2 {
			got, err := x.Execute(args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, randhlo.Text(seed, opts))
			}
			if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-4, Rtol: 1e-4}); err != nil {
				t.Fatalf("run %d: cpu and evaluator differ: %v\n%s", run, err, randhlo.Text(seed, opts))
			}
			x.Recycle(got)
		}
	})
}
