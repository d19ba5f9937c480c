package cpu

import (
	"fmt"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// evalCaseSteps evaluates case c's entry computation on the evaluator,
// instruction by instruction, and calls visit with every instruction but
// the parameters, its operands' values and its own: the inputs and the
// expected result of a kernel under test. It stops with an error when the
// case does not parse, verify or evaluate (some cases expect an error).
func evalCaseSteps(c *conformance.Case, visit func(in *hlo.Instruction, ops []*hlo.Literal, want *hlo.Literal)) error {
	m, err := hlotext.Parse(c.HLO, hlotext.Options{})
	if err != nil {
		return err
	}
	if err := hlo.Verify(m); err != nil {
		return err
	}
	args := make([]*hlo.Literal, len(c.Args))
	for i, a := range c.Args {
		if args[i], err = a.Literal(); err != nil {
			return err
		}
	}
	var ev eval.Evaluator
	vals := map[*hlo.Instruction]*hlo.Literal{}
	for _, in := range m.Entry.Instructions {
		ops := make([]*hlo.Literal, len(in.Operands))
		for i, o := range in.Operands {
			ops[i] = vals[o]
		}
		if in.Opcode == hlo.OpParameter {
			if int(in.ParamNumber) >= len(args) {
				return fmt.Errorf("%s: no argument for %s", c.Path, in.Name)
			}
			vals[in] = args[in.ParamNumber]
			continue
		}
		v, err := ev.Instruction(in, ops)
		if err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		vals[in] = v
		visit(in, ops, v)
	}
	return nil
}
