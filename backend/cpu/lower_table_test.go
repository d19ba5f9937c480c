package cpu

import (
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// The order each opcode's lowerings are tried in: the order lower tried
// them in before it was a table (a change here changes which kernel an
// instruction gets).
func TestLoweringOrder(t *testing.T) {
	want := map[hlo.Opcode]string{
		hlo.OpDot:          "gemm-bf16 gemm complex-dot dot evaluator",
		hlo.OpFusion:       "multi-output-fusion gemm-int8 conv-int8 gemm-transposed output-fusion reduce-select reduce-fusion tile-fusion fusion-body evaluator",
		hlo.OpReduce:       "reduce reduce-select reduce-lanes evaluator",
		hlo.OpReduceWindow: "reduce reduce-window-lanes evaluator",
		hlo.OpConvert:      "movement elementwise convert evaluator",
		hlo.OpCopy:         "movement single-device evaluator",
		hlo.OpReshape:      "view movement evaluator",
		hlo.OpScatter:      "scatter scatter-lanes evaluator",
		hlo.OpConvolution:  "conv-bf16 conv conv-loop evaluator",
		hlo.OpSelect:       "movement elementwise evaluator",
		hlo.OpAdd:          "elementwise evaluator",
		hlo.OpWhile:        "while evaluator",
		hlo.OpParameter:    "parameter evaluator",
		hlo.OpConstant:     "constant evaluator",
		hlo.OpMap:          "evaluator",
	}
	for op, w := range want {
		var names []string
		for _, l := range lowerings[op] {
			names = append(names, l.name)
		}
		if got := strings.Join(names, " "); got != w {
			t.Errorf("%s: lowerings %q, want %q", op, got, w)
		}
	}
	if err := checkLowerings(lowerings); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(lowerings)
	bad[hlo.OpAdd] = bad[hlo.OpAdd][:1]
	if checkLowerings(bad) == nil {
		t.Fatal("a list not ending in the evaluator passed the check")
	}
}

// A few instructions get the lowering they got before the table.
func TestLoweringNames(t *testing.T) {
	const text = `HloModule names
ENTRY e {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[64,64] add(d, b)
  r = f32[4096] reshape(s)
  ROOT t = f32[64,64] transpose(s), dimensions={1,0}
}`
	m, _ := compileText(t, text, Options{NoOptimize: true})
	c := newCompiler(m, Options{})
	want := map[string]string{"a": "parameter", "b": "parameter", "d": "gemm", "s": "elementwise", "r": "view", "t": "movement"}
	for _, in := range m.Entry.Instructions {
		if _, how := c.lower(in); how != want[in.Name] {
			t.Errorf("%s: lowered as %s, want %s", in.Name, how, want[in.Name])
		}
	}
}

// Called computations are compiled by the module's compiler: with the
// module's options (a profile sees the kernels of a while body) and
// without a module of their own.
func TestCalledComputationsShareTheCompiler(t *testing.T) {
	_, x := compileText(t, controlFlow, Options{Profile: true})
	if x.Lowering["while"] != 1 || len(x.subs) == 0 {
		t.Fatalf("lowering %v, %d subs", x.Lowering, len(x.subs))
	}
	for _, s := range x.subs {
		if s.module != x.module || s.prof != x.prof {
			t.Fatalf("%s compiled apart from its module", s.entry.Name)
		}
	}
	if _, err := x.Execute(hlo.ScalarLiteral(int32(0))); err != nil {
		t.Fatal(err)
	}
	var inBody bool
	for _, k := range x.Profile() {
		for _, s := range x.subs {
			inBody = inBody || slices.ContainsFunc(s.steps, func(st step) bool { return st.in.Name == k.Instruction && st.k != nil })
		}
	}
	if !inBody {
		t.Fatalf("profile %v: no kernel of a called computation", x.Profile())
	}
}
