package graph_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
	"github.com/axle-ml/axle/onnx/onnxbuild"
)

// BenchmarkModels times Session.RunOrdered on the first data set of each
// model of ../shared/corpus/onnx-models, compiled on the cpu backend with
// GOMAXPROCS threads (the executor's per-call cost included).
func BenchmarkModels(b *testing.B) {
	dirs, _ := filepath.Glob("../../../shared/corpus/onnx-models/*/test_*")
	if len(dirs) == 0 {
		b.Skip("../shared/corpus/onnx-models is not there")
	}
	for _, d := range dirs {
		b.Run(filepath.Base(d), func(b *testing.B) {
			s, err := graph.Open(filepath.Join(d, "model.onnx"), graph.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var in []*onnx.Value
			for k, vi := range s.Inputs() {
				v, err := onnx.ReadValueFile(filepath.Join(d, "test_data_set_0", fmt.Sprintf("input_%d.pb", k)), vi.Type)
				if err != nil {
					b.Fatal(err)
				}
				in = append(in, v)
			}
			if _, err := s.RunOrdered(context.Background(), in); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := s.RunOrdered(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRunOverhead is the executor's cost per call on a one-node
// cluster of 4 floats: signature, cache lookup, argument and result
// wrapping around the compiled executable.
func BenchmarkRunOverhead(b *testing.B) {
	g := onnxbuild.New("add", 17)
	g.Input("x", onnxbuild.TensorType(onnx.Float, 4))
	g.Input("y", onnxbuild.TensorType(onnx.Float, 4))
	g.Node("Add", "a", []string{"x", "y"}, []string{"z"})
	g.Output("z", onnxbuild.TensorType(onnx.Float, 4))
	m, err := g.Model()
	if err != nil {
		b.Fatal(err)
	}
	s, err := graph.New(m, graph.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	x, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4}, 4)
	in := []*onnx.Value{onnx.LiteralValue(x), onnx.LiteralValue(x)}
	b.ReportAllocs()
	for range b.N {
		if _, err := s.RunOrdered(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadLongGraph times a session's load and first run (placing,
// clustering, lowering, optimizing, fusing and compiling) of graphs of
// 3·n nodes: n blocks of MatMul, Relu and a residual Add on 4×16
// values, each block's weights their own. The time should grow about as
// n does: clustering, CSE, the simplifier, fusion and naming each took
// time in n² once (a 6,000-node graph 17.3 s, BENCHMARKS.md).
func BenchmarkLoadLongGraph(b *testing.B) {
	for _, n := range []int{250, 1000, 2000} {
		g := onnxbuild.New("long", 17)
		g.Input("x", onnxbuild.TensorType(onnx.Float, 4, 16))
		prev := "x"
		for i := range n {
			w := make([]float32, 16*16)
			for k := range w {
				w[k] = float32((i+k)%7-3) / 64
			}
			g.Floats(fmt.Sprintf("w%d", i), w, 16, 16)
			g.Node("MatMul", fmt.Sprintf("mm%d", i), []string{prev, fmt.Sprintf("w%d", i)}, []string{fmt.Sprintf("m%d", i)})
			g.Node("Relu", fmt.Sprintf("relu%d", i), []string{fmt.Sprintf("m%d", i)}, []string{fmt.Sprintf("r%d", i)})
			g.Node("Add", fmt.Sprintf("add%d", i), []string{fmt.Sprintf("r%d", i), prev}, []string{fmt.Sprintf("a%d", i)})
			prev = fmt.Sprintf("a%d", i)
		}
		g.Output(prev, onnxbuild.TensorType(onnx.Float, 4, 16))
		m, err := g.Model()
		if err != nil {
			b.Fatal(err)
		}
		x := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 4, 16))
		in := []*onnx.Value{onnx.LiteralValue(x)}
		b.Run(fmt.Sprintf("nodes=%d", 3*n), func(b *testing.B) {
			for range b.N {
				s, err := graph.New(m, graph.Options{Threads: 1})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.RunOrdered(context.Background(), in); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}
