package cpu

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// A reduce whose reducer is not one recognised op (argmax's pair of
// value and index, a variadic sum-and-max) runs its reducer as a lane
// program over a block of output positions at a time: each lane folds
// one output position, in the evaluator's order (the reduced dimensions
// row-major, in the order the instruction lists them, from the init
// values), so results match it bit for bit.

// reduceLanesBlock is the most output positions one lane program folds
// together: enough to amortise a kernel call per instruction, few enough
// that a block's values stay in L1.
const reduceLanesBlock = 256

// lowerReduceLanes returns a kernel for any reduce whose reducer
// compiles to a lane program; it builds its own result (a tuple for
// several inputs).
func lowerReduceLanes(in *hlo.Instruction, threads int) (func(ops []*hlo.Literal) (*hlo.Literal, error), bool) {
	rp, ok := planVariadic(in)
	if !ok {
		return nil, false
	}
	n, leaves, kept, red := rp.n, rp.leaves, rp.kept, rp.red
	lanes := max(1, min(len(kept), reduceLanesBlock))
	prog, ok := compileCombiner(in, n, lanes)
	if !ok {
		return nil, false
	}
	r := &reduceLanes{n: n, outs: len(kept), steps: len(red), prog: prog, leaves: leaves, tuple: in.Shape.IsTuple(),
		threads: threads, kept: kept, red: red}
	return r.run, true
}

// compileCombiner compiles in's to_apply, which combines its first n
// operands pairwise, as a lane program of lanes lanes: 2n parameters and
// n results, of operand k's type at k and n+k.
func compileCombiner(in *hlo.Instruction, n, lanes int) (*laneProg, bool) {
	prog, ok := compileLanes(in.Computation("to_apply"), lanes)
	if !ok || len(prog.params) != 2*n || len(prog.roots) != n {
		return nil, false
	}
	for k := range n {
		t := in.Operands[k].Shape.DType
		if prog.params[k].DType != t || prog.params[n+k].DType != t || prog.shapeOf(prog.roots[k]).DType != t {
			return nil, false
		}
	}
	return prog, true
}

// variadicPlan is a variadic reduce's layout: n inputs shaped like x, the
// results' shapes (leaves), and the operand offsets output o folds,
// kept[o] + red[s], s in the evaluator's order (the reduced dimensions
// row-major in the order the instruction lists them).
type variadicPlan struct {
	n         int
	x         hlo.Shape
	leaves    []hlo.Shape
	kept, red []int
}

// planVariadic checks that in is a reduce of n plain arrays of one shape,
// with scalar inits and results of their types, and lays it out.
func planVariadic(in *hlo.Instruction) (variadicPlan, bool) {
	if in.Opcode != hlo.OpReduce || len(in.Operands) == 0 || len(in.Operands)%2 != 0 {
		return variadicPlan{}, false
	}
	n := len(in.Operands) / 2
	leaves := []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		leaves = in.Shape.Tuple
	}
	x := in.Operands[0].Shape
	if len(leaves) != n || !plainArray(x) {
		return variadicPlan{}, false
	}
	for i := range n {
		s, init := in.Operands[i].Shape, in.Operands[n+i].Shape
		if !plainArray(s) || !slices.Equal(s.Dims, x.Dims) || !plainArray(init) || init.Rank() != 0 ||
			init.DType != s.DType || !plainArray(leaves[i]) || leaves[i].DType != s.DType {
			return variadicPlan{}, false
		}
	}
	dims := in.Dimensions()
	seen := make([]bool, x.Rank())
	for _, d := range dims {
		if d < 0 || int(d) >= x.Rank() || seen[d] {
			return variadicPlan{}, false
		}
		seen[d] = true
	}
	keptDims := otherDims(x.Rank(), dims)
	for i := range n {
		if leaves[i].Rank() != len(keptDims) {
			return variadicPlan{}, false
		}
		for j, d := range keptDims {
			if leaves[i].Dims[j] != x.Dims[d] {
				return variadicPlan{}, false
			}
		}
	}
	st := hlo.RowMajorStrides(x.Dims)
	return variadicPlan{n: n, x: x, leaves: leaves, kept: offsetTable(keptDims, x.Dims, st), red: offsetTable(dims, x.Dims, st)}, true
}

// shapeOf is value v's shape over lanes.
func (p *laneProg) shapeOf(v int) hlo.Shape {
	if v < len(p.params) {
		return p.params[v]
	}
	return p.vals[v-len(p.params)]
}

// reduceLanes folds outs output positions over steps each: at(o, s) is
// the operand offset output o folds at step s, or -1 to skip the step
// (a window over padding).
type reduceLanes struct {
	n           int
	outs, steps int
	at          func(o, s int) int
	// kept and red, for a reduce, stand for at: kept[o] + red[s].
	kept, red []int
	prog      *laneProg
	leaves    []hlo.Shape
	tuple     bool
	threads   int
}

func (r *reduceLanes) run(ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) != 2*r.n {
		return nil, fmt.Errorf("reduce has %d operands, got %d", 2*r.n, len(ops))
	}
	outs := make([]*hlo.Literal, r.n)
	for i := range outs {
		outs[i] = hlo.NewLiteral(r.leaves[i])
	}
	lanes := r.prog.lanes
	blocks := (r.outs + lanes - 1) / lanes
	threads := max(1, min(r.threads, blocks))
	if r.outs*r.steps < 1<<14 {
		threads = 1
	}
	errs := make([]error, threads)
	kernels.Parallel(threads, func(t int) {
		errs[t] = r.blocks(ops, outs, t*blocks/threads, (t+1)*blocks/threads)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if r.tuple {
		return hlo.MakeTupleLiteral(outs...), nil
	}
	return outs[0], nil
}

// blocks folds output blocks [from, to).
func (r *reduceLanes) blocks(ops, outs []*hlo.Literal, from, to int) error {
	p, n, lanes := r.prog, r.n, r.prog.lanes
	f := p.frame()
	tmp := make([]*hlo.Literal, n)
	for i := range tmp {
		tmp[i] = hlo.NewLiteral(p.params[i])
	}
	offs, zero, pos := make([]int, lanes), make([]int, lanes), make([]int, lanes)
	valid := make([]bool, lanes)
	for b := from; b < to; b++ {
		o0 := b * lanes
		cnt := min(lanes, r.outs-o0)
		for j := range pos {
			pos[j] = o0 + min(j, cnt-1) // spare lanes repeat the last position
		}
		for i := range n {
			gatherLanes(f.vals[i], ops[n+i], zero)
		}
		for s := range r.steps {
			if r.at == nil {
				for j, o := range pos {
					offs[j] = r.kept[o] + r.red[s]
				}
				if err := r.step(f, tmp, ops, offs, nil); err != nil {
					return err
				}
				continue
			}
			some, all := -1, true
			for j, o := range pos {
				offs[j] = r.at(o, s)
				valid[j] = offs[j] >= 0
				if valid[j] {
					some = offs[j]
				} else {
					all = false
				}
			}
			if some < 0 {
				continue
			}
			for j := range offs {
				if !valid[j] {
					offs[j] = some // computed, then dropped
				}
			}
			mask := valid
			if all {
				mask = nil
			}
			if err := r.step(f, tmp, ops, offs, mask); err != nil {
				return err
			}
		}
		for i := range n {
			scatterLanes(outs[i], f.vals[i], pos[:cnt])
		}
	}
	return nil
}

// step folds the inputs at offs into the accumulators of the lanes mask
// keeps (all for nil).
func (r *reduceLanes) step(f *laneFrame, tmp, ops []*hlo.Literal, offs []int, mask []bool) error {
	p, n := r.prog, r.n
	for i := range n {
		gatherLanes(f.vals[n+i], ops[i], offs)
	}
	if err := p.run(f); err != nil {
		return err
	}
	for i := range n { // through tmp: a result may be another accumulator
		copyLanes(tmp[i], p.result(f, i), nil)
	}
	for i := range n {
		copyLanes(f.vals[i], tmp[i], mask)
	}
	return nil
}

// lowerReduceWindowLanes returns a kernel for a reduce-window whose
// reducer compiles to a lane program: each lane folds one output
// position over its window in row-major order, skipping padding and
// holes, as the evaluator does.
func lowerReduceWindowLanes(in *hlo.Instruction, threads int) (func(ops []*hlo.Literal) (*hlo.Literal, error), bool) {
	if in.Opcode != hlo.OpReduceWindow || len(in.Operands) == 0 || len(in.Operands)%2 != 0 {
		return nil, false
	}
	n := len(in.Operands) / 2
	leaves := []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		leaves = in.Shape.Tuple
	}
	w := in.Window()
	x := in.Operands[0].Shape
	if len(leaves) != n || w == nil || len(w.Dims) != x.Rank() {
		return nil, false
	}
	for i := range n {
		s, init := in.Operands[i].Shape, in.Operands[n+i].Shape
		if !plainArray(s) || !slices.Equal(s.Dims, x.Dims) || !plainArray(init) || init.Rank() != 0 ||
			init.DType != s.DType || !plainArray(leaves[i]) || leaves[i].DType != s.DType ||
			!slices.Equal(leaves[i].Dims, leaves[0].Dims) || leaves[i].Rank() != x.Rank() {
			return nil, false
		}
	}
	st := hlo.RowMajorStrides(x.Dims)
	out := leaves[0].Dims
	var tabs [][]int
	var win []int
	steps := 1
	for d, wd := range w.Dims {
		if wd.Reversal || wd.Size < 0 {
			return nil, false
		}
		tabs = append(tabs, windowTable(wd, x.Dims[d], out[d], st[d]))
		win = append(win, int(wd.Size))
		steps *= int(wd.Size)
	}
	outs := int(leaves[0].NumElements())
	lanes := max(1, min(outs, reduceLanesBlock))
	prog, ok := compileCombiner(in, n, lanes)
	if !ok {
		return nil, false
	}
	at := func(o, s int) int {
		off := 0
		for d := len(win) - 1; d >= 0; d-- {
			od, wd := o%int(out[d]), s%win[d]
			o, s = o/int(out[d]), s/win[d]
			v := tabs[d][od*win[d]+wd]
			if v < 0 {
				return -1
			}
			off += v
		}
		return off
	}
	r := &reduceLanes{n: n, outs: outs, steps: steps, at: at, prog: prog, leaves: leaves,
		tuple: in.Shape.IsTuple(), threads: threads}
	return r.run, true
}
