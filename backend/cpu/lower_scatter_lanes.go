package cpu

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// A scatter whose combiner is not one recognised op, or that scatters
// several operands at once, runs its combiner as a lane program over
// the elements of one update window at a time: a window's elements are
// distinct operand elements, so folding them together is folding them in
// any order, while windows follow one another in the evaluator's order
// (duplicate indices combine in turn).

// lowerScatterLanes returns a kernel building the whole result (a tuple
// for several operands), or false.
func lowerScatterLanes(in *hlo.Instruction, _ int) (func(ops []*hlo.Literal) (*hlo.Literal, error), bool) {
	if in.Opcode != hlo.OpScatter || len(in.Operands) < 3 || len(in.Operands)%2 != 1 {
		return nil, false
	}
	n := (len(in.Operands) - 1) / 2
	leaves := []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		leaves = in.Shape.Tuple
	}
	if len(leaves) != n || !scatterLanesShapes(in, n, leaves) {
		return nil, false
	}
	xs, is, us := in.Operands[0].Shape, in.Operands[n].Shape, in.Operands[n+1].Shape
	p, ok := planScatterOf(in, xs, is, us, leaves[0])
	if !ok {
		return nil, false
	}
	dRel, sRel := boxOffsets(p.win)
	lanes := max(1, min(len(dRel), reduceLanesBlock))
	prog, ok := compileCombiner(in, n, lanes)
	if !ok {
		return nil, false
	}
	if p.srcBase == nil { // empty windows
		dRel, sRel = nil, nil
	}
	s := &laneScatter{in: in, n: n, lanes: lanes, leaves: leaves, p: p, prog: prog, dRel: dRel, sRel: sRel}
	return s.run, true
}

// scatterLanesShapes reports whether scatter in's n operands, n
// updates and results (leaves) are plain arrays of one type per operand,
// the operands and results of one shape, the updates of another, and its
// indices plain integers.
func scatterLanesShapes(in *hlo.Instruction, n int, leaves []hlo.Shape) bool {
	xs, is, us := in.Operands[0].Shape, in.Operands[n].Shape, in.Operands[n+1].Shape
	if !plainArray(is) || !indexType(is.DType) {
		return false
	}
	for k := range n {
		x, u := in.Operands[k].Shape, in.Operands[n+1+k].Shape
		if !plainArray(x) || !plainArray(u) || !plainArray(leaves[k]) || !slices.Equal(x.Dims, xs.Dims) ||
			!slices.Equal(u.Dims, us.Dims) || u.DType != x.DType || leaves[k].DType != x.DType ||
			!slices.Equal(leaves[k].Dims, x.Dims) {
			return false
		}
	}
	return true
}

// laneScatter is a scatter of n operands whose combiner runs as lane
// program prog, lanes window elements at a time: an update window's
// elements lie at dRel from its start in the result and sRel in the
// updates (both nil for empty windows).
type laneScatter struct {
	in         *hlo.Instruction
	n, lanes   int
	leaves     []hlo.Shape
	p          *scatterPlan
	prog       *laneProg
	dRel, sRel []int
}

// run scatters the updates into copies of the operands, a window after
// another in the evaluator's order.
func (s *laneScatter) run(ops []*hlo.Literal) (*hlo.Literal, error) {
	n, lanes, p, prog, dRel, sRel := s.n, s.lanes, s.p, s.prog, s.dRel, s.sRel
	if len(ops) != 2*n+1 {
		return nil, fmt.Errorf("scatter has %d operands, got %d", 2*n+1, len(ops))
	}
	outs := make([]*hlo.Literal, n)
	for k := range outs {
		outs[k] = hlo.NewLiteral(s.leaves[k])
		copyLanes(outs[k], ops[k], nil)
	}
	if len(dRel) == 0 {
		return scatterResult(s.in, outs), nil
	}
	f := prog.frame()
	read := indexReader(ops[n])
	dst, src := make([]int, lanes), make([]int, lanes)
	for i, sb := range p.srcBase {
		db := p.idx.scatterStart(read, i)
		if db < 0 {
			continue
		}
		for w0 := 0; w0 < len(dRel); w0 += lanes {
			cnt := min(lanes, len(dRel)-w0)
			for j := range lanes {
				w := w0 + min(j, cnt-1) // spare lanes repeat the last element
				dst[j], src[j] = db+dRel[w], sb+sRel[w]
			}
			for k := range n {
				gatherLanes(f.vals[k], outs[k], dst)
				gatherLanes(f.vals[n+k], ops[n+1+k], src)
			}
			if err := prog.run(f); err != nil {
				return nil, err
			}
			for k := range n {
				scatterLanes(outs[k], prog.result(f, k), dst[:cnt])
			}
		}
	}
	return scatterResult(s.in, outs), nil
}

func scatterResult(in *hlo.Instruction, outs []*hlo.Literal) *hlo.Literal {
	if in.Shape.IsTuple() {
		return hlo.MakeTupleLiteral(outs...)
	}
	return outs[0]
}

// boxOffsets lists a box's element offsets on both sides, row-major.
func boxOffsets(b box) (dst, src []int) {
	dst, src = []int{0}, []int{0}
	for k, n := range b.dims {
		nd, ns := make([]int, 0, len(dst)*n), make([]int, 0, len(src)*n)
		for i := range dst {
			for e := range n {
				nd = append(nd, dst[i]+e*b.dstStrides[k])
				ns = append(ns, src[i]+e*b.srcStrides[k])
			}
		}
		dst, src = nd, ns
	}
	return dst, src
}
