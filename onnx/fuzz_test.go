package onnx_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
)

// FuzzLoad: any bytes either load and place or give an error; never a
// panic. Seeds are small models of the ONNX backend tests when
// ../shared is there.
func FuzzLoad(f *testing.F) {
	paths, _ := filepath.Glob("../../shared/corpus/onnx/node/test_*/model.onnx")
	for i, p := range paths {
		if i%20 != 0 {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte{0x08, 0x07, 0x3a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		// A watchdog: an input that takes seconds is a bug to see, with
		// every goroutine's stack, not a silent stall of the fuzzer.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				buf := make([]byte, 1<<20)
				panic("input took over 10 s:\n" + string(buf[:runtime.Stack(buf, true)]))
			}
		}()
		m, err := onnx.LoadBytes(data, "")
		if err != nil {
			return
		}
		s, err := graph.New(m, graph.Options{Backend: "interp"})
		if err != nil {
			return
		}
		s.Close()
	})
}
