package eval

import (
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// CheckSupported reports the first instruction of m, in any of its
// computations, that the evaluator cannot run whatever the arguments: a
// custom call to a target it does not implement, or an rng-bit-generator
// algorithm it does not know. XLA fails such modules when compiling,
// not when running; the CPU backend (which runs on the evaluator what it
// does not lower) and the interpreter call this at compile time. The error
// is an *hlo.InstructionError wrapping ErrUnimplemented.
func CheckSupported(m *hlo.Module) error {
	if m == nil {
		return fmt.Errorf("eval: nil module")
	}
	for _, c := range m.Computations {
		if c == nil {
			continue
		}
		for _, in := range c.Instructions {
			if in == nil {
				continue
			}
			if err := checkInstructionSupported(in); err != nil {
				return &hlo.InstructionError{Computation: c.Name, Instruction: in.Name, Err: err}
			}
		}
	}
	return nil
}

func checkInstructionSupported(in *hlo.Instruction) error {
	switch in.Opcode {
	case hlo.OpCustomCall:
		target, _ := in.StringAttr("custom_call_target")
		if _, ok := customCallTargets[target]; !ok {
			return fmt.Errorf("custom-call target %q is not implemented (the evaluator and the CPU backend run %s): %w",
				target, strings.Join(CustomCallTargets(), ", "), ErrUnimplemented)
		}
	case hlo.OpRngBitGenerator:
		_, err := rngAlgorithm(in)
		return err
	}
	return nil
}
