package cpu

import (
	"fmt"

	"github.com/axle-ml/axle/backend/cpu/frontend"
	"github.com/axle-ml/axle/hlo"
)

// FusionPasses returns the backend's fusion passes for one compile (they
// share its names and thread count, so make them once per module), in
// their order; FusionOrders says why that order. Each runs over the
// computations compiled as sequences of kernels (sequentialComputations).
// fc, the compiler, cleans up after them (DCE). The compiler runs them
// (package compiler's FusionPipeline), with its dumps and timings.
func FusionPasses(opts Options, fc frontend.Compiler) []frontend.Pass {
	s := &fusionState{threads: effectiveThreads(opts.Threads)}
	passes := []frontend.Pass{
		s.pass("pool-window-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			n, err := fusePoolWindows(m, c, s.namesFor(m))
			return n > 0, err
		}),
		s.pass("reduce-iota-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			n, err := fuseReduceIotas(m, c, s.namesFor(m))
			return n > 0, err
		}),
		s.pass("int8-dot-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			n, err := fuseInt8Dots(m, c, s.namesFor(m))
			return n > 0, err
		}),
		s.pass("int8-conv-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			n, err := fuseInt8Convs(m, c, s.namesFor(m))
			return n > 0, err
		}),
		s.pass("loop-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			return fuseLoops(m, c, s.namesFor(m))
		}),
		{Name: "fusion-dce", Run: fc.DCE},
	}
	if !opts.NoOutputFusion {
		passes = append(passes, s.pass("output-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			n, err := fuseEpilogues(c, s.namesFor(m), s.threads)
			return n > 0, err
		}))
	}
	return append(passes,
		s.pass("dot-transpose-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			n, err := fuseDotTransposes(m, c, s.namesFor(m))
			return n > 0, err
		}),
		s.pass("multi-output-fusion", func(m *hlo.Module, c *hlo.Computation) (bool, error) {
			n, err := fuseMultiOutput(m, c, s.namesFor(m))
			s.merged += n
			return n > 0, err
		}),
		// Only merging leaves fused computations uncalled: without a
		// merge there is nothing for it to find, and a walk of the
		// module is a tenth of a tiny module's compile.
		frontend.Pass{Name: "fusion-late-dce", Run: func(m *hlo.Module) (bool, error) {
			if s.merged == 0 {
				return false, nil
			}
			return fc.DCE(m)
		}},
	)
}

// FusionOrders are the orders FusionPasses keeps, with their reasons.
var FusionOrders = []frontend.Order{
	{Before: "int8-dot-fusion", After: "loop-fusion", Reason: "an integer dot claims its operands' converts before loop fusion may take them (today it takes no s32 convert; the order keeps it so)"},
	{Before: "int8-conv-fusion", After: "loop-fusion", Reason: "an integer convolution claims its operands' converts and zero-point subtractions before loop fusion may take them"},
	{Before: "reduce-iota-fusion", After: "loop-fusion", Reason: "an argmax's reduce and iota pair up as plain instructions, before loop fusion may claim either (tile programs compute no iota today, so the two commute; the order keeps it so)"},
	{Before: "pool-window-fusion", After: "loop-fusion", Reason: "a pool written as maxima of strided slices becomes one reduce-window before loop fusion takes the slices and maxima into a fusion"},
	{Before: "pool-window-fusion", After: "fusion-dce", Reason: "the pool's slices and its padded input are left without readers"},
	{Before: "loop-fusion", After: "fusion-dce", Reason: "fusion copies index ops and cheap producers into their readers and may leave the originals without users"},
	{Before: "loop-fusion", After: "output-fusion", Reason: "a product folds into a kLoop fusion: its epilogue must be one first"},
	{Before: "fusion-dce", After: "output-fusion", Reason: "a product folds only into its only reader: dead readers would keep it from folding"},
	{Before: "output-fusion", After: "dot-transpose-fusion", Reason: "a product keeps an elementwise epilogue it has; only a plain product's transpose is written by its GEMM"},
	{Before: "loop-fusion", After: "dot-transpose-fusion", Reason: "a transpose that loop fusion reads through an index map stays there; a lone one is the product's"},
	{Before: "output-fusion", After: "multi-output-fusion", Reason: "multi-output fusion takes only kLoop fusions: a dot's epilogue stays with its dot rather than with its siblings"},
	{Before: "fusion-dce", After: "multi-output-fusion", Reason: "a merged dead value would still be computed"},
	{Before: "multi-output-fusion", After: "fusion-late-dce", Reason: "merging leaves the members' fused computations uncalled"},
}

// fuse runs the fusion passes through the compiler fc, which verifies the
// result. The pipeline stops once opts.Context is done.
func fuse(mod *hlo.Module, opts Options, fc frontend.Compiler) error {
	if err := fc.Fuse(mod, FusionPasses(opts, fc), FusionOrders, opts.Context); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	return nil
}

// fusionState is what one compile's fusion passes share.
type fusionState struct {
	threads int
	mod     *hlo.Module
	names   *hlo.NameSet
	merged  int // multi-output fusions made
}

// namesFor returns m's name set, made when a fusion pass first sees m:
// the fusion passes run back to back, and the set they keep handing out
// names from stays current without walking the module again.
func (s *fusionState) namesFor(m *hlo.Module) *hlo.NameSet {
	if s.mod != m {
		s.mod, s.names = m, hlo.NewNameSet(m)
	}
	return s.names
}

// pass makes a named pass running step on each sequential computation.
func (s *fusionState) pass(name string, step func(*hlo.Module, *hlo.Computation) (bool, error)) frontend.Pass {
	return frontend.Pass{Name: name, Run: func(m *hlo.Module) (bool, error) {
		changed := false
		for _, c := range sequentialComputations(m) {
			ch, err := step(m, c)
			if err != nil {
				return changed, fmt.Errorf("%s: %w", c.Name, err)
			}
			changed = changed || ch
		}
		return changed, nil
	}}
}

// sequentialComputations lists the computations the backend compiles as
// sequences of kernels: the entry, and what while loops, conditionals,
// calls and async-starts run, at any depth (XLA's sequential call
// context). A computation also applied elementwise somewhere (a reducer,
// a comparator, a fusion's body: the embedded context) is left out:
// fusing it would change what those callers apply, so it runs
// instruction by instruction.
func sequentialComputations(m *hlo.Module) []*hlo.Computation {
	embedded := map[*hlo.Computation]bool{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if !runsAsProgram(in.Opcode) {
				for _, cc := range in.CalledComputations() {
					embedded[cc] = true
				}
			}
		}
	}
	var out []*hlo.Computation
	seen := map[*hlo.Computation]bool{}
	var walk func(c *hlo.Computation)
	walk = func(c *hlo.Computation) {
		if c == nil || seen[c] || embedded[c] {
			return
		}
		seen[c] = true
		out = append(out, c)
		for _, in := range c.Instructions {
			if runsAsProgram(in.Opcode) {
				for _, cc := range in.CalledComputations() {
					walk(cc)
				}
			}
		}
	}
	walk(m.Entry)
	return out
}

// runsAsProgram: the opcodes whose called computations run as programs of
// their own rather than being applied to elements.
func runsAsProgram(op hlo.Opcode) bool {
	return op == hlo.OpWhile || op == hlo.OpCall || op == hlo.OpConditional || op == hlo.OpAsyncStart
}
