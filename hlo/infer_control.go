package hlo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Shape rules of control flow and called computations (call, while,
// conditional, fusion, async wrappers), of ops with side channels (copy
// start/done, send/recv, infeed/outfeed, tokens) and of random numbers.

var controlRules = map[Opcode]inferRule{
	OpCall:                 inferCall,
	OpWhile:                inferWhile,
	OpConditional:          inferConditional,
	OpFusion:               inferFusion,
	OpCustomCall:           inferCustomCall,
	OpShuffle:              cannotInfer,
	OpAsyncStart:           inferAsyncStart,
	OpAsyncUpdate:          inferAsyncUpdate,
	OpAsyncDone:            inferAsyncDone,
	OpCopyStart:            inferCopyStart,
	OpCopyDone:             inferCopyDone,
	OpSend:                 inferSend,
	OpSendDone:             inferSendDone,
	OpRecv:                 inferRecv,
	OpRecvDone:             inferRecvDone,
	OpInfeed:               inferInfeed,
	OpOutfeed:              inferOutfeed,
	OpAfterAll:             inferAfterAll,
	OpAddDependency:        inferAddDependency,
	OpRng:                  inferRng,
	OpRngBitGenerator:      inferRngBitGenerator,
	OpRngGetAndUpdateState: fixedShape(ArrayShape(U64, 2)),
	OpPartitionID:          fixedShape(ScalarShape(U32)),
	OpReplicaID:            fixedShape(ScalarShape(U32)),
}

func fixedShape(s Shape) inferRule {
	return func(*Instruction, []Shape) (Shape, error) { return s.Clone(), nil }
}

// checkArguments checks that a called computation takes the given
// arguments (XLA's InferCallShape).
func checkArguments(c *Computation, args []Shape) error {
	fn := programShape(c)
	if len(fn.Params) != len(args) {
		return fmt.Errorf("computation %s takes %d parameters, but is called with %d arguments; signature: %s; argument shapes: [%s]",
			c.Name, len(fn.Params), len(args), signatureString(fn), shapeList(args))
	}
	for i, p := range fn.Params {
		if !compatibleShapes(args[i], p, exactTypes) {
			return fmt.Errorf("parameter %d of computation %s has shape %s, but the argument has shape %s", i, c.Name, p.HumanString(), args[i].HumanString())
		}
	}
	return nil
}

func inferCall(in *Instruction, ops []Shape) (Shape, error) {
	c, err := calledComputation(in, "to_apply")
	if err != nil {
		return Shape{}, err
	}
	if err := checkArguments(c, ops); err != nil {
		return Shape{}, err
	}
	return c.Root.Shape.Clone(), nil
}

// inferWhile: the condition maps the state to pred[], the body maps the
// state to itself, and the state is the operand.
func inferWhile(in *Instruction, ops []Shape) (Shape, error) {
	cond, err := calledComputation(in, "condition")
	if err != nil {
		return Shape{}, err
	}
	body, err := calledComputation(in, "body")
	if err != nil {
		return Shape{}, err
	}
	cf, bf := programShape(cond), programShape(body)
	if len(cf.Params) != 1 {
		return Shape{}, fmt.Errorf("condition must take 1 argument; got %d", len(cf.Params))
	}
	if len(bf.Params) != 1 {
		return Shape{}, fmt.Errorf("body must take 1 argument; got %d", len(bf.Params))
	}
	detail := fmt.Sprintf("condition: %s; body: %s; init: %s", signatureString(cf), signatureString(bf), ops[0].HumanString())
	if !compatibleShapes(cf.Result, ScalarShape(Pred), exactTypes) {
		return Shape{}, fmt.Errorf("condition must return a boolean; got %s", detail)
	}
	if !compatibleShapes(bf.Result, cf.Params[0], exactTypes) || !compatibleShapes(bf.Result, bf.Params[0], exactTypes) ||
		!compatibleShapes(bf.Result, ops[0], exactTypes) {
		return Shape{}, fmt.Errorf("the parameter of condition and body, the result of the body, and init must all have the same shape; got %s", detail)
	}
	return body.Root.Shape.Clone(), nil
}

// branches returns a conditional's branch computations: true and false on
// a pred, the list on an s32 index.
func branches(in *Instruction) ([]*Computation, error) {
	if v, ok := in.Attr("branch_computations"); ok {
		cs, _ := v.([]*Computation)
		if len(cs) == 0 {
			return nil, errors.New("branch_computations is empty")
		}
		return cs, nil
	}
	t, f := in.Computation("true_computation"), in.Computation("false_computation")
	if t == nil || f == nil {
		return nil, errors.New("needs true_computation and false_computation, or branch_computations")
	}
	return []*Computation{t, f}, nil
}

func inferConditional(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs a predicate or branch index operand")
	}
	sel := ops[0]
	if !isScalarOf(sel, Pred) && !isScalarOf(sel, S32) {
		return Shape{}, fmt.Errorf("branch_index must be a pred or s32 scalar; got %s", sel.HumanString())
	}
	bs, err := branches(in)
	if err != nil {
		return Shape{}, err
	}
	if sel.DType == Pred && len(bs) != 2 {
		return Shape{}, fmt.Errorf("a conditional on pred has 2 branches, not %d", len(bs))
	}
	if len(ops) != len(bs)+1 {
		return Shape{}, fmt.Errorf("expects %d operands (the index and one per branch), but has %d", len(bs)+1, len(ops))
	}
	for j, b := range bs {
		if b == nil || b.Root == nil {
			return Shape{}, fmt.Errorf("branch computation %d is missing", j)
		}
		fn := programShape(b)
		if len(fn.Params) != 1 {
			return Shape{}, fmt.Errorf("branch computation %d (%s) must take 1 argument; got %d", j, b.Name, len(fn.Params))
		}
		if !compatibleShapes(fn.Params[0], ops[j+1], exactTypes) {
			return Shape{}, fmt.Errorf("branch operand %d must match the shape of the only parameter of branch computation %d: got operand %s; computation %s", j, j, ops[j+1].HumanString(), signatureString(fn))
		}
		if !compatibleShapes(fn.Result, bs[0].Root.Shape, exactTypes) {
			return Shape{}, fmt.Errorf("the result of branch 0 computation and branch %d computation must have the same shape: got %s and %s", j, bs[0].Root.Shape.HumanString(), fn.Result.HumanString())
		}
	}
	return bs[0].Root.Shape.Clone(), nil
}

// inferFusion: the fused computation's root is the result; each fused
// parameter matches the operand of its number.
func inferFusion(in *Instruction, ops []Shape) (Shape, error) {
	c, err := calledComputation(in, "calls")
	if err != nil {
		return Shape{}, err
	}
	if len(c.Params) > len(ops) {
		return Shape{}, fmt.Errorf("fused parameter count (%d) is greater than the number of operands (%d)", len(c.Params), len(ops))
	}
	for i, p := range c.Params {
		if p != nil && !compatibleShapes(p.Shape, ops[i], exactTypes) {
			return Shape{}, fmt.Errorf("shape mismatch between parameter number %d (%s) and its operand (%s)", i, p.Shape.HumanString(), ops[i].HumanString())
		}
	}
	return c.Root.Shape.Clone(), nil
}

// asyncComputation returns the computation an async op wraps.
func asyncComputation(in *Instruction) (*Computation, error) {
	return calledComputation(in, "calls")
}

// checkAsyncShape checks the `((operands), output, state...)` form of
// async-start and async-update against the wrapped computation.
func checkAsyncShape(c *Computation, s Shape) error {
	if !s.IsTuple() || len(s.Tuple) < 2 {
		return fmt.Errorf("expects the async shape to be a tuple of at least two elements, found %s", s.HumanString())
	}
	fn := programShape(c)
	if params := TupleShape(fn.Params...); !compatibleShapes(s.Tuple[0], params, exactTypes) {
		return fmt.Errorf("expects the async shape at index {0} to match async computation parameter shape (%s vs %s)", s.Tuple[0].HumanString(), params.HumanString())
	}
	if !compatibleShapes(s.Tuple[1], fn.Result, exactTypes) {
		return fmt.Errorf("expects the async shape at index {1} to match the async computation root shape (%s vs %s)", s.Tuple[1].HumanString(), fn.Result.HumanString())
	}
	return nil
}

// inferAsyncStart: the state after the first two elements is backend
// specific, so the written shape is required and checked.
func inferAsyncStart(in *Instruction, ops []Shape) (Shape, error) {
	c, err := asyncComputation(in)
	if err != nil {
		return Shape{}, err
	}
	d, err := needDeclared(in, "the async state shape")
	if err != nil {
		return Shape{}, err
	}
	if err := checkAsyncShape(c, d); err != nil {
		return Shape{}, err
	}
	if len(d.Tuple[0].Tuple) != len(ops) {
		return Shape{}, fmt.Errorf("has %d operands but the async shape at index {0} has %d elements", len(ops), len(d.Tuple[0].Tuple))
	}
	for i, o := range ops {
		if !compatibleShapes(o, d.Tuple[0].Tuple[i], exactTypes) {
			return Shape{}, fmt.Errorf("expects the shape of operand %d to match the async shape at index {0} (%s vs %s)", i, o.HumanString(), d.Tuple[0].Tuple[i].HumanString())
		}
	}
	return d.Clone(), nil
}

// asyncPredecessor checks that an async-update or async-done takes an
// async-start or async-update of the same wrapped computation.
func asyncPredecessor(in *Instruction) error {
	if len(in.Operands) != 1 || in.Operands[0] == nil {
		return errors.New("expects a single async op as its operand")
	}
	prev := in.Operands[0]
	if prev.Opcode != OpAsyncStart && prev.Opcode != OpAsyncUpdate {
		return fmt.Errorf("expects operand to be async-start or async-update, found %s", prev.Opcode)
	}
	if c, p := in.Computation("calls"), prev.Computation("calls"); c != nil && p != nil && c != p {
		return fmt.Errorf("expects its wrapped async computation to be identical to its operand's (%s vs %s)", c.Name, p.Name)
	}
	return nil
}

func inferAsyncUpdate(in *Instruction, ops []Shape) (Shape, error) {
	if err := asyncPredecessor(in); err != nil {
		return Shape{}, err
	}
	if c := in.Computation("calls"); c != nil && c.Root != nil {
		if err := checkAsyncShape(c, ops[0]); err != nil {
			return Shape{}, err
		}
	}
	return ops[0].Clone(), nil
}

func inferAsyncDone(in *Instruction, ops []Shape) (Shape, error) {
	if err := asyncPredecessor(in); err != nil {
		return Shape{}, err
	}
	s := ops[0]
	if c := in.Computation("calls"); c != nil && c.Root != nil {
		if err := checkAsyncShape(c, s); err != nil {
			return Shape{}, err
		}
	}
	if !s.IsTuple() || len(s.Tuple) < 2 {
		return Shape{}, fmt.Errorf("expects the async shape to be a tuple of at least two elements, found %s", s.HumanString())
	}
	return s.Tuple[1].Clone(), nil
}

// inferCopyStart: (destination, source, context).
func inferCopyStart(_ *Instruction, ops []Shape) (Shape, error) {
	return TupleShape(ops[0], ops[0], ScalarShape(U32)), nil
}

func inferCopyDone(_ *Instruction, ops []Shape) (Shape, error) {
	s := ops[0]
	if !s.IsTuple() || len(s.Tuple) < 2 {
		return Shape{}, fmt.Errorf("expects the (destination, source, context) tuple of a copy-start, got %s", s.HumanString())
	}
	if !compatibleShapes(s.Tuple[0], s.Tuple[1], exactTypes) {
		return Shape{}, fmt.Errorf("source and destination buffers in copy-done arguments need to be the same shape, found %s and %s", s.Tuple[0].HumanString(), s.Tuple[1].HumanString())
	}
	return s.Tuple[0].Clone(), nil
}

func inferSend(_ *Instruction, ops []Shape) (Shape, error) {
	return TupleShape(ops[0], ScalarShape(U32), TokenShape()), nil
}

func inferSendDone(*Instruction, []Shape) (Shape, error) { return TokenShape(), nil }

// inferRecv: what is received is only written in the result shape.
func inferRecv(in *Instruction, _ []Shape) (Shape, error) {
	d, err := needDeclared(in, "the received shape")
	if err != nil {
		return Shape{}, err
	}
	if !d.IsTuple() || len(d.Tuple) == 0 {
		return Shape{}, fmt.Errorf("expects a (data, u32[], token[]) shape, got %s", d.HumanString())
	}
	return TupleShape(d.Tuple[0], ScalarShape(U32), TokenShape()), nil
}

func inferRecvDone(_ *Instruction, ops []Shape) (Shape, error) {
	s := ops[0]
	if !s.IsTuple() || len(s.Tuple) == 0 {
		return Shape{}, fmt.Errorf("expects the shape of a recv as operand, got %s", s.HumanString())
	}
	return TupleShape(s.Tuple[0], TokenShape()), nil
}

func expectToken(ops []Shape, i int) error {
	if !ops[i].IsToken() {
		return fmt.Errorf("expected operand %d to be token-shaped, actual shape is %s", i, ops[i].HumanString())
	}
	return nil
}

// inferInfeed: the fed data's shape is only written in the result shape,
// (data, token[]).
func inferInfeed(in *Instruction, ops []Shape) (Shape, error) {
	if err := expectToken(ops, 0); err != nil {
		return Shape{}, err
	}
	d, err := needDeclared(in, "the infeed shape")
	if err != nil {
		return Shape{}, err
	}
	if !d.IsTuple() || len(d.Tuple) != 2 || !d.Tuple[1].IsToken() {
		return Shape{}, fmt.Errorf("expects a (data, token[]) shape, got %s", d.HumanString())
	}
	return d.Clone(), nil
}

func inferOutfeed(in *Instruction, ops []Shape) (Shape, error) {
	if err := expectToken(ops, 1); err != nil {
		return Shape{}, err
	}
	if v, ok := in.Attr("outfeed_shape"); ok {
		if s, isShape := v.(Shape); isShape && !compatibleShapes(s, ops[0], exactTypes) {
			return Shape{}, fmt.Errorf("expected outfeed shape to be equal to operand's shape %s, actual shape is %s", ops[0].HumanString(), s.HumanString())
		}
	}
	return TokenShape(), nil
}

func inferAfterAll(*Instruction, []Shape) (Shape, error) { return TokenShape(), nil }

func inferAddDependency(_ *Instruction, ops []Shape) (Shape, error) {
	if err := expectToken(ops, 1); err != nil {
		return Shape{}, err
	}
	return ops[0].Clone(), nil
}

// inferRng: the result shape is written; its element type is the bounds'.
func inferRng(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) != 2 {
		return Shape{}, fmt.Errorf("expected 2 operands, has %d", len(ops))
	}
	d, err := needDeclared(in, "the rng result shape")
	if err != nil {
		return Shape{}, err
	}
	a, b := ops[0], ops[1]
	if !a.IsScalar() || !b.IsScalar() {
		return Shape{}, errors.New("expected scalar types for the two operands of rng")
	}
	if a.DType != b.DType || !d.IsArray() || !sameTypeIgnoringFP(a.DType, d.DType) {
		return Shape{}, fmt.Errorf("expected compatible element types for the result and the two operands of rng: %s, %s -> %s", a.HumanString(), b.HumanString(), d.HumanString())
	}
	t := a.DType
	switch dist, _ := in.EnumAttr("distribution"); dist {
	case "rng_uniform":
		if !t.IsFloat() && !t.IsInteger() && !t.IsPred() {
			return Shape{}, fmt.Errorf("element type not supported; expected floating point, integral or predicate type for rng_uniform, got %s", t)
		}
	case "rng_normal":
		if !t.IsFloat() {
			return Shape{}, fmt.Errorf("element type not supported; expected floating point type for rng_normal, got %s", t)
		}
	default:
		return Shape{}, fmt.Errorf("invalid rng distribution %q", dist)
	}
	return d.Clone(), nil
}

// inferRngBitGenerator: (new state, bits) with the bits' shape written.
func inferRngBitGenerator(in *Instruction, ops []Shape) (Shape, error) {
	d, err := needDeclared(in, "the generated bits' shape")
	if err != nil {
		return Shape{}, err
	}
	if !d.IsTuple() || len(d.Tuple) != 2 {
		return Shape{}, fmt.Errorf("expected tuple shape with 2 elements (state, bits) for rng-bit-generator, got %s", d.HumanString())
	}
	if !compatibleShapes(ops[0], d.Tuple[0], exactTypes) {
		return Shape{}, fmt.Errorf("expected state shape to match between input and output for rng-bit-generator, got %s vs %s", ops[0].HumanString(), d.Tuple[0].HumanString())
	}
	if err := checkRngState(in, ops[0]); err != nil {
		return Shape{}, err
	}
	if b := d.Tuple[1]; !b.IsArray() || !(b.DType.IsInteger() || b.DType.IsFloat()) {
		return Shape{}, fmt.Errorf("rng-bit-generator generates an array of integers or floats, got %s", b.HumanString())
	}
	return d.Clone(), nil
}

// checkRngState is StableHLO's rng_bit_generator constraint on the state:
// a u64 vector of 2 elements for three-fry, 2 or 3 for philox (XLA's
// default on CPU).
func checkRngState(in *Instruction, st Shape) error {
	alg, _ := in.EnumAttr("algorithm")
	sizes, what := []int64{2, 3}, "2 or 3"
	if strings.EqualFold(string(alg), "rng_three_fry") {
		sizes, what = []int64{2}, "2"
	}
	if !st.IsArray() || st.DType != U64 || st.Rank() != 1 || !slices.Contains(sizes, st.Dims[0]) {
		return fmt.Errorf("the rng-bit-generator state must be u64[%s] for algorithm %s, got %s", what, alg, st.HumanString())
	}
	return nil
}

// inferCustomCall checks the custom calls whose meaning XLA itself
// defines and whose result the evaluator and backends compute from the
// written shape; any other target's result is whatever its writer says.
func inferCustomCall(in *Instruction, ops []Shape) (Shape, error) {
	if target, _ := in.StringAttr("custom_call_target"); target != "TopK" {
		return cannotInfer(in, ops)
	}
	// XLA's TopK custom call: (values, s32 indices) of the k largest
	// along the last dimension, k given by the result shape.
	if len(ops) != 1 {
		return Shape{}, fmt.Errorf("the TopK custom call takes one operand, got %d", len(ops))
	}
	x := ops[0]
	if err := expectArray(x, "operand of the TopK custom call"); err != nil {
		return Shape{}, err
	}
	last := x.Rank() - 1
	if last < 0 {
		return Shape{}, fmt.Errorf("the operand of the TopK custom call must have rank >= 1, got %s", x.HumanString())
	}
	d, err := needDeclared(in, "k of the TopK custom call")
	if err != nil {
		return Shape{}, err
	}
	if !d.IsTuple() || len(d.Tuple) != 2 || !d.Tuple[0].IsArray() || d.Tuple[0].Rank() != x.Rank() {
		return Shape{}, fmt.Errorf("the TopK custom call of %s returns a tuple (values, indices) of rank %d, got %s", x.HumanString(), x.Rank(), d.HumanString())
	}
	k := d.Tuple[0].Dims[last]
	if k < 0 || (x.Dims[last] != Unbounded && k > x.Dims[last]) {
		return Shape{}, fmt.Errorf("k=%d is out of range for the last dimension of %s", k, x.HumanString())
	}
	dims := append([]int64{}, x.Dims...)
	dims[last] = k
	dyn := dynFlags(x)
	dyn[last] = false
	return TupleShape(makeArray(x.DType, dims, dyn), makeArray(S32, dims, dyn)), nil
}
