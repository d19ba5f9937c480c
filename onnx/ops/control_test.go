package ops

import (
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
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

// TestLoopWhile lowers a Loop to an HLO while loop, with a trip count known
// at compile time (scan output) and one given at run time (carried only).
func TestLoopWhile(t *testing.T) {
	one, _ := hlo.LiteralFromSlice([]float32{1, 1}, 2)
	body := func(scan bool) *onnx.Graph {
		g := &onnx.Graph{Name: "body",
			Inputs:       []*onnx.ValueInfo{{Name: "i"}, {Name: "cin"}, {Name: "x"}},
			Initializers: map[string]*onnx.Tensor{"one": onnx.TensorOf(one)},
			Nodes: []*onnx.Node{
				{Op: "Add", Inputs: []string{"x", "one"}, Outputs: []string{"x2"}},
				{Op: "Identity", Inputs: []string{"cin"}, Outputs: []string{"cout"}},
				{Op: "Identity", Inputs: []string{"x2"}, Outputs: []string{"s"}},
			},
			Outputs: []*onnx.ValueInfo{{Name: "cout"}, {Name: "x2"}}}
		if scan {
			g.Outputs = append(g.Outputs, &onnx.ValueInfo{Name: "s"})
		}
		return g
	}
	for _, constTrip := range []bool{true, false} {
		b := xb.New("t")
		l := &Lowerer{Opsets: map[string]int{"": 13}, Env: NewEnv(nil)}
		var args []*hlo.Literal
		if constTrip {
			l.Env.Set("M", FromConst(IntTensor([]int64{3})))
		} else {
			l.Env.Set("M", FromOp(b.Param("M", hlo.S64)))
			args = append(args, hlo.ScalarLiteral(int64(3)))
		}
		l.Env.Set("x", FromOp(b.Param("x", hlo.F32, 2)))
		xl, _ := hlo.LiteralFromSlice([]float32{1, 2}, 2)
		args = append(args, xl)
		n := &onnx.Node{Op: "Loop", Inputs: []string{"M", "", "x"}, Outputs: []string{"y"},
			Graphs: map[string]*onnx.Graph{"body": body(constTrip)}}
		if constTrip {
			n.Outputs = append(n.Outputs, "scan")
		}
		if err := l.LowerNode(b, n); err != nil {
			t.Fatal(err)
		}
		var roots []*xb.Op
		for _, name := range n.Outputs {
			v, _ := l.Env.Get(name)
			roots = append(roots, v.In(b))
		}
		m, err := b.Build(b.Tuple(roots...))
		if err != nil {
			t.Fatal(err)
		}
		res, err := eval.Run(m, args...)
		if err != nil {
			t.Fatal(err)
		}
		y := res.Elements()[0].Data().([]float32)
		if y[0] != 4 || y[1] != 5 {
			t.Errorf("trip count known %v: y = %v, want [4 5]", constTrip, y)
		}
		if constTrip {
			s := res.Elements()[1].Data().([]float32)
			want := []float32{2, 3, 3, 4, 4, 5}
			for i := range want {
				if s[i] != want[i] {
					t.Errorf("scan = %v, want %v", s, want)
					break
				}
			}
		}
	}
}

// TestScanWhile lowers a Scan with a reversed input on axis 1 and a
// reversed output stacked on axis 1.
func TestScanWhile(t *testing.T) {
	body := &onnx.Graph{Name: "body",
		Inputs: []*onnx.ValueInfo{{Name: "s"}, {Name: "x"}},
		Nodes: []*onnx.Node{
			{Op: "Add", Inputs: []string{"s", "x"}, Outputs: []string{"s2"}},
			{Op: "Identity", Inputs: []string{"s2"}, Outputs: []string{"o"}},
		},
		Outputs: []*onnx.ValueInfo{{Name: "s2"}, {Name: "o"}}}
	n := &onnx.Node{Op: "Scan", Inputs: []string{"s0", "X"}, Outputs: []string{"sN", "Y"},
		Graphs: map[string]*onnx.Graph{"body": body}, Attrs: map[string]*onnxpb.AttributeProto{
			"num_scan_inputs":        {I: ptr(int64(1))},
			"scan_input_axes":        {Ints: []int64{1}},
			"scan_input_directions":  {Ints: []int64{1}},
			"scan_output_axes":       {Ints: []int64{1}},
			"scan_output_directions": {Ints: []int64{1}},
		}}
	b := xb.New("t")
	l := &Lowerer{Opsets: map[string]int{"": 16}, Env: NewEnv(nil)}
	l.Env.Set("s0", FromOp(b.Param("s0", hlo.F32, 2)))
	l.Env.Set("X", FromOp(b.Param("X", hlo.F32, 2, 3)))
	if err := l.LowerNode(b, n); err != nil {
		t.Fatal(err)
	}
	sN, _ := l.Env.Get("sN")
	y, _ := l.Env.Get("Y")
	m, err := b.Build(b.Tuple(sN.In(b), y.In(b)))
	if err != nil {
		t.Fatal(err)
	}
	s0, _ := hlo.LiteralFromSlice([]float32{0, 0}, 2)
	x, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	res, err := eval.Run(m, s0, x)
	if err != nil {
		t.Fatal(err)
	}
	gotS := res.Elements()[0].Data().([]float32)
	gotY := res.Elements()[1].Data().([]float32)
	if gotS[0] != 6 || gotS[1] != 15 {
		t.Errorf("final state %v, want [6 15]", gotS)
	}
	want := []float32{6, 5, 3, 15, 11, 6}
	for i := range want {
		if gotY[i] != want[i] {
			t.Errorf("Y = %v, want %v", gotY, want)
			break
		}
	}
}
