package cpu

import (
	"sync"

	"github.com/axle-ml/axle/hlo"
)

// A sort whose comparator is more than one compare (by absolute value,
// lexicographic over two keys) runs the comparator as a one-lane program
// (lanes.go) per comparison, inside the same stable merge sort and the
// same three-way function as the evaluator, so every row lands in the
// evaluator's order.

// sortLanes compiles the comparator of sort in: parameters 2k and 2k+1
// are operand k's two elements, the result one pred.
func sortLanes(in *hlo.Instruction) (*laneProg, bool) {
	p, ok := compileLanes(in.Computation("to_apply"), 1)
	if !ok || len(p.params) != 2*len(in.Operands) || len(p.roots) != 1 || p.shapeOf(p.roots[0]).DType != hlo.Pred {
		return nil, false
	}
	for k, o := range in.Operands {
		if p.params[2*k].DType != o.Shape.DType || p.params[2*k+1].DType != o.Shape.DType {
			return nil, false
		}
	}
	return p, true
}

func sortRowsLanes(pl *sortPlan, outs, ops []*hlo.Literal, rows int) error {
	var first firstError
	splitRange(rows, rows*pl.n*len(ops)*len(pl.lanes.steps), pl.threads, func(lo, hi int) {
		cmp, err := laneComparator(pl.lanes, ops)
		perm := make([]int, pl.n)
		for r := lo; r < hi && *err == nil; r++ {
			pl.sortRow(outs, ops, perm, r, cmp)
		}
		first.set(*err)
	})
	return first.err
}

// laneComparator is the three-way order (threeWay) of the elements of
// ops that one-lane program lp compares, taking one operand per pair of
// its parameters, with a frame of its own. The first error lp returns
// stands in err; comparisons after it say "not before".
func laneComparator(lp *laneProg, ops []*hlo.Literal) (cmp func(a, b int) int, err *error) {
	f := lp.frame()
	res := lp.result(f, 0).Data().([]bool)
	err = new(error)
	at := make([]int, 1)
	less := func(a, b int) bool {
		for k, o := range ops {
			at[0] = a
			gatherLanes(f.vals[2*k], o, at)
			at[0] = b
			gatherLanes(f.vals[2*k+1], o, at)
		}
		if e := lp.run(f); e != nil {
			*err = e
			return false
		}
		return res[0]
	}
	return threeWay(less), err
}

// firstError keeps the first error of several workers.
type firstError struct {
	mu  sync.Mutex
	err error
}

// set records err unless nil or another came first.
func (f *firstError) set(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

// threeWay turns a comparator's "a before b" into the order that
// slices.SortStableFunc takes: -1 when a goes before b, else 0. The
// evaluator answers 1 when b goes before a, asking the comparator again;
// the stable sort only ever tests cmp(a, b) < 0 (insertion sort and
// symMerge), so its outcomes, and every row, are the same with one call
// of the comparator a comparison instead of up to two
// (TestThreeWayOneCall holds this against the two-call form), and an
// ONNX TopK's comparator costs half as much.
func threeWay(less func(a, b int) bool) func(a, b int) int {
	return func(a, b int) int {
		if less(a, b) {
			return -1
		}
		return 0
	}
}
