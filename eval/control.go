package eval

import (
	"errors"
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Constants, tuples and control flow: the instructions that move whole
// values around rather than computing elements.

func init() {
	register(evalConstant, hlo.OpConstant)
	register(evalTuple, hlo.OpTuple)
	register(evalGetTupleElement, hlo.OpGetTupleElement)
	register(evalCall, hlo.OpCall, hlo.OpFusion)
	register(evalWhile, hlo.OpWhile)
	register(evalConditional, hlo.OpConditional)
	register(evalPassThrough, hlo.OpCopy, hlo.OpOptimizationBarrier, hlo.OpDomain)
	register(evalAfterAll, hlo.OpAfterAll)
	register(evalAddDependency, hlo.OpAddDependency)
	register(evalAsyncStart, hlo.OpAsyncStart)
	register(evalPassThrough, hlo.OpAsyncUpdate)
}

// evalAsyncStart runs the wrapped computation at once: the evaluator has
// no concurrency to overlap it with. The result is XLA's async tuple
// (operands, result, contexts...); async-update passes it on and
// async-done takes element 1.
func evalAsyncStart(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	comp := in.Computation("calls")
	if comp == nil || !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 {
		return nil, errors.New("async-start needs a called computation and an (operands, result, ...) tuple shape")
	}
	r, err := e.Computation(comp, ops...)
	if err != nil {
		return nil, err
	}
	elems := []*hlo.Literal{hlo.MakeTupleLiteral(ops...), r}
	for _, s := range in.Shape.Tuple[2:] {
		elems = append(elems, hlo.NewLiteral(s))
	}
	return hlo.MakeTupleLiteral(elems...), nil
}

func evalConstant(e *Evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	if in.Literal == nil {
		return nil, errors.New("constant has no value")
	}
	if in.Literal.IsElided() {
		return nil, errors.New("constant is elided ({...}) in the text: its values are unknown")
	}
	return in.Literal, nil
}

func evalTuple(_ *Evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return hlo.MakeTupleLiteral(ops...), nil
}

func evalGetTupleElement(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	idx, _ := in.Int("index")
	elems := ops[0].Elements()
	if idx < 0 || int(idx) >= len(elems) {
		return nil, fmt.Errorf("tuple index %d out of range", idx)
	}
	return elems[idx], nil
}

// evalCall runs call and fusion: the called computation on the operands.
func evalCall(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	cc := in.CalledComputations()
	if len(cc) != 1 {
		return nil, fmt.Errorf("%s calls %d computations, want 1", in.Opcode, len(cc))
	}
	return e.Computation(cc[0], ops...)
}

func evalWhile(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	cond, body := in.Computation("condition"), in.Computation("body")
	state := ops[0]
	for {
		p, err := e.Computation(cond, state)
		if err != nil {
			return nil, err
		}
		if !p.GetBool(0) {
			return state, nil
		}
		if state, err = e.Computation(body, state); err != nil {
			return nil, err
		}
	}
}

// evalConditional: a pred selects true/false computation; an s32 index
// selects a branch, out-of-range indices the last one (operation semantics).
func evalConditional(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	var branch *hlo.Computation
	if ops[0].DType() == hlo.Pred {
		if ops[0].GetBool(0) {
			branch = in.Computation("true_computation")
		} else {
			branch = in.Computation("false_computation")
		}
		if ops[0].GetBool(0) {
			return e.Computation(branch, ops[1])
		}
		return e.Computation(branch, ops[2])
	}
	v, _ := in.Attr("branch_computations")
	branches, _ := v.([]*hlo.Computation)
	if len(branches) == 0 {
		return nil, errors.New("conditional has no branches")
	}
	i := ops[0].GetInt64(0)
	if i < 0 || int(i) >= len(branches) {
		i = int64(len(branches) - 1)
	}
	return e.Computation(branches[i], ops[1+i])
}

func evalPassThrough(_ *Evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return ops[0], nil
}

func evalAfterAll(_ *Evaluator, _ *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	return hlo.NewLiteral(hlo.TokenShape()), nil
}

func evalAddDependency(_ *Evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return ops[0], nil
}
