package cpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/axle-ml/axle/backend/cpu/frontend"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// compiler compiles one module, already optimized and fused: its entry
// and every computation its control flow calls, each once and with the
// same options. A computation called from many sites, at any depth, is
// compiled once and its executable shared: compiling per call site would
// compile it once per path through the call graph, 2^30 times for 31
// computations each calling the next twice (an executable is safe to run
// from many sites: its frames and outputs come from pools). Compilation
// is sequential, so the maps need no lock.
type compiler struct {
	opts    Options
	threads int
	ctx     context.Context // nil: none
	module  *hlo.Module
	// fallbacks lists, as "opcode shape", what runs on the evaluator, in
	// the order compiled; each executable reports the part its own
	// compilation added (its computation and the callees first compiled
	// for it).
	fallbacks []string
	prof      *profile // shared by every executable: nil unless Options.Profile
	done      map[*hlo.Computation]calledResult
	// cur is the executable being compiled, whose subs a control-flow
	// lowering extends.
	cur *Executable
	// plan, when recording (Options.RecordPlan), receives every choice;
	// when following (Load), dictates them.
	plan   *Plan
	follow bool
	// weights keeps the layouts of constant right operands, one for each
	// constant and way of reading it (constantRHS).
	weights map[*hlo.Instruction][]*packedWeights
}

// calledResult is a compiled computation, or why it could not be
// compiled (its callers then run it on the evaluator).
type calledResult struct {
	x   *Executable
	err error
}

// Compile optimizes a copy of m (m itself is left alone), fuses it,
// lowers every instruction of its entry computation and of the
// computations it calls to a kernel, schedules them and assigns their
// buffers. It needs the compiler (package backend/cpu/compiler, which
// registers itself when imported: package axle imports it).
func Compile(m *hlo.Module, opts Options) (*Executable, error) {
	fc := frontend.Registered()
	if fc == nil {
		return nil, errNoCompiler
	}
	mod, interp, err := prepare(m, opts, fc)
	if err != nil || interp != nil {
		return interp, err
	}
	if err := optimize(mod, opts, fc); err != nil {
		return nil, err
	}
	if err := checkContext(opts.Context, "fusing"); err != nil {
		return nil, err
	}
	if err := fuse(mod, opts, fc); err != nil {
		return nil, err
	}
	c := newCompiler(mod, opts)
	if opts.RecordPlan {
		c.plan = &Plan{Lowerings: map[string]string{}, Schedules: map[string][]string{}}
	}
	x, err := c.compile(mod.Entry)
	if x != nil {
		x.plan = c.plan
		x.warmPools()
	}
	return x, err
}

var errNoCompiler = errors.New(`cpu: Compile needs the compiler: import _ "github.com/axle-ml/axle/backend/cpu/compiler"`)

// prepare verifies m (unless the caller did) and copies it, with what every engine needs done
// first (fc.Prepare); or, when the cost model says compiling would not
// pay, returns the copy as an interpreted executable.
func prepare(m *hlo.Module, opts Options, fc frontend.Compiler) (*hlo.Module, *Executable, error) {
	if m.Entry == nil {
		return nil, nil, fmt.Errorf("cpu: module %s has no entry computation", m.Name)
	}
	if !opts.Verified {
		if err := hlo.Verify(m); err != nil {
			return nil, nil, err
		}
	}
	mod := m.Clone()
	if err := fc.Prepare(mod); err != nil {
		return nil, nil, fmt.Errorf("cpu: %w", err)
	}
	if est := estimate(mod); est.interpret(opts.ExpectedRuns) {
		return nil, interpreted(mod, est), nil
	}
	return mod, nil, nil
}

// optimize runs the standard pipeline over mod, or with NoOptimize the
// passes that give map and batch-norm their kernels: they lower, not
// optimize.
func optimize(mod *hlo.Module, opts Options, fc frontend.Compiler) error {
	if err := checkContext(opts.Context, "optimizing"); err != nil {
		return err
	}
	if err := fc.Optimize(mod, !opts.NoOptimize, opts.Context); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	return nil
}

func newCompiler(mod *hlo.Module, opts Options) *compiler {
	c := &compiler{opts: opts, threads: effectiveThreads(opts.Threads), ctx: opts.Context, module: mod,
		done: map[*hlo.Computation]calledResult{}}
	if opts.Profile {
		c.prof = &profile{times: map[*hlo.Instruction]*kernelCalls{}}
	}
	return c
}

// compile lowers, schedules and assigns the buffers of comp, a
// computation of c's module.
func (c *compiler) compile(comp *hlo.Computation) (*Executable, error) {
	x := &Executable{module: c.module, entry: comp, threads: c.threads, Lowering: map[string]int{},
		poison: c.opts.Poison, Engine: "compiled", prof: c.prof}
	x.outs.poison = c.opts.Poison
	outer := c.cur
	c.cur = x
	defer func() { c.cur = outer }()
	first := len(c.fallbacks)
	steps, infos, err := c.lowerAll(x, comp)
	if err != nil {
		return nil, err
	}
	if len(c.fallbacks) > first {
		x.Fallbacks = slices.Clone(c.fallbacks[first:])
	}
	order, asg, err := c.schedule(comp, infos)
	if err != nil {
		return nil, err
	}
	x.place(comp, order, asg, steps)
	if secs := findSections(order, x.steps, c.threads); len(secs) > 0 {
		vals := make([]valueInfo, len(order))
		for i, in := range order {
			vals[i] = infos[in]
		}
		x.place(comp, order, assign(vals, comp.Root, secs...), steps)
		x.sections = secs
	}
	return x, nil
}

// lowerAll lowers every instruction of comp to its step, counting the
// lowerings in x.
func (c *compiler) lowerAll(x *Executable, comp *hlo.Computation) (map[*hlo.Instruction]step, map[*hlo.Instruction]valueInfo, error) {
	steps := make(map[*hlo.Instruction]step, len(comp.Instructions))
	infos := make(map[*hlo.Instruction]valueInfo, len(comp.Instructions))
	for _, in := range comp.Instructions {
		if err := checkContext(c.ctx, "lowering"); err != nil {
			return nil, nil, err
		}
		s, info := c.lowerValue(in, infos)
		if c.prof != nil && s.k != nil && in.Opcode != hlo.OpParameter && in.Opcode != hlo.OpConstant {
			s.k = c.prof.wrap(in, s.how, s.k)
		}
		steps[in], infos[in] = s, info
		x.Lowering[s.how]++
		warmScratch(s.how, in, c.threads)
	}
	return steps, infos, nil
}

// warmScratch fills the kernels' pools with the packing buffers a
// product or convolution lowered as how will take, so the executable's
// first run does not page them in (kernels.WarmGemm); the columns of the
// product are taken as the result's last dimension, which they are for a
// dot and a channels-last convolution.
func warmScratch(how string, in *hlo.Instruction, threads int) {
	if !strings.HasPrefix(how, "gemm") && !strings.HasPrefix(how, "conv") || !in.Shape.IsArray() || in.Shape.Rank() == 0 {
		return
	}
	kernels.WarmGemm(int(in.Shape.Dims[in.Shape.Rank()-1]), threads)
}

// place schedules comp's steps and assigns their buffers.
func (x *Executable) place(comp *hlo.Computation, order []*hlo.Instruction, asg *assignment, lowered map[*hlo.Instruction]step) {
	pos := make(map[*hlo.Instruction]int, len(order))
	for i, in := range order {
		pos[in] = i
	}
	x.steps = make([]step, 0, len(order))
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
	x.asg, x.root = asg, pos[comp.Root]
	x.outIdx = make([]int, len(asg.bufs))
	x.plainPeak = asg.arena
	for i, b := range asg.outputs {
		x.outIdx[b] = i
		x.outs.addSize(asg.bufs[b].bytes)
		x.plainPeak += asg.bufs[b].bytes
	}
}

// called compiles a computation that an instruction of the computation
// being compiled calls, once for the whole module, and counts it among
// that executable's subs (whose peaks count in its own).
func (c *compiler) called(comp *hlo.Computation) (*Executable, error) {
	x, err := c.compiled(comp)
	if err == nil {
		c.use(x)
	}
	return x, err
}

// compiled compiles comp once for the whole module.
func (c *compiler) compiled(comp *hlo.Computation) (*Executable, error) {
	if comp == nil {
		return nil, fmt.Errorf("missing computation")
	}
	r, ok := c.done[comp]
	if !ok {
		r.x, r.err = c.compile(comp)
		c.done[comp] = r
	}
	return r.x, r.err
}

// use counts sub among the subs of the executable being compiled.
func (c *compiler) use(sub *Executable) {
	if !slices.Contains(c.cur.subs, sub) {
		c.cur.subs = append(c.cur.subs, sub)
	}
}

// lowerValue lowers one instruction to its step and says what buffer
// assignment needs to know of its value. A get-tuple-element of a tuple
// with a buffer per element (a multi-output fusion's) is a view.
func (c *compiler) lowerValue(in *hlo.Instruction, infos map[*hlo.Instruction]valueInfo) (step, valueInfo) {
	if in.Opcode == hlo.OpGetTupleElement && infos[in.Operands[0]].parts != nil {
		if idx, _ := in.Int("index"); idx >= 0 && int(idx) < len(infos[in.Operands[0]].parts) {
			return step{in: in, how: "element-view", part: int(idx)}, valueInfo{in: in, part: int(idx)}
		}
	}
	l, how := c.lower(in)
	if how == evaluatorLowering {
		c.fallbacks = append(c.fallbacks, fmt.Sprintf("%s %s", in.Opcode, in.Shape))
	}
	if l.parts != nil {
		return step{in: in, k: l.k, how: how, part: -1}, valueInfo{in: in, parts: l.parts, part: -1}
	}
	return step{in: in, k: l.k, how: how, view: isView(in), part: -1}, plainValue(in, isView(in), l.inPlace)
}

// lower tries in's opcode's lowerings in order; the last, the
// evaluator's, takes anything.
func (c *compiler) lower(in *hlo.Instruction) (lowered, string) {
	if l, name, ok := c.lowerAsPlanned(in); ok {
		return l, name
	}
	for _, lw := range lowerings[in.Opcode] {
		if l, ok := lw.lower(c, in); ok {
			c.record(in, lw.name)
			if l.how != "" {
				return l, l.how
			}
			return l, lw.name
		}
	}
	panic("cpu: no lowering took " + in.Opcode.String()) // the evaluator's takes all: checked at init
}
