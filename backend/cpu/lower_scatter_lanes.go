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
	if len(leaves) != n {
		return nil, false
	}
	xs, is, us := in.Operands[0].Shape, in.Operands[n].Shape, in.Operands[n+1].Shape
	if !plainArray(is) || !indexType(is.DType) {
		return nil, false
	}
	for k := range n {
		x, u := in.Operands[k].Shape, in.Operands[n+1+k].Shape
		if !plainArray(x) || !plainArray(u) || !plainArray(leaves[k]) || !slices.Equal(x.Dims, xs.Dims) ||
			!slices.Equal(u.Dims, us.Dims) || u.DType != x.DType || leaves[k].DType != x.DType ||
			!slices.Equal(leaves[k].Dims, x.Dims) {
			return nil, false
		}
	}
	p, ok := planScatterOf(in, xs, is, us, leaves[0])
	if !ok {
		return nil, false
	}
	dRel, sRel := boxOffsets(p.win)
	lanes := max(1, min(len(dRel), reduceLanesBlock))
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
	if p.srcBase == nil { // empty windows
		dRel, sRel = nil, nil
	}
	return func(ops []*hlo.Literal) (*hlo.Literal, error) {
		if len(ops) != 2*n+1 {
			return nil, fmt.Errorf("scatter has %d operands, got %d", 2*n+1, len(ops))
		}
		outs := make([]*hlo.Literal, n)
		for k := range outs {
			outs[k] = hlo.NewLiteral(leaves[k])
			copyLanes(outs[k], ops[k], nil)
		}
		if len(dRel) == 0 {
			return scatterResult(in, outs), nil
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
		return scatterResult(in, outs), nil
	}, true
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
