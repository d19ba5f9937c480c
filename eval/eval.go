package eval

import (
	"errors"
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// ErrUnimplemented marks an opcode (or an opcode's variant) the evaluator
// does not support yet.
var ErrUnimplemented = errors.New("not implemented in the evaluator")

// handler computes one instruction from its operands' values.
type handler func(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error)

// handlers is the dispatch table, indexed by opcode; each op-family file
// fills its rows in init.
var handlers = make([]handler, hlo.NumOpcodes())

func register(fn handler, ops ...hlo.Opcode) {
	for _, op := range ops {
		if handlers[op] != nil {
			panic(fmt.Sprintf("eval: %s registered twice", op))
		}
		handlers[op] = fn
	}
}

// Evaluator runs computations. Its zero value is ready to use.
type Evaluator struct {
	// Seed drives rng and the values invented for elided constants.
	Seed uint64
	// ReplicaID and PartitionID are what replica-id and partition-id return.
	ReplicaID, PartitionID uint32
}

// Run evaluates the module's entry computation on args, one per parameter.
func Run(m *hlo.Module, args ...*hlo.Literal) (*hlo.Literal, error) {
	var e Evaluator
	return e.Run(m, args...)
}

// Run evaluates the module's entry computation on args.
func (e *Evaluator) Run(m *hlo.Module, args ...*hlo.Literal) (*hlo.Literal, error) {
	if m.Entry == nil {
		return nil, errors.New("eval: module has no entry computation")
	}
	if len(args) != len(m.Entry.Params) {
		return nil, fmt.Errorf("eval: entry computation %s takes %d arguments, got %d", m.Entry.Name, len(m.Entry.Params), len(args))
	}
	for i, a := range args {
		p := m.Entry.Params[i]
		if a == nil || !a.Shape().Compatible(p.Shape) {
			got := "nil"
			if a != nil {
				got = a.Shape().HumanString()
			}
			return nil, fmt.Errorf("eval: argument %d (parameter %s) has shape %s, want %s", i, p.Name, got, p.Shape.HumanString())
		}
	}
	return e.Computation(m.Entry, args...)
}

// Computation evaluates one computation on its arguments.
func (e *Evaluator) Computation(c *hlo.Computation, args ...*hlo.Literal) (*hlo.Literal, error) {
	values := make(map[*hlo.Instruction]*hlo.Literal, len(c.Instructions))
	for _, in := range c.Instructions {
		v, err := e.instruction(in, values, args)
		if err != nil {
			return nil, fmt.Errorf("computation %s, instruction %s: %w", c.Name, in.Name, err)
		}
		values[in] = v
	}
	return values[c.Root], nil
}

func (e *Evaluator) instruction(in *hlo.Instruction, values map[*hlo.Instruction]*hlo.Literal, args []*hlo.Literal) (*hlo.Literal, error) {
	if in.Opcode == hlo.OpParameter {
		if int(in.ParamNumber) >= len(args) {
			return nil, fmt.Errorf("parameter %d has no argument", in.ParamNumber)
		}
		return args[in.ParamNumber], nil
	}
	ops := make([]*hlo.Literal, len(in.Operands))
	for i, o := range in.Operands {
		v, ok := values[o]
		if !ok {
			return nil, fmt.Errorf("operand %s is not computed before its use", o.Name)
		}
		ops[i] = v
	}
	h := handlers[in.Opcode]
	if h == nil {
		return nil, fmt.Errorf("%s: %w", in.Opcode, ErrUnimplemented)
	}
	return h(e, in, ops)
}
