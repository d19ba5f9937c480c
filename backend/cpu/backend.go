package cpu

import (
	"sync"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Backend runs modules on the CPU backend for the conformance runner and
// `axle run`, compiling each module once.
type Backend struct {
	Options Options
	mu      sync.Mutex
	cache   map[*hlo.Module]*Executable
}

// L2Bytes is one core's level-2 cache in bytes, 0 where unknown: a front
// end choosing between forms of a computation by its working set asks it
// (a bidirectional RNN's, in the ONNX importer).
func L2Bytes() int { return kernels.L2Bytes() }

// Name is the backend's name on the command line.
func (*Backend) Name() string { return "cpu" }

// Run compiles m (once) and executes it.
func (b *Backend) Run(m *hlo.Module, args []*hlo.Literal) (*hlo.Literal, error) {
	x, err := b.Compile(m)
	if err != nil {
		return nil, err
	}
	return x.Execute(args...)
}

// Compile returns m's executable, compiling it on first use.
func (b *Backend) Compile(m *hlo.Module) (*Executable, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if x, ok := b.cache[m]; ok {
		return x, nil
	}
	x, err := Compile(m, b.Options)
	if err != nil {
		return nil, err
	}
	if b.cache == nil {
		b.cache = map[*hlo.Module]*Executable{}
	}
	b.cache[m] = x
	return x, nil
}
