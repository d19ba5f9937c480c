package cpu

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Control flow: the computations a while, conditional or call runs are
// compiled like the entry computation, by the same compiler (lowered,
// scheduled, with an arena of their own; the module's fusion passes
// fused them already), and the instruction's kernel drives them. A while
// loop recycles each iteration's state into its body's output pool once
// the next iteration has read it, so a loop allocates nothing after its
// first iterations.

// lowerControl compiles the computations in calls and returns its kernel.
func (c *compiler) lowerControl(in *hlo.Instruction) (kernel, bool) {
	switch in.Opcode {
	case hlo.OpWhile:
		cond, err1 := c.called(in.Computation("condition"))
		body, err2 := c.called(in.Computation("body"))
		if err1 != nil || err2 != nil {
			return nil, false
		}
		return func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return runWhile(ev, cond, body, ops[0])
		}, true
	case hlo.OpCall:
		sub, err := c.called(in.Computation("to_apply"))
		if err != nil {
			return nil, false
		}
		return func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return sub.runSub(ev, ops...)
		}, true
	case hlo.OpConditional:
		return c.lowerConditional(in)
	}
	return nil, false
}

// runWhile runs a loop under the calling execution's stop flag (ev's),
// polled every iteration: a loop that never ends stops when its
// execution is cancelled.
func runWhile(ev *runState, cond, body *Executable, state *hlo.Literal) (*hlo.Literal, error) {
	var owned *hlo.Literal // the state, when it is a body result
	for {
		if ev.Interrupt != nil && ev.Interrupt.Load() {
			return nil, fmt.Errorf("while loop: %w", ErrInterrupted)
		}
		p, err := cond.runSub(ev, state)
		if err != nil {
			return nil, fmt.Errorf("while condition: %w", err)
		}
		more := p.GetBool(0)
		cond.Recycle(p)
		if !more {
			return state, nil
		}
		next, err := body.runSub(ev, state)
		if err != nil {
			return nil, fmt.Errorf("while body: %w", err)
		}
		if owned != nil {
			body.Recycle(owned) // the body has read it
		}
		state, owned = next, next
	}
}

// lowerConditional: a pred picks the true or false computation, an index
// a branch (out-of-range indices the last one, as the evaluator does).
func (c *compiler) lowerConditional(in *hlo.Instruction) (kernel, bool) {
	var comps []*hlo.Computation
	pred := in.Operands[0].Shape.DType == hlo.Pred
	if pred {
		comps = []*hlo.Computation{in.Computation("false_computation"), in.Computation("true_computation")}
	} else {
		v, _ := in.Attr("branch_computations")
		comps, _ = v.([]*hlo.Computation)
	}
	if len(comps) == 0 {
		return nil, false
	}
	branches := make([]*Executable, len(comps))
	for i, comp := range comps {
		b, err := c.called(comp)
		if err != nil {
			return nil, false
		}
		branches[i] = b
	}
	return func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		var i int
		if pred {
			if ops[0].GetBool(0) {
				return branches[1].runSub(ev, ops[1])
			}
			return branches[0].runSub(ev, ops[2])
		}
		i = int(ops[0].GetInt64(0))
		if i < 0 || i >= len(branches) {
			i = len(branches) - 1
		}
		return branches[i].runSub(ev, ops[1+i])
	}, true
}

// fusionBody compiles a fusion that no fused kernel takes (one written
// by another compiler's pipeline: XLA's GPU fusions hold dots, concats
// and integer ops our tile programs do not) as a call of its fused
// computation, each instruction of which gets its own kernel.
func (c *compiler) fusionBody(in *hlo.Instruction) (kernel, bool) {
	if in.Opcode != hlo.OpFusion {
		return nil, false
	}
	body, err := c.called(in.Computation("calls"))
	if err != nil {
		return nil, false
	}
	return func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		return body.runSub(ev, ops...)
	}, true
}
