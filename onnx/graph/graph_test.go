package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
	"github.com/axle-ml/axle/onnx/onnxbuild"
	"github.com/axle-ml/axle/onnx/ops"
)

// hostNeg is a host-only op (no lowering): the compiled device refuses
// it, as it refuses strings or data-dependent shapes.
func init() {
	ops.Register(ops.Op{Name: "HostNeg", Domain: "axle.test", Host: func(h *ops.HostCtx) error {
		l := h.Tensor(0).Lit.Clone()
		d := l.Data().([]float32)
		for i := range d {
			d[i] = -d[i]
		}
		h.Set(0, onnx.LiteralValue(l))
		return nil
	}})
}

// diamond: a = relu(x); b = hostneg(a); c = a + b; d = a * a; y = c + d.
// a and c must not share a cluster (the path a -> b -> c leaves it); a and
// d may.
func diamond(t *testing.T) *onnx.Model {
	t.Helper()
	g := onnxbuild.New("diamond", 17)
	g.Opsets["axle.test"] = 1
	ft := onnxbuild.TensorType(onnx.Float, -1, 3)
	g.Input("x", ft)
	g.Node("Relu", "a", []string{"x"}, []string{"a"})
	n := g.Node("HostNeg", "b", []string{"a"}, []string{"b"})
	n.Domain = strPtr("axle.test")
	g.Node("Add", "c", []string{"a", "b"}, []string{"c"})
	g.Node("Mul", "d", []string{"a", "a"}, []string{"d"})
	g.Node("Add", "y", []string{"c", "d"}, []string{"y"})
	g.Output("y", ft)
	m, err := g.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func strPtr(s string) *string { return &s }

func TestClustersNeverMakeCycles(t *testing.T) {
	s, err := graph.New(diamond(t), graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := map[string]graph.Placement{}
	for _, p := range s.Placements() {
		at[p.Node] = p
	}
	if at["b"].Device != "eval:0" || at["b"].Cluster != -1 || !strings.Contains(at["b"].Why, "no HLO lowering") {
		t.Errorf("host-only node: %+v, want eval:0 op by op with the cpu device's refusal", at["b"])
	}
	if at["a"].Cluster < 0 || at["a"].Cluster != at["d"].Cluster {
		t.Errorf("a and d should share a cluster: %+v %+v", at["a"], at["d"])
	}
	if at["a"].Cluster == at["c"].Cluster {
		t.Errorf("a and c share cluster %d, making a cycle through b", at["a"].Cluster)
	}
	if at["c"].Cluster != at["y"].Cluster {
		t.Errorf("c and y should share a cluster: %+v %+v", at["c"], at["y"])
	}
	// x = [-1, 2, 3]: a = [0, 2, 3]; c = a - a = 0; y = a*a.
	x, _ := hlo.LiteralFromSlice([]float32{-1, 2, 3}, 1, 3)
	out, err := s.Run(context.Background(), map[string]*onnx.Value{"x": onnx.LiteralValue(x)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := hlo.LiteralToSlice[float32](out["y"].Tensor.Lit)
	if fmt.Sprint(got) != "[0 4 9]" {
		t.Errorf("y = %v, want [0 4 9]", got)
	}
}

func TestSoftPlacementOffFailsNamingTheNode(t *testing.T) {
	_, err := graph.New(diamond(t), graph.Options{NoSoftPlacement: true})
	if err == nil {
		t.Fatal("load succeeded with a node the compiled device refuses and soft placement off")
	}
	for _, want := range []string{`node "b"`, "HostNeg", "cpu:0", "no HLO lowering", "soft placement is off"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestConcurrentRunsAndShapeCache(t *testing.T) {
	s, err := graph.New(diamond(t), graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 20 {
				rows := int64(1 + (w+k)%3) // three signatures
				vals := make([]float32, rows*3)
				for i := range vals {
					vals[i] = float32(i - w)
				}
				x, _ := hlo.LiteralFromSlice(vals, rows, 3)
				out, err := s.Run(context.Background(), map[string]*onnx.Value{"x": onnx.LiteralValue(x)})
				if err != nil {
					errs <- err
					return
				}
				got, _ := hlo.LiteralToSlice[float32](out["y"].Tensor.Lit)
				for i, v := range vals {
					a := max(v, 0)
					if got[i] != a*a {
						errs <- fmt.Errorf("worker %d rows %d: y[%d] = %v, want %v", w, rows, i, got[i], a*a)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBadInputsNameTheInput(t *testing.T) {
	s, err := graph.New(diamond(t), graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f32, _ := hlo.LiteralFromSlice([]float32{1, 2, 3}, 1, 3)
	wrongRank, _ := hlo.LiteralFromSlice([]float32{1, 2, 3}, 3)
	wrongDim, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4}, 1, 4)
	i64, _ := hlo.LiteralFromSlice([]int64{1, 2, 3}, 1, 3)
	for _, tc := range []struct {
		in   map[string]*onnx.Value
		want string
	}{
		{map[string]*onnx.Value{"z": onnx.LiteralValue(f32)}, `input "z": the model has no such input (inputs: x)`},
		{map[string]*onnx.Value{}, `input "x": not given`},
		{map[string]*onnx.Value{"x": onnx.LiteralValue(wrongRank)}, `input "x": shape [3], the model declares rank 2 [N,3]`},
		{map[string]*onnx.Value{"x": onnx.LiteralValue(wrongDim)}, `input "x": shape [1 4], the model declares [N,3]`},
		{map[string]*onnx.Value{"x": onnx.LiteralValue(i64)}, `input "x": element type int64, the model declares float`},
	} {
		_, err := s.Run(context.Background(), tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	unknown := onnxbuild.New("u", 17)
	unknown.Input("x", onnxbuild.TensorType(onnx.Float, 2))
	unknown.Node("NoSuchOp", "n1", []string{"x"}, []string{"y"})
	unknown.Output("y", onnxbuild.TensorType(onnx.Float, 2))
	m, _ := unknown.Model()
	if _, err := graph.New(m, graph.Options{}); err == nil || !strings.Contains(err.Error(), `node "n1" (NoSuchOp): unknown op NoSuchOp in domain "ai.onnx"`) {
		t.Errorf("unknown op: %v", err)
	}
	newer := onnxbuild.New("n", ops.MaxOpset+1)
	newer.Input("x", onnxbuild.TensorType(onnx.Float, 2))
	newer.Node("Relu", "r", []string{"x"}, []string{"y"})
	newer.Output("y", onnxbuild.TensorType(onnx.Float, 2))
	m, _ = newer.Model()
	if _, err := graph.New(m, graph.Options{}); err == nil || !strings.Contains(err.Error(), "is newer than Axle reads") {
		t.Errorf("newer opset: %v", err)
	}
	dom := onnxbuild.New("d", 17)
	dom.Input("x", onnxbuild.TensorType(onnx.Float, 2))
	n := dom.Node("Relu", "r", []string{"x"}, []string{"y"})
	n.Domain = strPtr("com.example")
	dom.Output("y", onnxbuild.TensorType(onnx.Float, 2))
	m, _ = dom.Model()
	if _, err := graph.New(m, graph.Options{}); err == nil || !strings.Contains(err.Error(), `domain "com.example" is not imported`) {
		t.Errorf("unknown domain: %v", err)
	}
}

// TestFeedingAnInitializer: an initializer is an input's default value
// (IR-3 models list them as inputs); a value fed for it replaces it.
func TestFeedingAnInitializer(t *testing.T) {
	g := onnxbuild.New("init", 17)
	ft := onnxbuild.TensorType(onnx.Float, 2)
	g.Input("x", ft)
	g.Input("w", ft)
	g.Floats("w", []float32{10, 20}, 2)
	g.Node("Add", "a", []string{"x", "w"}, []string{"y"})
	g.Output("y", ft)
	m, err := g.Model()
	if err != nil {
		t.Fatal(err)
	}
	s, err := graph.New(m, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x, _ := hlo.LiteralFromSlice([]float32{1, 2}, 2)
	w, _ := hlo.LiteralFromSlice([]float32{100, 200}, 2)
	for _, tc := range []struct {
		in   map[string]*onnx.Value
		want string
	}{
		{map[string]*onnx.Value{"x": onnx.LiteralValue(x)}, "[11 22]"},
		{map[string]*onnx.Value{"x": onnx.LiteralValue(x), "w": onnx.LiteralValue(w)}, "[101 202]"},
		{map[string]*onnx.Value{"x": onnx.LiteralValue(x)}, "[11 22]"},
	} {
		out, err := s.Run(context.Background(), tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := hlo.LiteralToSlice[float32](out["y"].Tensor.Lit)
		if fmt.Sprint(got) != tc.want {
			t.Errorf("y = %v, want %s", got, tc.want)
		}
	}
}

// TestSplitAtRefusedNode: a Slice whose start is an ArgMax computed in
// the same cluster cannot be compiled (its result's shape is the data's);
// only it goes op by op, and the rest of the cluster compiles in parts.
// x is too large to be fed by value (which would fold it all), -1
// everywhere but x[1..3] = 3, 2, 5: a = relu(x) has its maximum at 3, so
// y = a[3:]² is 25 then zeros, and z = a + a is 0, 6, 4, 10, then zeros.
func TestSplitAtRefusedNode(t *testing.T) {
	const n = ops.FoldLimit + 5
	g := onnxbuild.New("split", 17)
	g.Input("x", onnxbuild.TensorType(onnx.Float, n))
	g.Ints("ends", []int64{1 << 30}, 1)
	g.Node("Relu", "relu", []string{"x"}, []string{"a"})
	g.Node("ArgMax", "argmax", []string{"a"}, []string{"i"}, onnxbuild.IntAttr("keepdims", 1))
	g.Node("Slice", "slice", []string{"a", "i", "ends"}, []string{"s"})
	g.Node("Mul", "square", []string{"s", "s"}, []string{"y"})
	g.Node("Add", "double", []string{"a", "a"}, []string{"z"})
	g.Output("y", onnxbuild.TensorType(onnx.Float, -1))
	g.Output("z", onnxbuild.TensorType(onnx.Float, n))
	m, err := g.Model()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	s, err := graph.New(m, graph.Options{LogPlacement: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = -1
	}
	xs[1], xs[2], xs[3] = 3, 2, 5
	x, _ := hlo.LiteralFromSlice(xs, n)
	for range 2 { // the second run takes the split from the cache
		out, err := s.Run(context.Background(), map[string]*onnx.Value{"x": onnx.LiteralValue(x)})
		if err != nil {
			t.Fatal(err)
		}
		y, _ := hlo.LiteralToSlice[float32](out["y"].Tensor.Lit)
		z, _ := hlo.LiteralToSlice[float32](out["z"].Tensor.Lit)
		if len(y) != n-3 || y[0] != 25 || slices.ContainsFunc(y[1:], func(v float32) bool { return v != 0 }) {
			t.Fatalf("y has %d values starting %v; want %d: 25 then zeros", len(y), y[:min(len(y), 4)], n-3)
		}
		if fmt.Sprint(z[:5]) != "[0 6 4 10 0]" || slices.ContainsFunc(z[4:], func(v float32) bool { return v != 0 }) {
			t.Fatalf("z starts %v; want 0 6 4 10 then zeros", z[:5])
		}
	}
	for _, want := range []string{`cluster_0 splits: node "slice" (Slice) runs op by op`, "compiled cluster_0.0 on cpu:0", "compiled cluster_0.2 on cpu:0"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("placement log does not say %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "runs op by op on eval:0: ") {
		t.Errorf("the whole cluster went op by op:\n%s", log.String())
	}
}
