package stablehlo

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

func init() {
	register(convertPrint, "interpreter.print")
}

// convertPrint handles the reference interpreter's interpreter.print,
// which prints its operand and has no results. HLO has no printing op, so
// when a program's checks are converted (ConvertProgram), a value printed
// in the entry computation (or a function inlined into it, as under
// interpreter.run_parallel) becomes one more output of the entry, listed
// as a Check of kind "print" that Compare passes over and Printed formats
// for the runner's log. A print inside a region (a loop body, a reducer)
// cannot reach the entry's outputs and, like every print when checks are
// dropped, only passes its value through: nothing reads it.
func convertPrint(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	if !s.c.checks || !s.entry {
		return nil, nil
	}
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	for _, in := range ins {
		if !in.Shape.IsArray() {
			return nil, fmt.Errorf("print of a non-array value: %w", ErrUnsupported)
		}
		s.c.pending = append(s.c.pending, pendingCheck{Check: Check{Kind: "print", Pos: op.Pos}, actual: in})
	}
	return nil, nil
}

// Printed formats the values the program's interpreter.print ops printed,
// one "FILE:LINE:COL: value" string each in program order, from the
// entry's outputs as Compare takes them.
func (p *Program) Printed(outs []*hlo.Literal) []string {
	var lines []string
	for _, ch := range p.Checks {
		if ch.Kind != "print" || ch.Actual >= len(outs) {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: %s", ch.Pos, outs[ch.Actual]))
	}
	return lines
}
