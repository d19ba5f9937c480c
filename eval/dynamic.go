package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Dynamic shapes and the stateful rng counter.

func init() {
	register(evalDynamicReshape, hlo.OpDynamicReshape)
	register(evalRngGetAndUpdateState, hlo.OpRngGetAndUpdateState)
}

// evalDynamicReshape reshapes the operand's live elements (row-major over
// the live sizes) to the sizes its s32 operands give, which become the
// result's dynamic sizes. A literal stores a dynamic dimension's bound's
// worth of elements, so live elements are read from and written to their
// positions within the bounds.
func evalDynamicReshape(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	out := hlo.NewLiteral(in.Shape)
	sizes := make([]int64, in.Shape.Rank())
	n := int64(1)
	for d := range sizes {
		sizes[d] = ops[d+1].GetInt64(0)
		if sizes[d] < 0 || sizes[d] > in.Shape.Dims[d] {
			return nil, fmt.Errorf("dynamic-reshape size %d of dimension %d is outside [0, %d]", sizes[d], d, in.Shape.Dims[d])
		}
		n *= sizes[d]
		if in.Shape.IsDynamicDim(d) {
			if err := out.SetDynamicSize(d, sizes[d]); err != nil {
				return nil, err
			}
		} else if sizes[d] != in.Shape.Dims[d] {
			return nil, fmt.Errorf("dynamic-reshape gives static dimension %d size %d, not %d", d, sizes[d], in.Shape.Dims[d])
		}
	}
	live := make([]int64, x.Shape().Rank())
	m := int64(1)
	for d := range live {
		live[d] = x.DynamicSize(d)
		m *= live[d]
	}
	if m != n {
		return nil, fmt.Errorf("dynamic-reshape of %d live elements to sizes %v (%d elements)", m, sizes, n)
	}
	src, dst := make([]int64, len(live)), make([]int64, len(sizes))
	for range n {
		setFrom(out, out.LinearIndex(dst), x, x.LinearIndex(src))
		nextIndex(src, live)
		nextIndex(dst, sizes)
	}
	return out, nil
}

// evalRngGetAndUpdateState returns the evaluator's 128-bit rng state (two
// u64 words, starting at {Seed, 0}) and advances its low word by delta,
// as XLA's stateful rng expansion does.
func evalRngGetAndUpdateState(e *Evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	delta, _ := in.Int("delta")
	state := e.RngGetAndUpdateState(delta)
	out := hlo.NewLiteral(in.Shape)
	out.SetUint64(0, state[0])
	out.SetUint64(1, state[1])
	return out, nil
}

// RngGetAndUpdateState returns e's 128-bit rng state (seeded from Seed
// at first use) and advances its low word by delta, as the instruction
// rng-get-and-update-state does; compiled backends call it so that
// their runs share the evaluator's state.
func (e *Evaluator) RngGetAndUpdateState(delta int64) [2]uint64 {
	return e.rngState.GetAndUpdate(e.Seed, delta)
}
