package cpu

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// Options control compilation.
type Options struct {
	// Threads bounds the goroutines one execution uses (0: GOMAXPROCS).
	Threads int
	// NoOptimize skips the standard pass pipeline.
	NoOptimize bool
	// Profile labels every kernel for pprof and times it (see Profile).
	Profile bool
	// ExpectedRuns is how many executions the caller expects (0: many).
	// With few expected runs of a tiny module, the cost model may choose
	// to run it on the evaluator rather than compile it (see Engine).
	ExpectedRuns int
	// NoOutputFusion keeps dots and convolutions apart from their
	// elementwise readers (for A/B runs and tests of output fusion).
	NoOutputFusion bool
	// Poison fills new arenas and output buffers with NaN bytes, so tests
	// catch kernels that leave part of their result unwritten.
	Poison bool
	// RecordPlan keeps what compiling decided (Executable.Plan), for an
	// ahead-of-time package to store and Load to follow.
	RecordPlan bool
	// Verified says the caller verified the module (hlo.Verify) just
	// before and nothing changed it since: Compile skips verifying it
	// again (axle.Client's Compile verifies every module it is given).
	Verified bool
	// Context, if not nil, is checked between the optimization passes and
	// the compiler's stages: once it is done, Compile returns an error
	// wrapping its Err.
	Context context.Context
}

// kernel computes one instruction. out is the instruction's assigned
// buffer (contents undefined: buffers are reused), a tuple of its
// elements' buffers when they have one each (valueInfo.parts), or nil
// when its value has none (other tuples, tokens, dynamic shapes); the
// kernel returns the value it computed: out itself, or a literal of its
// own, which the executor copies into out.
type kernel func(ev *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error)

// kernelFunc computes one instruction into out, a literal of the
// instruction's shape from the execution's arena: its contents are
// undefined (buffers are reused), so the kernel writes every element.
type kernelFunc func(out *hlo.Literal, ops []*hlo.Literal) error

// step is one scheduled instruction.
type step struct {
	in   *hlo.Instruction
	k    kernel
	how  string
	ops  []int // the steps computing its operands
	view bool  // its value is operand 0's storage (reshape, bitcast)
	// part is the element of operand 0's value this value is (a
	// get-tuple-element of a tuple with per-element buffers), or -1.
	part int
	// param is a parameter's number + 1, 0 for any other step: runStep
	// tests it rather than in.Opcode, a load from the instruction that
	// missed the cache on every step (a tenth of a GRU run's step loop).
	param int
}

// Executable is a compiled computation, a module's entry or one its
// control flow calls: its instructions in schedule order, each lowered
// to a kernel, their buffers and the pools an execution draws them from.
type Executable struct {
	module  *hlo.Module
	entry   *hlo.Computation
	steps   []step
	asg     *assignment
	root    int
	outIdx  []int // per buffer: its index in asg.outputs (outputs only)
	threads int
	// Lowering counts how the instructions were lowered (for `axle run`).
	Lowering map[string]int
	// Fallbacks lists, as "opcode shape", the instructions that run on the
	// evaluator because no kernel takes them, here and in the
	// computations this one calls.
	Fallbacks []string
	prof      *profile // nil unless compiled with Options.Profile
	frames    framePool
	outs      outputPool
	poison    bool
	// interp: the cost model chose the evaluator for the whole module.
	interp bool
	// Engine says how the module runs: "compiled", or "evaluator" with
	// the cost model's reason.
	Engine string
	// subs are the executables of the computations the steps call (while
	// bodies, branches), whose peaks count in this one's (run.go).
	subs []*Executable
	peak atomic.Int64 // PeakBytes
	plan *Plan        // with Options.RecordPlan or from Load
	// serial says the last execution split no work across the pool's
	// workers, so the next does not keep them polling (kernels.Busy).
	serial atomic.Bool
	// sections are the runs of steps whose two branches run at once
	// (branches.go), in schedule order.
	sections []section
	// plainPeak is what an execution without donation or control flow
	// measures: the arena and every output.
	plainPeak int64
}

// lowerMulti compiles a loop fusion with several outputs (a tuple of
// arrays at its root) to a multi-output tile program writing each output
// into its element's buffer.
func (c *compiler) lowerMulti(in *hlo.Instruction) (kernel, [][]int, bool) {
	if in.Opcode != hlo.OpFusion || !in.Shape.IsTuple() {
		return nil, nil, false
	}
	for _, e := range in.Shape.Tuple {
		if arrayBytes(e) <= 0 {
			return nil, nil, false // every element needs a buffer
		}
	}
	p, err := tile.Multi(in)
	if err != nil {
		return nil, nil, false
	}
	return func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil {
			out = newTuple(in.Shape)
		}
		return out, p.RunMulti(ops, out.Elements(), c.threads)
	}, p.OutputInPlace(), true
}

// newTuple allocates a tuple of fresh arrays of shape s.
func newTuple(s hlo.Shape) *hlo.Literal {
	elems := make([]*hlo.Literal, len(s.Tuple))
	for k, e := range s.Tuple {
		elems[k] = hlo.NewLiteral(e)
	}
	return hlo.MakeTupleLiteral(elems...)
}

// effectiveThreads is the thread count an executable runs with.
func effectiveThreads(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// bestSchedule tries the candidate orders and keeps the one needing the
// smallest arena.
func bestSchedule(c *hlo.Computation, infos map[*hlo.Instruction]valueInfo) ([]*hlo.Instruction, *assignment) {
	size := func(in *hlo.Instruction) int64 { return valueBytes(infos[in]) }
	var best []*hlo.Instruction
	var bestAsg *assignment
	for _, order := range [][]*hlo.Instruction{c.Instructions, listSchedule(c, size), dfsSchedule(c)} {
		vals := make([]valueInfo, len(order))
		for i, in := range order {
			vals[i] = infos[in]
		}
		a := assign(vals, c.Root)
		if bestAsg == nil || a.arena < bestAsg.arena {
			best, bestAsg = order, a
		}
	}
	return best, bestAsg
}

// Module is the module as compiled (optimized and fused).
func (x *Executable) Module() *hlo.Module { return x.module }

// MemoryStats describes buffer assignment.
type MemoryStats struct {
	// Peak is the arena size: the most bytes of intermediates live at once
	// under the schedule (arguments and outputs excluded).
	Peak int64
	// Intermediates is the sum of every intermediate's size: what an
	// executor allocating each instruction's result anew would use.
	Intermediates int64
	// Outputs is the size of the results handed to the caller.
	Outputs int64
	// Buffers is the number of arena buffers; InPlace the number of
	// instructions computed over an operand's buffer.
	Buffers, InPlace int
}

// Memory reports the executable's buffer assignment.
func (x *Executable) Memory() MemoryStats {
	s := MemoryStats{Peak: x.asg.arena, Intermediates: x.asg.intermediates, InPlace: x.asg.inPlace}
	for _, b := range x.asg.bufs {
		switch b.kind {
		case bufArena:
			s.Buffers++
		case bufOutput:
			s.Outputs += b.bytes
		}
	}
	return s
}

// fromFunc adapts a kernel that writes into its output buffer.
func fromFunc(in *hlo.Instruction, f kernelFunc) kernel {
	return func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil {
			out = hlo.NewLiteral(in.Shape)
		}
		return out, f(out, ops)
	}
}

// checkContext fails once ctx (nil: none) is done, saying at which stage.
func checkContext(ctx context.Context, stage string) error {
	if ctx == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cpu: compilation stopped before %s: %w", stage, err)
	}
	return nil
}
