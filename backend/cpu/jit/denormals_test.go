//go:build linux && amd64 && !purego

package jit

import (
	"os"
	"runtime"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// TestMain runs the package's tests with IEEE subnormals (their Go
// references keep them); TestFlushingMatchesKernels checks the default.
func TestMain(m *testing.M) {
	kernels.SetFlushDenormals(false)
	os.Exit(m.Run())
}

// TestFlushingMatchesKernels runs the tests that compare generated code
// with the kernels bit for bit, their inputs with subnormals among the
// specials, while the kernels flush subnormals: the code must flush as
// they do.
func TestFlushingMatchesKernels(t *testing.T) {
	was := kernels.SetFlushDenormals(true)
	defer kernels.SetFlushDenormals(was)
	t.Run("ops", func(t *testing.T) { bothWidths(t, testOpsMatchKernels) })
	t.Run("chain", func(t *testing.T) { bothWidths(t, testChainMatchesKernels) })
	t.Run("shortcut", func(t *testing.T) { bothWidths(t, testShortcutMatchesKernels) })
}

// TestMXCSRRestored checks that generated code gives its caller's thread
// the default SSE control word back: Go arithmetic on a subnormal right
// after a flushing call must keep it.
func TestMXCSRRestored(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	was := kernels.SetFlushDenormals(true)
	defer kernels.SetFlushDenormals(was)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: Exp, Args: [3]int{0}}}})
	if err != nil {
		t.Fatal(err)
	}
	x := []float32{-100, 1e-40, 3, 0}
	y := make([]float32, len(x))
	f.Run(f32s(y), f32s(x), nil, false)
	if y[0] != 0 {
		t.Errorf("exp(-100) = %g while flushing, want 0", y[0])
	}
	if x[1]*y[3] == 0 { // 1e-40 · exp(0), in Go
		t.Errorf("Go arithmetic flushed a subnormal after the call: MXCSR not restored")
	}
}
