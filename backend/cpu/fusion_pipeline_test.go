package cpu

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/pass"
)

// argmaxRows is JAX's argmax over rows: a selection reduce of the values
// and an iota, which reduce-iota fusion joins.
const argmaxRows = `HloModule argmax
` + argmaxText + `
ENTRY main {
  a = f32[64,100] parameter(0)
  i = s32[64,100] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  z = s32[] constant(0)
  r = (f32[64], s32[64]) reduce(a, i, ninf, z), dimensions={1}, to_apply=argmax
  ROOT x = s32[64] get-tuple-element(r), index=1
}`

// pipelineModules: one module per fusion pass, and control flow.
func pipelineModules(t *testing.T) map[string]string {
	mods := map[string]string{"mlp": fmt.Sprintf(mlpLayer, 64, 48, 40), "softmax": fmt.Sprintf(softmaxLayer, 256, 10, 512),
		"conv":   fmt.Sprintf(convLayer, "[2,9,7,16]", "[3,3,16,20]", "[2,9,7,20]", 20, "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 3),
		"argmax": argmaxRows, "control": controlFlow}
	if adam, err := os.ReadFile("testdata/adam_siblings_16m.hlo"); err == nil {
		mods["adam"] = string(adam)
	} else {
		t.Errorf("multi-output module: %v", err)
	}
	return mods
}

// TestPipelineIsCompile: Pipeline runs what Compile runs, every pass
// verifies, and a pass that reports no change changed nothing.
func TestPipelineIsCompile(t *testing.T) {
	for name, text := range pipelineModules(t) {
		for _, opts := range []Options{{}, {NoOutputFusion: true}, {NoOptimize: true}} {
			m, err := hlotext.Parse(text, hlotext.Options{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			x, err := Compile(m, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := m.Clone()
			tm := &pass.Timings{}
			if _, err := Pipeline(opts).RunWith(got, pass.Options{Verify: true, CheckUnchanged: true, Timings: tm}); err != nil {
				t.Fatalf("%s %+v: %v", name, opts, err)
			}
			if want := hlotext.Print(x.module, hlotext.Short); hlotext.Print(got, hlotext.Short) != want {
				t.Errorf("%s %+v: the pipeline's module is not Compile's:\n%s\nwant:\n%s", name, opts, hlotext.Print(got, hlotext.Short), want)
			}
			if opts == (Options{}) {
				checkFusionPassesRan(t, name, tm)
			}
		}
	}
}

// checkFusionPassesRan: the module's own fusion pass changed it.
func checkFusionPassesRan(t *testing.T, name string, tm *pass.Timings) {
	want := map[string]string{"mlp": "output-fusion", "softmax": "output-fusion", "conv": "output-fusion",
		"argmax": "reduce-iota-fusion", "control": "loop-fusion", "adam": "multi-output-fusion"}[name]
	i := slices.IndexFunc(tm.Entries, func(e pass.Timing) bool { return e.Pass == want })
	if i < 0 || tm.Entries[i].Changed == 0 {
		t.Errorf("%s: %s changed nothing:\n%s", name, want, tm)
	}
}

// TestFusionPipelineOrders: the passes and their orders, and output
// fusion left out when asked.
func TestFusionPipelineOrders(t *testing.T) {
	all := strings.Join(Pipeline(Options{}).PassNames(), ",")
	const tail = "fusion,pool-window-fusion,reduce-iota-fusion,int8-dot-fusion,int8-conv-fusion,loop-fusion,fusion-dce,output-fusion,dot-transpose-fusion,multi-output-fusion,fusion-late-dce"
	if !strings.HasPrefix(all, "standard,") || !strings.HasSuffix(all, tail) {
		t.Errorf("passes: %s", all)
	}
	if names := FusionPipeline(Options{NoOutputFusion: true}).PassNames(); slices.Contains(names, "output-fusion") {
		t.Errorf("output fusion not left out: %v", names)
	}
	m := &hlo.Module{Name: "empty"}
	fp := FusionPipeline(Options{})
	byName := func(name string) pass.Pass {
		return fp.Passes[slices.IndexFunc(fp.Passes, func(p pass.Pass) bool { return p.Name() == name })]
	}
	bad := &pass.Pipeline{Label: "bad", Passes: []pass.Pass{byName("loop-fusion"), byName("reduce-iota-fusion")}, Orders: fp.Orders}
	if _, err := bad.RunWith(m, pass.Options{}); err == nil || !strings.Contains(err.Error(), "plain instructions") {
		t.Errorf("order violation not reported: %v", err)
	}
}
