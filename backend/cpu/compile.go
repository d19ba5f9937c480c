package cpu

import (
	"fmt"
	"runtime"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
)

// Options control compilation.
type Options struct {
	// Threads bounds the goroutines one execution uses (0: GOMAXPROCS).
	Threads int
	// NoOptimize skips the standard pass pipeline.
	NoOptimize bool
	// Profile labels every kernel for pprof and times it (see Profile).
	Profile bool
}

// thunk computes one instruction of the entry computation from its
// operands' values.
type thunk func(ev *eval.Evaluator, ops []*hlo.Literal) (*hlo.Literal, error)

// Executable is a compiled module: the entry computation's instructions
// in order, each with its thunk.
type Executable struct {
	module   *hlo.Module
	entry    *hlo.Computation
	thunks   []thunk
	operands [][]int // per instruction, its operands' positions
	root     int
	threads  int
	// Lowering counts how the instructions were lowered (for `axle run`).
	Lowering map[string]int
	prof     profile
}

// Compile optimizes a copy of m (m itself is left alone), fuses it and
// lowers its entry computation.
func Compile(m *hlo.Module, opts Options) (*Executable, error) {
	if m.Entry == nil {
		return nil, fmt.Errorf("cpu: module %s has no entry computation", m.Name)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, err
	}
	mod := m.Clone()
	if !opts.NoOptimize {
		if _, err := opt.Standard().Run(mod); err != nil {
			return nil, fmt.Errorf("cpu: %w", err)
		}
	}
	if _, err := fuseLoops(mod, mod.Entry, hlo.NewNameSet(mod)); err != nil {
		return nil, fmt.Errorf("cpu: fusion: %w", err)
	}
	if err := hlo.Verify(mod); err != nil {
		return nil, fmt.Errorf("cpu: after fusion: %w", err)
	}
	x := &Executable{module: mod, entry: mod.Entry, threads: opts.Threads, Lowering: map[string]int{}}
	x.prof.times = map[string]*KernelTime{}
	if x.threads <= 0 {
		x.threads = runtime.GOMAXPROCS(0)
	}
	pos := map[*hlo.Instruction]int{}
	for i, in := range mod.Entry.Instructions {
		pos[in] = i
	}
	for _, in := range mod.Entry.Instructions {
		ops := make([]int, len(in.Operands))
		for k, o := range in.Operands {
			ops[k] = pos[o]
		}
		x.operands = append(x.operands, ops)
		t, how := x.lower(in)
		if opts.Profile {
			t = x.profiled(in, how, t)
		}
		x.thunks = append(x.thunks, t)
		x.Lowering[how]++
	}
	x.root = pos[mod.Entry.Root]
	return x, nil
}

// Module is the module as compiled (optimized and fused).
func (x *Executable) Module() *hlo.Module { return x.module }

// lower picks the thunk of one instruction and names the choice.
func (x *Executable) lower(in *hlo.Instruction) (thunk, string) {
	switch in.Opcode {
	case hlo.OpFusion:
		if p, err := compileLoop(in); err == nil {
			return func(_ *eval.Evaluator, ops []*hlo.Literal) (*hlo.Literal, error) {
				out := hlo.NewLiteral(in.Shape)
				return out, p.run(ops, out, x.threads)
			}, "tile-fusion"
		}
	case hlo.OpDot:
		if t, ok := x.lowerDot(in); ok {
			return t, "gemm"
		}
	case hlo.OpConvolution:
		if t, ok := x.lowerConv(in); ok {
			return t, "conv"
		}
	}
	return func(ev *eval.Evaluator, ops []*hlo.Literal) (*hlo.Literal, error) {
		return ev.Instruction(in, ops)
	}, "evaluator"
}

// Execute runs the compiled module on args, one per entry parameter. It
// may be called from several goroutines at once.
func (x *Executable) Execute(args ...*hlo.Literal) (*hlo.Literal, error) {
	if err := x.entry.CheckArguments(args); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	var ev eval.Evaluator
	vals := make([]*hlo.Literal, len(x.thunks))
	ops := make([]*hlo.Literal, 0, 8)
	for i, in := range x.entry.Instructions {
		if in.Opcode == hlo.OpParameter {
			vals[i] = args[in.ParamNumber]
			continue
		}
		ops = ops[:0]
		for _, j := range x.operands[i] {
			ops = append(ops, vals[j])
		}
		v, err := x.thunks[i](&ev, append([]*hlo.Literal(nil), ops...))
		if err != nil {
			return nil, fmt.Errorf("cpu: instruction %s: %w", in.Name, err)
		}
		vals[i] = v
	}
	return vals[x.root], nil
}

// kernelFunc computes one instruction into out, a literal of the
// instruction's shape from the execution's arena: its contents are
// undefined (buffers are reused), so the kernel writes every element.
type kernelFunc func(out *hlo.Literal, ops []*hlo.Literal) error

// Run is Execute with donation: donated[i] says the caller gives up
// args[i], whose storage the executable may then reuse for intermediates
// or outputs (the caller must not read it afterwards). donated may be nil.
func (x *Executable) Run(args []*hlo.Literal, donated []bool) (*hlo.Literal, error) {
	return x.Execute(args...)
}

// Recycle gives an output of this executable back to its buffer pool
// once the caller is done with it; later executions may reuse its
// storage. Recycling anything else is harmless.
func (x *Executable) Recycle(out *hlo.Literal) {}

// MemoryStats describes buffer assignment.
type MemoryStats struct {
	// Peak is the arena size: the most bytes of intermediates live at once
	// under the schedule (parameters and outputs excluded).
	Peak int64
	// Intermediates is the sum of every intermediate's size, what an
	// executor without buffer reuse would allocate per execution.
	Intermediates int64
	// Buffers is the number of intermediate values placed in the arena.
	Buffers int
}

// Memory reports the executable's buffer assignment.
func (x *Executable) Memory() MemoryStats { return MemoryStats{} }
