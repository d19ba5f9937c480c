package graph_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
)

// FuzzRun: any bytes that load as a model with small declared inputs run
// on seeded random inputs, or fail with an error; never a panic, never a
// stall. Seeds are the small ONNX backend-test models when ../shared is
// there, so that mutations keep real ops and attributes, the ai.onnx.ml
// tests of ../onnxtest/testdata/ml (their host kernels read attributes a
// mutation may leave inconsistent), the contrib-op graphs of
// ../onnxtest/testdata/ortopt, and models of ../onnxtest/testdata/models
// whose clusters split or whose sorts compile to closures.
func FuzzRun(f *testing.F) {
	paths, _ := filepath.Glob("../../../shared/corpus/onnx/node/test_*/model.onnx")
	for i, p := range paths {
		if i%7 != 0 {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && len(b) < 2048 {
			f.Add(b)
		}
	}
	ml, _ := filepath.Glob("../onnxtest/testdata/ml/test_*/model.onnx")
	// ONNX Runtime's contrib ops, their attributes and optional inputs.
	contrib, _ := filepath.Glob("../onnxtest/testdata/ortopt/test_ms_*/model.onnx")
	for _, p := range append(ml, contrib...) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	// Clusters that split at a node the compiler refuses for the inputs
	// at hand (an If whose branches' shapes differ, a Slice by values a
	// Loop computes), TopK, Sort and Unique's comparators, and
	// transposed convolutions (a vocoder's product-and-gather path,
	// grouped, 3-D and tiled ones).
	for _, name := range []string{"test_scripted_if_shapes_opset13", "test_data_dependent_shapes_opset13",
		"test_int_ties_unique_opset12", "test_index_postproc_opset13", "test_dlrm_embeddingbag_opset11",
		"test_hifigan_vocoder_opset17", "test_pool_convtranspose_opset13"} {
		if b, err := os.ReadFile(filepath.Join("../onnxtest/testdata/models", name, "model.onnx")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				buf := make([]byte, 1<<20)
				panic("input took over 20 s:\n" + string(buf[:runtime.Stack(buf, true)]))
			}
		}()
		m, err := onnx.LoadBytes(data, "")
		if err != nil {
			return
		}
		in, ok := smallInputs(m)
		if !ok {
			return
		}
		s, err := graph.New(m, graph.Options{Backend: "interp", MemoryLimit: 1 << 28})
		if err != nil {
			return
		}
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.RunOrdered(ctx, in)
	})
}

// smallInputs makes seeded random tensors for the graph's inputs when all
// are numeric tensors of at most 64 elements (symbolic dims 2).
func smallInputs(m *onnx.Model) ([]*onnx.Value, bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []*onnx.Value
	for _, vi := range m.Graph.Inputs {
		if vi.Type == nil || vi.Type.Kind != onnx.KindTensor || vi.Type.Elem.HLO() == hlo.Invalid || len(vi.Type.Dims) > 4 {
			return nil, false
		}
		dims := make([]int64, len(vi.Type.Dims))
		n := int64(1)
		for i, d := range vi.Type.Dims {
			if d < 0 {
				d = 2
			}
			dims[i] = d
			n *= d
		}
		if n > 64 {
			return nil, false
		}
		out = append(out, onnx.LiteralValue(eval.RandomLiteral(hlo.ArrayShape(vi.Type.Elem.HLO(), dims...), rng)))
	}
	return out, true
}
