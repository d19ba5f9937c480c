package conformance_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/axle-ml/axle/backend/cpu/compiler"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

// TestInterpCases runs every public conformance case (cases/ and
// xla-tests/) on the reference evaluator, one subtest per case named
// dir/op/case so `go test -run TestInterpCases/cases/gather` picks a
// family. Every case must pass.
func TestInterpCases(t *testing.T) {
	runAll(t, &conformance.Runner{Backend: &eval.Backend{}})
}

// TestInterpCasesOptimized runs them again after the standard pipeline
// with every pass checked (axle test-cases --opt --verify-each): the
// pipeline must preserve every case's value.
func TestInterpCasesOptimized(t *testing.T) {
	opts := pass.Options{Verify: true, CheckUnchanged: true}
	runAll(t, &conformance.Runner{Backend: &eval.Backend{}, Prepare: func(m *hlo.Module) error {
		_, err := opt.Standard().RunWith(m, opts)
		return err
	}})
}

// TestCPUCases runs every case on the CPU backend, with the default
// thread count and with one thread.
func TestCPUCases(t *testing.T) {
	t.Run("threads=default", func(t *testing.T) {
		runAll(t, &conformance.Runner{Backend: &cpu.Backend{Options: cpu.Options{Poison: true}}})
	})
	t.Run("threads=1", func(t *testing.T) {
		runAll(t, &conformance.Runner{Backend: &cpu.Backend{Options: cpu.Options{Threads: 1, Poison: true}}})
	})
}

// TestMultiDeviceCases runs every case under multidevice/ (XLA's
// collective tests at 2, 4 and 8 devices) through the runtime's
// ModuleRunner on the evaluator and on the CPU backend, one subtest per
// case. It needs ModuleRunner to implement conformance.DeviceBackend and
// skips, saying so, until it does.
func TestMultiDeviceCases(t *testing.T) {
	files, err := conformance.FindCases("multidevice")
	if err != nil {
		t.Fatal(err)
	}
	for _, platform := range []string{"interp", "cpu"} {
		t.Run(platform, func(t *testing.T) {
			c, err := axle.NewClient(axle.ClientOptions{Backend: platform})
			if err != nil {
				t.Fatal(err)
			}
			var b conformance.Backend = &axle.ModuleRunner{Client: c}
			if _, ok := b.(conformance.DeviceBackend); !ok {
				t.Skip("axle.ModuleRunner does not implement conformance.DeviceBackend (RunDevices) yet")
			}
			r := &conformance.Runner{Backend: b}
			for _, f := range files {
				name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(f), "multidevice/"), ".json")
				t.Run(name, func(t *testing.T) {
					mc, err := conformance.LoadCase(f)
					if err != nil {
						t.Fatal(err)
					}
					if err := r.RunCase(mc); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

func runAll(t *testing.T, r *conformance.Runner) {
	for _, dir := range []string{"cases", "xla-tests"} {
		files, err := conformance.FindCases(filepath.Join("../../shared/conformance", dir))
		if err != nil {
			t.Skipf("shared conformance suite not found (%v): clone with ../shared beside the repository", err)
		}
		for _, f := range files {
			name := dir + "/" + filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
			t.Run(name, func(t *testing.T) {
				c, err := conformance.LoadCase(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.RunCase(c); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func lit(t *testing.T, v []float64) *hlo.Literal {
	l, err := hlo.LiteralFromSlice(v, int64(len(v)))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCompareRule pins FORMAT.md's comparison rule on hand-worked values.
func TestCompareRule(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		got, want []float64
		tol       conformance.Tolerance
		ok        bool
	}{
		{[]float64{1, 2}, []float64{1, 2}, conformance.Tolerance{}, true},
		{[]float64{math.Copysign(0, -1)}, []float64{0}, conformance.Tolerance{}, true}, // +0 and -0 compare equal
		{[]float64{nan}, []float64{-nan}, conformance.Tolerance{}, true},               // any NaN
		{[]float64{1}, []float64{nan}, conformance.Tolerance{Atol: 10}, false},
		{[]float64{nan}, []float64{1}, conformance.Tolerance{Atol: 10}, false},
		{[]float64{inf}, []float64{inf}, conformance.Tolerance{}, true},
		{[]float64{1e308}, []float64{inf}, conformance.Tolerance{Rtol: 1}, false},
		{[]float64{1.09}, []float64{1}, conformance.Tolerance{Atol: 0.05, Rtol: 0.05}, true}, // 0.09 <= 0.05 + 0.05*1
		{[]float64{1.11}, []float64{1}, conformance.Tolerance{Atol: 0.05, Rtol: 0.05}, false},
	} {
		err := conformance.Compare(lit(t, c.got), lit(t, c.want), c.tol)
		if (err == nil) != c.ok {
			t.Errorf("got %v want %v tol %+v: err=%v, want ok=%v", c.got, c.want, c.tol, err, c.ok)
		}
	}
	// Element types must match exactly.
	f32, _ := hlo.LiteralFromSlice([]float32{1}, 1)
	if conformance.Compare(f32, lit(t, []float64{1}), conformance.Tolerance{}) == nil {
		t.Error("f32 result accepted for an f64 expectation")
	}
}

// TestValueDecoding decodes a hand-encoded value: f32[2] {1, -2} is
// 0000803f 000000c0 little-endian.
func TestValueDecoding(t *testing.T) {
	v := conformance.Value{Shape: "f32[2]", Data: "AACAPwAAAMA="}
	l, err := v.Literal()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := hlo.LiteralToSlice[float32](l); len(got) != 2 || got[0] != 1 || got[1] != -2 {
		t.Errorf("decoded %v", got)
	}
	if _, err := (conformance.Value{Shape: "f32[3]", Data: "AACAPwAAAMA="}).Literal(); err == nil {
		t.Error("short data accepted")
	}
}
