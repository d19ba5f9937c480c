package cpu

import (
	"context"
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// subCompiler is what the compilation of a module shares with the
// compilations of the computations its control flow calls (while bodies
// and conditions, branches, calls, fusions no fused kernel takes), and
// they with theirs: each called computation is compiled once, and every
// instruction calling it, at any depth, runs that one executable.
// Compiling per call site would compile a computation once per path to
// it through the call graph: 2^30 times for 31 computations each calling
// the next twice (an executable is safe to run from many sites: its
// frames and outputs come from pools). Compilation is sequential, so the
// maps need no lock.
type subCompiler struct {
	ctx context.Context // the module's compilation's (nil: none)
	// origin maps a computation of a module made for a called computation
	// to the computation it was cloned from, in the module first compiled:
	// the one identity the copies of a computation share.
	origin map[*hlo.Computation]*hlo.Computation
	done   map[subKey]subResult
}

// subKey identifies a compiled computation: its origin, and whether it
// was compiled without fusion (a fusion's body).
type subKey struct {
	c        *hlo.Computation
	noFusion bool
}

// subResult is a compiled computation, or why it could not be compiled
// (its callers then run it on the evaluator).
type subResult struct {
	x   *Executable
	err error
}

func newSubCompiler(ctx context.Context) *subCompiler {
	return &subCompiler{ctx: ctx, origin: map[*hlo.Computation]*hlo.Computation{}, done: map[subKey]subResult{}}
}

// originOf is the computation c was cloned from, or c itself.
func (sc *subCompiler) originOf(c *hlo.Computation) *hlo.Computation {
	if o, ok := sc.origin[c]; ok {
		return o
	}
	return c
}

// moduleOf returns a module with c, a computation of m, as its entry:
// a copy of c and the computations it reaches, nothing else of m (so
// that a module with many called computations is not copied whole for
// each), with their origins recorded.
func (sc *subCompiler) moduleOf(m *hlo.Module, c *hlo.Computation) (*hlo.Module, error) {
	if !slices.Contains(m.Computations, c) {
		return nil, fmt.Errorf("computation %s not in module %s", c.Name, m.Name)
	}
	reached := map[*hlo.Computation]bool{}
	var walk func(c *hlo.Computation)
	walk = func(c *hlo.Computation) {
		if c == nil || reached[c] {
			return
		}
		reached[c] = true
		for _, in := range c.Instructions {
			for _, cc := range in.CalledComputations() {
				walk(cc)
			}
		}
	}
	walk(c)
	part := *m
	part.Computations = slices.DeleteFunc(slices.Clone(m.Computations), func(mc *hlo.Computation) bool { return !reached[mc] })
	part.Entry, part.EntryLayout = c, nil
	sub := part.Clone()
	sub.Name = m.Name + "." + c.Name
	for i, pc := range part.Computations {
		sc.origin[sub.Computations[i]] = sc.originOf(pc)
	}
	return sub, nil
}
