package cpu

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
)

// fuse runs the backend's fusion passes over the computations the
// backend compiles as sequences of kernels (sequentialComputations; none
// with opts.noFusion) and verifies the result.
func fuse(mod *hlo.Module, opts Options) error {
	if opts.noFusion {
		return nil
	}
	names := hlo.NewNameSet(mod)
	comps := sequentialComputations(mod)
	for _, c := range comps {
		if _, err := fuseReduceIotas(mod, c, names); err != nil {
			return fmt.Errorf("cpu: index fusion: %w", err)
		}
		if _, err := fuseLoops(mod, c, names); err != nil {
			return fmt.Errorf("cpu: fusion: %w", err)
		}
	}
	// Fusion copies index ops into their readers and may leave the
	// originals without users.
	if _, err := opt.DCE.Run(mod); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	// After DCE: a product's dead readers would keep it from folding.
	// Before multi-output fusion, which takes only kLoop fusions: a dot's
	// epilogue stays with its dot.
	for _, c := range comps {
		if opts.NoOutputFusion {
			break
		}
		if _, err := fuseEpilogues(c, names, effectiveThreads(opts.Threads)); err != nil {
			return fmt.Errorf("cpu: output fusion: %w", err)
		}
	}
	// Sibling fusions are merged once dead ones are gone (a merged dead
	// value would still be computed).
	merged := 0
	for _, c := range comps {
		n, err := fuseMultiOutput(mod, c, names)
		if err != nil {
			return fmt.Errorf("cpu: multi-output fusion: %w", err)
		}
		merged += n
	}
	if merged > 0 {
		if _, err := opt.DCE.Run(mod); err != nil { // the members' fused computations
			return fmt.Errorf("cpu: %w", err)
		}
	}
	if err := hlo.Verify(mod); err != nil {
		return fmt.Errorf("cpu: after fusion: %w", err)
	}
	return nil
}

// sequentialComputations lists the computations the backend compiles as
// sequences of kernels: the entry, and what while loops, conditionals and
// calls run, at any depth (XLA's sequential call context). A computation
// also applied elementwise somewhere (a reducer, a comparator, a fusion's
// body: the embedded context) is left out: fusing it would change what
// those callers apply, so it runs instruction by instruction.
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
	return op == hlo.OpWhile || op == hlo.OpCall || op == hlo.OpConditional
}
