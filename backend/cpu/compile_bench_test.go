package cpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// whileModule is n while loops in sequence, each with a body and a
// condition of its own: compiling it should cost time linear in n
// (each called computation compiled once, the module never copied per
// body).
// With small, a body only counts: what compiling it costs is the
// compiler's overhead per called computation, no kernel generation.
func whileModule(tb testing.TB, n int, small bool) *hlo.Module {
	tb.Helper()
	var b strings.Builder
	b.WriteString("HloModule whiles\n")
	for k := range n {
		fmt.Fprintf(&b, "\ncond%d {\n  p = (s32[], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", k)
		fmt.Fprintf(&b, "  lim = s32[] constant(%d)\n  ROOT lt = pred[] compare(i, lim), direction=LT\n}\n", k%5+1)
		fmt.Fprintf(&b, "\nbody%d {\n  p = (s32[], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", k)
		b.WriteString("  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  v = f32[64] get-tuple-element(p), index=1\n")
		if small {
			b.WriteString("  ROOT t = (s32[], f32[64]) tuple(j, v)\n}\n")
			continue
		}
		fmt.Fprintf(&b, "  c = f32[] constant(%d)\n  cb = f32[64] broadcast(c), dimensions={}\n", k+1)
		b.WriteString("  m = f32[64] multiply(v, cb)\n  e = f32[64] exponential(m)\n  w = f32[64] add(v, e)\n")
		b.WriteString("  ROOT t = (s32[], f32[64]) tuple(j, w)\n}\n")
	}
	b.WriteString("\nENTRY e {\n  x = f32[64] parameter(0)\n  z = s32[] constant(0)\n  s0 = (s32[], f32[64]) tuple(z, x)\n")
	for k := range n {
		fmt.Fprintf(&b, "  w%d = (s32[], f32[64]) while(s%d), condition=cond%d, body=body%d\n", k, k, k, k)
		fmt.Fprintf(&b, "  v%d = f32[64] get-tuple-element(w%d), index=1\n", k, k)
		fmt.Fprintf(&b, "  s%d = (s32[], f32[64]) tuple(z, v%d)\n", k+1, k)
	}
	fmt.Fprintf(&b, "  ROOT r = f32[64] get-tuple-element(s%d), index=1\n}\n", n)
	m, err := hlotext.Parse(b.String(), hlotext.Options{File: "whiles"})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// BenchmarkCompileWhileBodies compiles modules of 50 to 400 while loops,
// their bodies counting only (small; noopt: without the optimization
// pipeline, whose time hides the backend's) or computing a loop fusion
// too: ns/op over n (reported as ns/body) should stay about constant.
func BenchmarkCompileWhileBodies(b *testing.B) {
	for _, v := range []struct {
		name         string
		small, noOpt bool
	}{{"noopt", true, true}, {"small", true, false}, {"fused", false, false}} {
		for _, n := range []int{50, 100, 200, 400} {
			b.Run(fmt.Sprintf("%s/%d", v.name, n), func(b *testing.B) {
				benchCompile(b, whileModule(b, n, v.small), n, Options{Threads: 1, NoOptimize: v.noOpt})
			})
		}
	}
}

// benchCompile times compiling m, reporting the time per body of its n.
func benchCompile(b *testing.B, m *hlo.Module, n int, opts Options) {
	for b.Loop() {
		if _, err := Compile(m, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/body")
}

// BenchmarkCompileCorpus compiles the benchmark models of ../shared/bench.
func BenchmarkCompileCorpus(b *testing.B) {
	files, _ := filepath.Glob("../../../shared/bench/*.hlo")
	if len(files) == 0 {
		b.Skip("../shared not found")
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		m, err := hlotext.Parse(string(text), hlotext.Options{File: f})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(filepath.Base(f), ".hlo"), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile(m, Options{Threads: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
