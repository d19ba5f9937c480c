package cpu

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// A cheap producer read by several fusions may be computed in each
// (copied) rather than stored and read back, but only when that saves
// the store: if some reader cannot compute it in its own fusion (a
// convolution, a dot, a pad, the result tuple) it is stored for that
// reader anyway, and the fusions read it back rather than recompute it
// from its own operands (XLA's rule: a producer is duplicated only if it
// fuses into all its consumers, InstructionFusion's globally unfusible
// set). In a ResNet each block's output relu(x + conv + b) is read by the
// next block's convolution and by its residual add: copied, every
// residual add recomputed the whole chain of earlier blocks from their
// convolutions' outputs, reading k+1 full tensors in the k-th block, and
// no convolution but the last could fold into its epilogue (it had
// several readers). A copy also copies its own cheap producers and can
// leave a costly one computed on its own in between (a layer norm's
// division by its row deviation, when a residual add copied the multiply
// after it).

// fuseGraph is what loop fusion knows of a computation while it grows
// fusions, last instruction first.
type fuseGraph struct {
	users map[*hlo.Instruction][]*hlo.Instruction
	// stored are the values that will be in memory whatever the fusions
	// hold: read by a reader that cannot fuse them, or a parameter of a
	// fusion already grown.
	stored map[*hlo.Instruction]bool
	taken  map[*hlo.Instruction]bool // members of a fusion, not copies
}

// storedValues are c's values some reader stores: c's result, and values
// read by an instruction that cannot compute them in its own fusion.
func storedValues(c *hlo.Computation, users map[*hlo.Instruction][]*hlo.Instruction) map[*hlo.Instruction]bool {
	stored := map[*hlo.Instruction]bool{}
	if c.Root != nil {
		stored[c.Root] = true
	}
	for _, in := range c.Instructions {
		if slices.ContainsFunc(users[in], func(u *hlo.Instruction) bool { return !fusesOperands(u) }) {
			stored[in] = true
		}
	}
	return stored
}

// fusesOperands reports whether loop fusion may compute u's operands in
// u's fusion: u is an elementwise op or row reduction a fusion computes,
// or a scalar splat. (A view reads a computed operand stored: see
// anyView.)
func fusesOperands(u *hlo.Instruction) bool {
	_, isReduce := tile.RowReduce(u)
	return fusible(u) || isReduce || intRoot(u) || scalarSplat(u) && !viewOp(u)
}

// markParameters records that g's fusion reads its parameters stored: a
// value a member reads from outside the fusion is in memory, and a later
// fusion reads it rather than recomputing it or taking it as its own
// (which would leave g reading a value nothing computes any more: the
// bias add of a projection shortcut was left on its own, unfused, when
// one fusion copied its reader and the next took it).
func (fg *fuseGraph) markParameters(g group) {
	owned := map[*hlo.Instruction]bool{}
	for _, in := range g.members {
		owned[in] = true
	}
	for _, in := range g.members {
		for _, o := range in.Operands {
			if !owned[o] {
				fg.stored[o] = true
			}
		}
	}
}

// copyPays reports whether copying cheap producer o into a second fusion
// (grow) saves storing it: only when nothing o reads is a computation
// that would have to be stored instead for the copy to read. A copy
// reads its non-cheap operands as parameters, so they could no longer be
// computed inside o's own fusion; an LSTM step's cell state c' = f·c + i·g,
// read by the step's h' = o·tanh(c') and by the next step, copied into
// h's fusion would make f, i and g (logistic and tanh) separate passes,
// and the copy's own cheap operands copied in turn (the previous steps'
// cells) would repeat the recurrence in every step's fusion.
func (fg *fuseGraph) copyPays(o *hlo.Instruction) bool {
	return fg.copyPaysWithin(o, maxCopied)
}

// copyPaysWithin is copyPays for a copy of at most budget instructions:
// cheap operands are copied too, so what they read counts as well.
func (fg *fuseGraph) copyPaysWithin(o *hlo.Instruction, budget int) bool {
	if fg.stored[o] {
		return false // read back: a copy would recompute it for nothing
	}
	for _, p := range o.Operands {
		switch {
		case !fusible(p) || scalarSplat(p) || viewOp(p) || fg.stored[p] || anyView(fg.users[p]):
			// stored (or free) whether or not o is copied
		case cheap(p) && budget > 1 && fg.copyPaysWithin(p, budget-1):
		default:
			return false
		}
	}
	return true
}
