package ops

import (
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// TestIfConditional lowers an If whose condition is not known at compile
// time: an HLO conditional with the branches' free variables as operands.
func TestIfConditional(t *testing.T) {
	branch := func(name, op string) *onnx.Graph {
		return &onnx.Graph{Name: name,
			Nodes:   []*onnx.Node{{Op: op, Inputs: []string{"x", "k"}, Outputs: []string{name + "_out"}}},
			Outputs: []*onnx.ValueInfo{{Name: name + "_out"}}}
	}
	n := &onnx.Node{Op: "If", Inputs: []string{"cond"}, Outputs: []string{"y"},
		Graphs: map[string]*onnx.Graph{"then_branch": branch("then", "Add"), "else_branch": branch("else", "Sub")}}
	for _, cond := range []bool{true, false} {
		b := xb.New("t")
		l := &Lowerer{Opsets: map[string]int{"": 13}, Env: NewEnv(nil)}
		l.Env.Set("cond", FromOp(b.Param("cond", hlo.Pred)))
		l.Env.Set("x", FromOp(b.Param("x", hlo.F32, 2)))
		kl, _ := hlo.LiteralFromSlice([]float32{10, 20}, 2)
		l.Env.Set("k", FromConst(onnx.TensorOf(kl)))
		if err := l.LowerNode(b, n); err != nil {
			t.Fatal(err)
		}
		y, _ := l.Env.Get("y")
		m, err := b.Build(y.In(b))
		if err != nil {
			t.Fatal(err)
		}
		cl := hlo.ScalarLiteral(cond)
		xl, _ := hlo.LiteralFromSlice([]float32{1, 2}, 2)
		res, err := eval.Run(m, cl, xl)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Data().([]float32)
		want := []float32{11, 22}
		if !cond {
			want = []float32{-9, -18}
		}
		if got[0] != want[0] || got[1] != want[1] {
			t.Errorf("cond %v: got %v, want %v", cond, got, want)
		}
	}
}
