// Package frontend is the seam between the CPU backend's engine (package
// cpu: lowering, kernels, scheduling, execution) and the compiler that
// prepares modules for it (package backend/cpu/compiler: the standard
// passes, the pass runner, the reference evaluator, the JIT's code
// generator). The engine imports only this contract, so a binary that
// runs modules compiled ahead of time (package aot) links none of the
// compiler; a binary that compiles imports the compiler package, which
// registers itself here (as database/sql drivers do).
package frontend

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

// Pass is one of the engine's own passes (its fusion passes): the
// compiler runs them through its pass runner, with dumps and timings.
type Pass struct {
	Name string
	Run  func(*hlo.Module) (changed bool, err error)
}

// Order says pass Before must run before pass After, and why.
type Order struct{ Before, After, Reason string }

// Evaluator is the reference evaluator as the engine's fallback kernels
// use it: an instruction no kernel takes, a computation, or a whole tiny
// module the cost model keeps off the compiler.
type Evaluator interface {
	Instruction(in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error)
	Computation(c *hlo.Computation, args ...*hlo.Literal) (*hlo.Literal, error)
	Run(m *hlo.Module, args ...*hlo.Literal) (*hlo.Literal, error)
	// PeakBytes is the most bytes the last Run's live values held.
	PeakBytes() int64
	// SetInterrupt makes evaluation poll stop (nil: never stop).
	SetInterrupt(stop *atomic.Bool)
	// SetParticipant makes the evaluator one device of a multi-device
	// launch (nil: a single device, replica and partition 0).
	SetParticipant(p *collective.Participant)
}

// Compiler is what compiling a module needs beyond the engine.
type Compiler interface {
	// Prepare rewrites what no engine runs as written (GPU library calls)
	// and fails on what the evaluator, the engine's fallback, cannot run.
	Prepare(m *hlo.Module) error
	// Optimize runs the standard pipeline, or with full false only the
	// passes that give their ops kernels (map inlining, batch-norm
	// expansion). It stops once ctx (nil: never) is done.
	Optimize(m *hlo.Module, full bool, ctx context.Context) error
	// Fuse runs the engine's passes in order under the orders, then
	// verifies the module.
	Fuse(m *hlo.Module, passes []Pass, orders []Order, ctx context.Context) error
	// DCE removes dead instructions and computations (a fusion pass's
	// cleanup).
	DCE(m *hlo.Module) (bool, error)
	// Canonical is an instruction's canonical text (its opcode, shape and
	// attributes, operands left out): fusion's key for equal values.
	Canonical(in *hlo.Instruction) string
	// NewEvaluator makes an evaluator polling stop.
	NewEvaluator(stop *atomic.Bool, measurePeak bool) Evaluator
}

var (
	mu       sync.RWMutex
	compiler Compiler
)

// Register makes c the compiler; the last registration wins.
func Register(c Compiler) {
	mu.Lock()
	compiler = c
	mu.Unlock()
}

// Registered is the registered compiler, or nil when the binary links
// none (an ahead-of-time package's).
func Registered() Compiler {
	mu.RLock()
	defer mu.RUnlock()
	return compiler
}
