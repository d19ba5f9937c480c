package cpu

import (
	"math/bits"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Branch sections: two independent branches of a computation run at once,
// one on a pool worker and one on the calling goroutine. A bidirectional
// RNN unrolled one direction after the other is two chains of small steps
// (a 2×128·128×512 product and a cell, a few microseconds each) that meet
// only where their outputs are joined; splitting each step's kernel across
// the threads pays a handshake per step for a few microseconds of work,
// running the chains side by side pays one for the whole sequence.
// (TensorFlow's executor runs independent nodes on its inter-op threads;
// here the pairing is decided at compile time, so buffers stay assigned.)
//
// A section is found at a join: an instruction two of whose operands
// depend on work the other does not. Its branch steps are those the one
// operand depends on and the other does not, and the other way round;
// the section spans the schedule from the first of them to the join. Its
// other steps run before the branches when a branch step depends on
// them, after the branches otherwise. Buffers: every value a section's
// step defines or reads lives until the join (assign), so no two values
// touched in a section share memory and nothing is computed in place over
// a value the other branch may still read.

// section is steps [from, to) of a schedule run as pre, then the two
// branches at once, then post (each in schedule order).
type section struct {
	from, to int
	pre      []int
	branch   [2][]int
	post     []int
}

// These estimated costs (ns) make a section worth
// its handshake: each branch at least minBranchCost, and the section's
// time (its longer branch on one thread, the rest as before) at most
// sectionGain of the time its steps take one after another.
const (
	minBranchCost = 20_000
	sectionGain   = 0.8
	// splitCost is the least estimated cost of a step whose kernel
	// splits across the threads when it runs alone.
	splitCost = 50_000
	// maxSectionSteps bounds the schedules searched (the search keeps a
	// bit set of ancestors per step).
	maxSectionSteps = 8192
	// maxSectionBytes bounds the values a section defines: they all live
	// until its end, where the schedule would have reused their memory.
	maxSectionBytes = 32 << 20
	// maxSectionSpan bounds a section's steps: its values all live at
	// once, and placing n buffers alive together in the arena takes n²
	// (two chains of 650 steps, a section of 3900: compiling 58 → 180 ms;
	// of 300 steps, 1800: 29 → 57 ms).
	maxSectionSpan = 2048
)

// anySection makes every join with two branches of some work a section,
// whatever the gain: the backend's differential fuzzing runs random
// modules, whose steps are all tiny, through sections this way.
var anySection = false

// findSections picks the sections of a schedule of steps for an
// executable of threads threads: non-overlapping, in schedule order.
func findSections(order []*hlo.Instruction, steps []step, threads int) []section {
	n := len(order)
	if threads < 2 || n < 4 || n > maxSectionSteps {
		return nil
	}
	pos := make(map[*hlo.Instruction]int, n)
	for i, in := range order {
		pos[in] = i
	}
	anc := ancestors(order, pos)
	cost := make([]float64, n)
	for i, in := range order {
		cost[i] = stepCost(in)
	}
	var out []section
	free := 0 // steps before it belong to an accepted section
	for j, in := range order {
		if len(in.Operands) < 2 || !safeInSection(in, steps[j]) {
			continue
		}
		a, b, feeds, ok := joinBranches(in, pos, anc, cost)
		if !ok {
			continue
		}
		if s, ok := newSection(a, b, feeds, j, cost, order, steps); ok && s.from >= free {
			out = append(out, s)
			free = s.to
		}
	}
	return out
}

// bitset is a set of schedule positions.
type bitset []uint64

func (s bitset) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s bitset) set(i int)      { s[i/64] |= 1 << (i % 64) }

func (s bitset) count() int {
	n := 0
	for _, x := range s {
		n += bits.OnesCount64(x)
	}
	return n
}

// each calls f on the members in increasing order.
func (s bitset) each(f func(i int)) {
	for w, x := range s {
		for x != 0 {
			f(w*64 + bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
}

// ancestors returns, per step, the set of steps its value depends on,
// itself included.
func ancestors(order []*hlo.Instruction, pos map[*hlo.Instruction]int) []bitset {
	words := (len(order) + 63) / 64
	anc := make([]bitset, len(order))
	for i, in := range order {
		s := make(bitset, words)
		for _, o := range in.Operands {
			for w, x := range anc[pos[o]] {
				s[w] |= x
			}
		}
		s.set(i)
		anc[i] = s
	}
	return anc
}

// joinBranches returns the two operands of a join whose own work (the
// steps that operand depends on and no other operand does) is largest,
// as those sets of steps, when both cost at least minBranchCost, and the
// steps either of them depends on (each a branch step's ancestor: the
// operand itself is in its branch).
func joinBranches(in *hlo.Instruction, pos map[*hlo.Instruction]int, anc []bitset, cost []float64) (a, b, feeds bitset, ok bool) {
	// Two operands must be computed (a parameter or constant is one
	// step with nothing before it): the cheap test that keeps a chain's
	// every step (h·w + x) from costing a walk over the chain so far.
	computed := 0
	for _, o := range in.Operands {
		if anc[pos[o]].count() > 1 {
			computed++
		}
	}
	if computed < 2 {
		return nil, nil, nil, false
	}
	k := len(in.Operands)
	words := len(anc[0])
	// others[i]: the union of the ancestors of every operand but i, from
	// unions of the operands before and after it.
	before, after := make([]bitset, k+1), make([]bitset, k+1)
	before[0], after[k] = make(bitset, words), make(bitset, words)
	for i := range k {
		before[i+1] = union(before[i], anc[pos[in.Operands[i]]])
	}
	for i := k - 1; i >= 0; i-- {
		after[i] = union(after[i+1], anc[pos[in.Operands[i]]])
	}
	var best [2]bitset
	var bestCost [2]float64
	var bestOp [2]int
	for i, o := range in.Operands {
		own := make(bitset, words)
		for w, x := range anc[pos[o]] {
			own[w] = x &^ (before[i][w] | after[i+1][w])
		}
		c := 0.0
		own.each(func(s int) { c += cost[s] })
		switch {
		case c > bestCost[0]:
			best[1], bestCost[1], bestOp[1] = best[0], bestCost[0], bestOp[0]
			best[0], bestCost[0], bestOp[0] = own, c, pos[o]
		case c > bestCost[1]:
			best[1], bestCost[1], bestOp[1] = own, c, pos[o]
		}
	}
	if bestCost[1] < minBranchCost && !(anySection && bestCost[1] > 0) {
		return nil, nil, nil, false
	}
	return best[0], best[1], union(anc[bestOp[0]], anc[bestOp[1]]), true
}

func union(a, b bitset) bitset {
	u := slices.Clone(a)
	for w, x := range b {
		u[w] |= x
	}
	return u
}

// newSection builds the section of branches a and b ending at the join
// at schedule position join, if every step in it may run in a section
// and running the branches at once pays.
func newSection(a, b, feeds bitset, join int, cost []float64, order []*hlo.Instruction, steps []step) (section, bool) {
	from := join
	for _, br := range []bitset{a, b} {
		br.each(func(i int) { from = min(from, i) })
	}
	if join-from > maxSectionSpan {
		return section{}, false
	}
	s := section{from: from, to: join}
	var seq, pre, post float64
	var branchCost [2]float64
	var bytes int64
	for i := from; i < join; i++ {
		if bytes += max(arrayBytes(order[i].Shape), 0); !safeInSection(order[i], steps[i]) || bytes > maxSectionBytes {
			return section{}, false
		}
		c := cost[i]
		seq += aloneCost(c)
		switch {
		case a.has(i):
			s.branch[0] = append(s.branch[0], i)
			branchCost[0] += c
		case b.has(i):
			s.branch[1] = append(s.branch[1], i)
			branchCost[1] += c
		case feeds.has(i):
			s.pre = append(s.pre, i)
			pre += aloneCost(c)
		default:
			s.post = append(s.post, i)
			post += aloneCost(c)
		}
	}
	together := pre + max(branchCost[0], branchCost[1]) + post
	return s, anySection || together <= sectionGain*seq
}

// aloneCost is a step's estimated time when it runs by itself: a large
// step's kernel splits across the threads (two, on the machines this was
// tuned on).
func aloneCost(c float64) float64 {
	if c >= splitCost {
		return c / 2
	}
	return c
}

// safeInSection reports whether a step may run beside another: not one
// with effects or order outside its value (random state, collectives,
// I/O), not control flow (its bodies run on the execution's state), not
// a fusion of any of those, and not one left to the evaluator.
func safeInSection(in *hlo.Instruction, s step) bool {
	return s.how != evaluatorLowering && pureInstruction(in)
}

func pureInstruction(in *hlo.Instruction) bool {
	if in.Opcode.Has(hlo.SideEffecting) || in.Opcode.Has(hlo.Collective) || in.Opcode.Has(hlo.Async) {
		return false
	}
	switch in.Opcode {
	case hlo.OpWhile, hlo.OpConditional, hlo.OpCall, hlo.OpCustomCall, hlo.OpRng, hlo.OpRngBitGenerator,
		hlo.OpRngGetAndUpdateState, hlo.OpAfterAll:
		return false
	case hlo.OpFusion:
		for _, c := range in.CalledComputations() {
			for _, x := range c.Instructions {
				if !pureInstruction(x) {
					return false
				}
			}
		}
	}
	return true
}

// stepCost estimates a step's time on one thread in nanoseconds: a fixed
// cost per kernel, the elements it touches, and the arithmetic of its
// products and convolutions at about 100 GFLOP/s.
func stepCost(in *hlo.Instruction) float64 {
	switch in.Opcode {
	case hlo.OpParameter, hlo.OpConstant, hlo.OpGetTupleElement, hlo.OpTuple, hlo.OpBitcast:
		return 0
	}
	c := 300 + 0.5*float64(elementCount(in.Shape))
	return c + productFlops(in)/100
}

// productFlops is 2·(result elements)·(reduced length) of the dots and
// convolutions an instruction is or fuses.
func productFlops(in *hlo.Instruction) float64 {
	switch in.Opcode {
	case hlo.OpDot:
		k := 1.0
		if dims, ok := in.Ints("lhs_contracting_dims"); ok {
			for _, d := range dims {
				k *= float64(in.Operands[0].Shape.Dims[d])
			}
		}
		return 2 * float64(elementCount(in.Shape)) * k
	case hlo.OpConvolution:
		d := in.ConvDims()
		if d == nil || len(in.Operands) < 2 {
			return 0
		}
		kernel := in.Operands[1].Shape
		return 2 * float64(elementCount(in.Shape)) * float64(elementCount(kernel)) / float64(max(kernel.Dims[d.KernelOutput], 1))
	case hlo.OpFusion:
		f := 0.0
		for _, c := range in.CalledComputations() {
			for _, x := range c.Instructions {
				f += productFlops(x)
			}
		}
		return f
	}
	return 0
}
