package hlo

import (
	"errors"
	"fmt"
)

// ErrCannotInfer reports that an instruction's result shape does not follow
// from its operands and attributes: custom-call, or an op whose result
// dimensions or element type are carried only by its written shape (reshape,
// broadcast, iota, convert, ...) when no shape was written. The verifier
// skips such instructions rather than failing them.
var ErrCannotInfer = errors.New("the shape cannot be inferred; write it")

// InferShape computes the result shape of in from its opcode, operands and
// attributes, following XLA's ShapeInference and operation semantics, and
// checks the constraints XLA checks on the way. Shapes it computes get
// default layouts; shapes it forwards (tuple elements, called computations'
// results) keep theirs.
//
// When in.Shape is already set (the verifier's case), ops whose result is
// defined by that shape in HLO text (reshape, broadcast, iota, convert,
// rng, the element type of dot and convolution, ...) take it from there and
// validate it against the operands; when it is not set (the parser's case)
// such ops report ErrCannotInfer.
func InferShape(in *Instruction) (Shape, error) {
	if in == nil {
		return Shape{}, errors.New("nil instruction")
	}
	if in.Opcode == OpInvalid || in.Opcode >= numOpcodes {
		return Shape{}, fmt.Errorf("invalid opcode %d", in.Opcode)
	}
	if !knownTypes(in.Shape) {
		return Shape{}, fmt.Errorf("%s: the written shape has an unknown element type", in.Opcode)
	}
	ops := make([]Shape, len(in.Operands))
	for i, o := range in.Operands {
		if o == nil {
			return Shape{}, fmt.Errorf("%s: operand %d is missing", in.Opcode, i)
		}
		if !knownTypes(o.Shape) {
			return Shape{}, fmt.Errorf("%s: operand %d has an unknown element type", in.Opcode, i)
		}
		ops[i] = o.Shape
	}
	if n := in.Opcode.Info().Arity; n != Variadic && n != len(ops) {
		return Shape{}, fmt.Errorf("%s: expects %d operands, but has %d", in.Opcode, n, len(ops))
	}
	s, err := inferRules[in.Opcode](in, ops)
	if err == nil {
		// One check for every rule: padding, broadcasting, concatenating
		// or reshaping can all produce sizes past int64.
		err = checkSizes(s)
	}
	if err != nil {
		return Shape{}, fmt.Errorf("%s: %w", in.Opcode, err)
	}
	return s, nil
}

// inferRule computes the result shape of one opcode from the operand shapes.
// Errors are worded in XLA's terms without the opcode, which InferShape adds.
type inferRule func(in *Instruction, ops []Shape) (Shape, error)

var inferRules [numOpcodes]inferRule

// init merges the per-family tables, one per infer_*.go file, into the
// array InferShape indexes, checking that every opcode has exactly one rule.
func init() {
	for _, table := range []map[Opcode]inferRule{
		elementwiseRules, shapeOpRules, linalgRules, reductionRules, controlRules, collectiveRules,
	} {
		for op, r := range table {
			if inferRules[op] != nil {
				panic(fmt.Sprintf("hlo: two shape rules for %s", op))
			}
			inferRules[op] = r
		}
	}
	// Every opcode states its rule, if only that its shape cannot be
	// inferred: a forgotten row would silently skip verification.
	for op := OpInvalid + 1; op < numOpcodes; op++ {
		if inferRules[op] == nil {
			panic(fmt.Sprintf("hlo: opcode %s has no shape rule in infer_*.go", op))
		}
	}
}

// knownTypes reports whether every element type in s is one of the
// table's, so that the type predicates can be asked about it.
func knownTypes(s Shape) bool {
	if s.DType >= numDTypes {
		return false
	}
	for _, e := range s.Tuple {
		if !knownTypes(e) {
			return false
		}
	}
	return true
}

// declared returns the shape written on the instruction, if any.
func declared(in *Instruction) (Shape, bool) {
	return in.Shape, in.Shape.DType != Invalid
}

// needDeclared returns the written shape of an op whose result is defined
// by it, or ErrCannotInfer.
func needDeclared(in *Instruction, what string) (Shape, error) {
	s, ok := declared(in)
	if !ok {
		return Shape{}, fmt.Errorf("%s comes from the written shape: %w", what, ErrCannotInfer)
	}
	return s, nil
}

// cannotInfer is the rule of opcodes whose result shape is not a function of
// their operands (custom-call) or whose semantics Axle does not model.
func cannotInfer(in *Instruction, _ []Shape) (Shape, error) {
	return Shape{}, ErrCannotInfer
}

func withDefaultLayout(s Shape) Shape {
	s.SetDefaultLayout()
	return s
}

// makeArray builds an array shape with the default layout; dyn may be nil.
func makeArray(t DType, dims []int64, dyn []bool) Shape {
	s := Shape{DType: t, Dims: append([]int64{}, dims...)}
	for i, d := range dyn {
		if d && i < len(dims) {
			s.SetDynamic(i, true)
		}
	}
	s.SetDefaultLayout()
	return s
}

// dynFlags returns the dynamic flag of every dimension of s.
func dynFlags(s Shape) []bool {
	out := make([]bool, len(s.Dims))
	for i := range out {
		out[i] = s.IsDynamicDim(i)
	}
	return out
}

func expectArray(s Shape, what string) error {
	if !s.IsArray() {
		return fmt.Errorf("expected array argument for %s, but got %s", what, s.HumanString())
	}
	return nil
}

// ints returns an integer-list attribute, empty when absent.
func ints(in *Instruction, name string) []int64 {
	v, _ := in.Ints(name)
	return v
}

// oneDimension returns the single entry of `dimensions={d}`.
func oneDimension(in *Instruction) (int64, error) {
	d := in.Dimensions()
	if len(d) != 1 {
		return 0, fmt.Errorf("expects exactly one dimension in dimensions=, got %d", len(d))
	}
	return d[0], nil
}

// calledComputation returns a called computation attribute, checking that
// it is present and has a root.
func calledComputation(in *Instruction, attr string) (*Computation, error) {
	c := in.Computation(attr)
	if c == nil {
		return nil, fmt.Errorf("missing %s computation", attr)
	}
	if c.Root == nil {
		return nil, fmt.Errorf("computation %s has no root", c.Name)
	}
	return c, nil
}

// programShape is a called computation's signature.
func programShape(c *Computation) ProgramShape {
	ps := ProgramShape{Result: c.ResultShape()}
	for _, p := range c.Params {
		if p == nil {
			ps.Params = append(ps.Params, Shape{})
			continue
		}
		ps.Params = append(ps.Params, p.Shape)
	}
	return ps
}

func signatureString(ps ProgramShape) string {
	s := "("
	for i, p := range ps.Params {
		if i > 0 {
			s += ", "
		}
		s += p.HumanString()
	}
	return s + ") -> " + ps.Result.HumanString()
}
