package cpu

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
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
	// Context, if not nil, is checked between the optimization passes and
	// the compiler's stages: once it is done, Compile returns an error
	// wrapping its Err.
	Context context.Context
	// noFusion lowers each instruction alone: the body of a fusion that
	// no fused kernel takes (fusionBody), which fusing again could only
	// rebuild.
	noFusion bool
	// shared is the compilation of the enclosing module, when this one
	// compiles a computation its control flow calls (see subCompiler).
	shared *subCompiler
}

// kernel computes one instruction. out is the instruction's assigned
// buffer (contents undefined: buffers are reused), a tuple of its
// elements' buffers when they have one each (valueInfo.parts), or nil
// when its value has none (other tuples, tokens, dynamic shapes); the
// kernel returns the value it computed: out itself, or a literal of its
// own, which the executor copies into out.
type kernel func(ev *eval.Evaluator, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error)

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

// Executable is a compiled module: the entry computation's instructions
// in schedule order, each lowered to a kernel, and their buffers.
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
	prof      profile
	frames    framePool
	outs      outputPool
	poison    bool
	// noOutputFusion is Options.NoOutputFusion, for compiled bodies.
	noOutputFusion bool
	// interp: the cost model chose the evaluator for the whole module.
	interp bool
	// Engine says how the module runs: "compiled", or "evaluator" with
	// the cost model's reason.
	Engine string
	// subs are the executables of the computations the steps call (while
	// bodies, branches), whose peaks count in this one's (run.go).
	subs []*Executable
	peak atomic.Int64 // PeakBytes
	// plainPeak is what an execution without donation or control flow
	// measures: the arena and every output.
	plainPeak int64
	// shared compiles the computations the steps call, each once for
	// the whole module (set while compiling only).
	shared *subCompiler
}

// Compile optimizes a copy of m (m itself is left alone), fuses it,
// lowers every instruction of its entry computation to a kernel,
// schedules them and assigns their buffers.
func Compile(m *hlo.Module, opts Options) (*Executable, error) {
	if m.Entry == nil {
		return nil, fmt.Errorf("cpu: module %s has no entry computation", m.Name)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, err
	}
	mod := m.Clone()
	// GPU library calls become the HLO they stand for whatever the
	// options: nothing, not even the evaluator, runs them as calls.
	if _, err := opt.GPULibraryCalls.Run(mod); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	// What no kernel takes runs on the evaluator: what the evaluator
	// cannot run either fails here, not at the first execution.
	if err := eval.CheckSupported(mod); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	if est := estimate(mod); est.interpret(opts.ExpectedRuns) {
		return interpreted(mod, est), nil
	}
	if err := checkContext(opts.Context, "optimizing"); err != nil {
		return nil, err
	}
	if !opts.NoOptimize {
		if _, err := opt.Standard().RunWith(mod, pass.Options{Observers: contextObserver(opts.Context)}); err != nil {
			return nil, fmt.Errorf("cpu: %w", err)
		}
	} else if !opts.noFusion {
		// Without the pipeline, still the two passes that give map and
		// batch-norm their kernels: they lower, not optimize.
		for _, p := range []pass.Pass{opt.MapInliner, opt.BatchNormExpander} {
			if _, err := p.Run(mod); err != nil {
				return nil, fmt.Errorf("cpu: %s: %w", p.Name(), err)
			}
		}
	}
	if err := checkContext(opts.Context, "fusing"); err != nil {
		return nil, err
	}
	if err := fuse(mod, opts); err != nil {
		return nil, err
	}
	x := &Executable{module: mod, entry: mod.Entry, threads: opts.Threads, Lowering: map[string]int{}, poison: opts.Poison,
		noOutputFusion: opts.NoOutputFusion, Engine: "compiled"}

	x.prof.times = map[string]*KernelTime{}
	x.outs.poison = opts.Poison
	x.threads = effectiveThreads(opts.Threads)
	x.shared = opts.shared
	if x.shared == nil {
		x.shared = newSubCompiler(opts.Context)
	}
	defer func() { x.shared = nil }()
	lowered := map[*hlo.Instruction]step{}
	infos := map[*hlo.Instruction]valueInfo{}
	for _, in := range mod.Entry.Instructions {
		if err := checkContext(opts.Context, "lowering"); err != nil {
			return nil, err
		}
		s, info := x.lowerValue(in, infos)
		if opts.Profile && s.k != nil && in.Opcode != hlo.OpParameter && in.Opcode != hlo.OpConstant {
			s.k = x.profiled(in, s.how, s.k)
		}
		lowered[in], infos[in] = s, info
		x.Lowering[s.how]++
	}
	order, asg := bestSchedule(mod.Entry, infos)
	pos := map[*hlo.Instruction]int{}
	for i, in := range order {
		pos[in] = i
	}
	for _, in := range order {
		s := lowered[in]
		for _, o := range in.Operands {
			s.ops = append(s.ops, pos[o])
		}
		if in.Opcode == hlo.OpParameter {
			s.param = int(in.ParamNumber) + 1
		}
		x.steps = append(x.steps, s)
	}
	x.asg, x.root = asg, pos[mod.Entry.Root]
	x.outIdx = make([]int, len(asg.bufs))
	x.plainPeak = asg.arena
	for i, b := range asg.outputs {
		x.outIdx[b] = i
		x.outs.addSize(asg.bufs[b].bytes)
		x.plainPeak += asg.bufs[b].bytes
	}
	return x, nil
}

// lowerValue lowers one instruction to its step and says what buffer
// assignment needs to know of its value. A multi-output fusion's tuple
// gets a buffer per element, and a get-tuple-element of it is a view.
func (x *Executable) lowerValue(in *hlo.Instruction, infos map[*hlo.Instruction]valueInfo) (step, valueInfo) {
	if in.Opcode == hlo.OpGetTupleElement && infos[in.Operands[0]].parts != nil {
		if idx, _ := in.Int("index"); idx >= 0 && int(idx) < len(infos[in.Operands[0]].parts) {
			return step{in: in, how: "element-view", part: int(idx)}, valueInfo{in: in, part: int(idx)}
		}
	}
	if k, parts, ok := x.lowerMulti(in); ok {
		return step{in: in, k: k, how: "multi-output-fusion", part: -1}, valueInfo{in: in, parts: parts, part: -1}
	}
	k, how, ip := x.lower(in)
	if how == "evaluator" {
		x.Fallbacks = append(x.Fallbacks, fmt.Sprintf("%s %s", in.Opcode, in.Shape))
	}
	return step{in: in, k: k, how: how, view: isView(in), part: -1}, plainValue(in, isView(in), ip)
}

// lowerMulti compiles a loop fusion with several outputs (a tuple of
// arrays at its root) to a multi-output tile program writing each output
// into its element's buffer.
func (x *Executable) lowerMulti(in *hlo.Instruction) (kernel, [][]int, bool) {
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
	return func(_ *eval.Evaluator, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil {
			out = newTuple(in.Shape)
		}
		return out, p.RunMulti(ops, out.Elements(), x.threads)
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

// lower picks the kernel of one instruction, names the choice, and says
// which operands it may compute over.
func (x *Executable) lower(in *hlo.Instruction) (kernel, string, []int) {
	switch in.Opcode {
	case hlo.OpParameter:
		return nil, "parameter", nil
	case hlo.OpConstant:
		if in.Literal != nil && !in.Literal.IsElided() {
			return nil, "constant", nil
		}
	case hlo.OpFusion:
		if kind, _ := in.EnumAttr("kind"); kind == kOutput {
			if k, how, err := x.lowerOutputFusion(in); err == nil {
				return fromFunc(in, k), how, nil
			}
			break
		}
		if f, ok := lowerReduceSelectFusion(in, x.threads); ok {
			return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
				return f(ops)
			}, "reduce-select", nil
		}
		if fc := in.Computation("calls"); fc != nil && fc.Root != nil && fc.Root.Opcode == hlo.OpReduce {
			if p, err := tile.Reduce(in); err == nil {
				return func(_ *eval.Evaluator, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
					if out == nil {
						out = hlo.NewLiteral(in.Shape)
					}
					return out, p.Run(ops, out, x.threads)
				}, "reduce-fusion", nil
			}
			break
		}
		if p, err := tile.Loop(in); err == nil {
			how := "tile-fusion"
			if p.RunsJIT() {
				how = "jit-fusion"
			}
			return func(_ *eval.Evaluator, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
				if out == nil {
					out = hlo.NewLiteral(in.Shape)
				}
				return out, p.Run(ops, out, x.threads)
			}, how, p.InPlace()
		}
	case hlo.OpFft:
		if k, ok := lowerFFT(in, x.threads); ok {
			return fromFunc(in, k), "fft", nil
		}
	case hlo.OpTriangularSolve:
		if k, ok := lowerTriangularSolve(in, x.threads); ok {
			return fromFunc(in, k), "triangular-solve", nil
		}
	case hlo.OpCholesky:
		if k, ok := lowerCholesky(in, x.threads); ok {
			return fromFunc(in, k), "cholesky", nil
		}
	case hlo.OpDot:
		if k, ok := x.lowerDot(in); ok {
			return fromFunc(in, k), "gemm", nil
		}
		if k, ok := lowerDotComplex(in, x.threads); ok {
			return fromFunc(in, k), "complex-dot", nil
		}
		if k, ok := lowerDotGeneric(in, x.threads); ok {
			return fromFunc(in, k), "dot", nil
		}
	case hlo.OpGather:
		if k, ok := lowerGather(in, x.threads); ok {
			return fromFunc(in, k), "gather", nil
		}
	case hlo.OpScatter:
		if k, ok := lowerScatter(in, x.threads); ok {
			return fromFunc(in, k), "scatter", scatterInPlace(in)
		}
	case hlo.OpConvolution:
		if k, ok := x.lowerConv(in); ok {
			return fromFunc(in, k), "conv", nil
		}
		if k, ok := lowerConvGeneric(in, x.threads); ok {
			return fromFunc(in, k), "conv-loop", nil
		}
	case hlo.OpSort:
		if f, ok := lowerSortKernel(in, x.threads); ok {
			return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
				return f(ops)
			}, "sort", nil
		}
	case hlo.OpBitcastConvert:
		if k, ok := lowerBitcastConvert(in, x.threads); ok {
			return fromFunc(in, k), "bitcast-convert", []int{0}
		}
	case hlo.OpReducePrecision:
		if k, ok := lowerReducePrecision(in, x.threads); ok {
			return fromFunc(in, k), "reduce-precision", []int{0}
		}
	case hlo.OpSelectAndScatter:
		if k, ok := lowerSelectAndScatter(in, x.threads); ok {
			return fromFunc(in, k), "select-and-scatter", nil
		}
	case hlo.OpTuple:
		return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return hlo.MakeTupleLiteral(slices.Clone(ops)...), nil
		}, "tuple", nil
	case hlo.OpGetTupleElement:
		// An array element is then copied into the value's buffer, so it
		// does not depend on the tuple's storage.
		idx, _ := in.Int("index")
		return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			if e := ops[0].Elements(); idx >= 0 && int(idx) < len(e) {
				return e[idx], nil
			}
			return nil, fmt.Errorf("tuple index %d out of range", idx)
		}, "tuple", nil
	case hlo.OpWhile, hlo.OpCall, hlo.OpConditional:
		if k, ok := x.lowerControl(in); ok {
			return k, in.Opcode.String(), nil
		}
	}
	if isView(in) {
		return nil, "view", nil
	}
	if k, ok := lowerMovement(in, x.threads); ok {
		var ip []int
		if in.Opcode == hlo.OpDynamicUpdateSlice {
			ip = []int{0} // writes only the update when out is operand 0's buffer
		}
		return fromFunc(in, k), "movement", ip
	}
	if k, ok := lowerReduce(in, x.threads); ok {
		return fromFunc(in, k), "reduce", nil
	}
	if k, ok := lowerElementwise(in, x.threads); ok {
		return fromFunc(in, k), "elementwise", elementwiseInPlace(in)
	}
	if k, ok := lowerConvertAny(in); ok {
		return fromFunc(in, k), "convert", nil
	}
	if k, ok := x.fusionBody(in); ok {
		return k, "fusion-body", nil
	}
	if k, ok := lowerRandom(in, x.threads); ok {
		return k, in.Opcode.String(), nil
	}
	if k, ok := lowerTopK(in, x.threads); ok {
		return k, "topk", nil
	}
	if k, how, ok := lowerSingleDevice(in, x.threads); ok {
		return k, how, nil
	}
	if f, ok := lowerScatterLanes(in, x.threads); ok {
		return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return f(ops)
		}, "scatter-lanes", nil
	}
	if f, ok := lowerReduceWindowLanes(in, x.threads); ok {
		return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return f(ops)
		}, "reduce-window-lanes", nil
	}
	if f, ok := lowerReduceSelect(in, x.threads); ok {
		return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return f(ops)
		}, "reduce-select", nil
	}
	if f, ok := lowerReduceLanes(in, x.threads); ok {
		return func(_ *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return f(ops)
		}, "reduce-lanes", nil
	}
	// The evaluator's result is complete before the executor copies it
	// into the buffer, so any operand's buffer may be that buffer.
	all := make([]int, len(in.Operands))
	for k := range all {
		all[k] = k
	}
	return func(ev *eval.Evaluator, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		return ev.Instruction(in, ops)
	}, "evaluator", all
}

// fromFunc adapts a kernel that writes into its output buffer.
func fromFunc(in *hlo.Instruction, f kernelFunc) kernel {
	return func(_ *eval.Evaluator, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
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

// contextObserver stops the pass pipeline once ctx is done (nil when
// ctx can never be: no observer to call).
func contextObserver(ctx context.Context) []pass.Observer {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	return []pass.Observer{func(pass.Event) error { return ctx.Err() }}
}
