package opt_test

import (
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/randhlo"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

// FuzzStandardPipeline is the differential test of the optimizer: a random
// well-typed module (elementwise chains, broadcasts, reshapes, transposes,
// slices, reductions, dots, selects over f32 and s32) must compute the
// same values before and after the standard pipeline, which must also keep
// it verifying at every step. `go test` runs the seed corpus; run it
// longer with `go test ./opt -run XXX -fuzz FuzzStandardPipeline`.
func FuzzStandardPipeline(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed, uint8(12))
	}
	f.Fuzz(func(t *testing.T, seed uint64, size uint8) {
		opts := randhlo.Options{Instructions: 4 + int(size%40)}
		orig, err := randhlo.Module(seed, opts)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := randhlo.Module(seed, opts)
		args := eval.RandomArguments(orig, seed)
		if _, err := opt.Standard().RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil {
			t.Fatalf("%v\n%s", err, randhlo.Text(seed, opts))
		}
		want, err := eval.Run(orig, args...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := eval.Run(m, args...)
		if err != nil {
			t.Fatalf("optimized module fails: %v\n%s", err, randhlo.Text(seed, opts))
		}
		// Float sums may be reassociated (reduce of reduce), as XLA does.
		if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-4, Rtol: 1e-4}); err != nil {
			t.Fatalf("optimized module computes differently: %v\n%s", err, randhlo.Text(seed, opts))
		}
	})
}
