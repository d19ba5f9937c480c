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
