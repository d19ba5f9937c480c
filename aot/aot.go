// Package aot runs modules compiled ahead of time: `axle aot` compiles a
// module once and writes a Go package holding a plan (the fused module,
// the lowering each instruction took, the schedules, and the machine code
// the JIT generated); the package loads it with this one. Loading builds
// the same kernels the compiler built from the plan, with no parser, no
// passes, no fusion or lowering decisions and no code generation, so a
// binary using it links none of them (package backend/cpu/compiler, which
// holds them, is not imported). On a CPU without the features the plan's
// code needs, or another architecture, the same plan runs on the kernels'
// portable code. On the same CPU a plan's results are the compiler's bit
// for bit. Built with -tags purego (or on another architecture) the Go
// twins of the kernels sum in other orders than the AVX2 and AVX-512
// code (a GEMM's blocks, a row's partial sums): each f32 result then
// agrees within 1e-5 absolute plus 1e-5 relative, the tolerance tests
// hold it to, for products of up to a few thousand terms of unit size
// (mlp_b256: 2.7e-6 at most; softmax 4096×1024: 5 units in the last
// place at most).
//
// A Program is safe for concurrent use: executions draw their buffers
// from pools, as compiled executables do.
package aot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlobin"
	"github.com/axle-ml/axle/internal/runctl"
)

// Options control loading.
type Options struct {
	// Threads bounds the goroutines one execution uses (0: GOMAXPROCS).
	Threads int
}

// Program is a loaded plan, ready to run.
type Program struct {
	x      *cpu.Executable
	mod    *hlo.Module
	header Header
}

// Param is an entry parameter: its name in the module and its shape.
type Param struct {
	Name  string
	Shape hlo.Shape
}

// Load loads a plan file's contents.
func Load(data []byte, opts Options) (*Program, error) {
	p, err := Decode(data)
	if err != nil {
		return nil, err
	}
	mod, err := hlobin.Decode(p.Module)
	if err != nil {
		return nil, fmt.Errorf("aot: the plan's module: %w", err)
	}
	if err := loadCode(p.Code); err != nil {
		return nil, fmt.Errorf("aot: the plan's code: %w", err)
	}
	x, err := cpu.Load(mod, &p.Header.Plan, cpu.Options{Threads: opts.Threads})
	if err != nil {
		return nil, fmt.Errorf("aot: %w", err)
	}
	// Start the kernels' worker pool (its goroutines, a thread for them)
	// at load rather than in the first execution.
	if opts.Threads != 1 {
		kernels.Parallel(runtime.GOMAXPROCS(0), func(int) {})
	}
	return &Program{x: x, mod: mod, header: p.Header}, nil
}

// LoadFile loads a plan file (a plan too large to embed in a package).
func LoadFile(path string, opts Options) (*Program, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("aot: %w", err)
	}
	return Load(data, opts)
}

// Header describes the plan.
func (p *Program) Header() Header { return p.header }

// Module is the fused module the plan runs (for inspection).
func (p *Program) Module() *hlo.Module { return p.mod }

// Lowering counts how the instructions were lowered, as `axle run`
// reports them.
func (p *Program) Lowering() map[string]int { return p.x.Lowering }

// Params are the entry's parameters, in order.
func (p *Program) Params() []Param {
	out := make([]Param, len(p.mod.Entry.Params))
	for i, in := range p.mod.Entry.Params {
		out[i] = Param{p.paramName(i), in.Shape.Clone()}
	}
	return out
}

// Results are the shapes of the arrays Run returns: the entry's result,
// or the elements of its tuple, flattened.
func (p *Program) Results() []hlo.Shape {
	var out []hlo.Shape
	var walk func(s hlo.Shape)
	walk = func(s hlo.Shape) {
		if !s.IsTuple() {
			out = append(out, s.Clone())
			return
		}
		for _, e := range s.Tuple {
			walk(e)
		}
	}
	walk(p.mod.Entry.Root.Shape)
	return out
}

// paramName is parameter i's name as the module was written.
func (p *Program) paramName(i int) string {
	if i < len(p.header.Params) && len(p.header.Params) == len(p.mod.Entry.Params) {
		return p.header.Params[i]
	}
	return p.mod.Entry.Params[i].Name
}

// PeakBytes is the most memory one execution has used so far.
func (p *Program) PeakBytes() int64 { return p.x.PeakBytes() }

// Run runs the entry on args, one per parameter, and returns the result's
// arrays (a tuple's elements, flattened). The arguments are only read.
// Once ctx is done, the execution stops before its next kernel and Run
// returns an error wrapping ctx.Err().
func (p *Program) Run(ctx context.Context, args ...*hlo.Literal) ([]*hlo.Literal, error) {
	return p.RunDonated(ctx, args, nil)
}

// RunDonated is Run with donated arguments: donate[i] gives argument i's
// storage to the execution, which may compute over it (the caller must
// not use it again), as Executable donation does.
func (p *Program) RunDonated(ctx context.Context, args []*hlo.Literal, donate []bool) ([]*hlo.Literal, error) {
	if err := p.mod.Entry.CheckArguments(args); err != nil {
		return nil, fmt.Errorf("aot: %w", err)
	}
	if donate != nil && len(donate) != len(args) {
		return nil, fmt.Errorf("aot: %d donation flags for %d arguments", len(donate), len(args))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var stop *atomic.Bool
	if ctx.Done() != nil {
		stop = new(atomic.Bool)
		unregister := context.AfterFunc(ctx, func() { stop.Store(true) })
		defer unregister()
	}
	out, err := p.x.RunControlled(args, donate, stop)
	if err != nil {
		if stop != nil && stop.Load() && errors.Is(err, runctl.ErrInterrupted) {
			return nil, fmt.Errorf("aot: executing %s: %w", p.mod.Name, ctx.Err())
		}
		return nil, fmt.Errorf("aot: %w", err)
	}
	return Leaves(out), nil
}

// Leaves are l's arrays: l itself, or its tuple's elements, flattened.
func Leaves(l *hlo.Literal) []*hlo.Literal {
	if !l.Shape().IsTuple() {
		return []*hlo.Literal{l}
	}
	var out []*hlo.Literal
	for _, e := range l.Elements() {
		out = append(out, Leaves(e)...)
	}
	return out
}
