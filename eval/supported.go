package eval

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// maxValueBytes is the largest value the evaluator allocates: 2^47-1 bytes
// on 64-bit hosts (Go's heap addresses 2^48 bytes; make panics past it),
// 2^30-1 on 32-bit ones. Shapes past int64 are the verifier's to refuse;
// shapes that fit int64 but no heap are refused here, as an error rather
// than a panic in make.
const maxValueBytes = int64(math.MaxInt>>1) & (1<<47 - 1)

// CheckSupported reports the first instruction of m, in any of its
// computations, that the evaluator cannot run whatever the arguments: a
// custom call to a target it does not implement, an rng-bit-generator
// algorithm it does not know, or a result too large to allocate on this
// host. XLA fails such modules when compiling, not when running; the CPU
// backend (which runs on the evaluator what it does not lower) and the
// interpreter call this at compile time, and Run before it starts. The
// error is an *hlo.InstructionError; unknown targets and algorithms wrap
// ErrUnimplemented.
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
	if err := checkAllocatable(in.Shape); err != nil {
		return err
	}
	switch in.Opcode {
	case hlo.OpCustomCall:
		target, _ := in.StringAttr("custom_call_target")
		if _, ok := customCallTargets[target]; !ok {
			return unsupportedTarget(target)
		}
	case hlo.OpRngBitGenerator:
		_, err := rngAlgorithm(in)
		return err
	}
	return nil
}

// checkAllocatable checks that every array of s fits in maxValueBytes.
func checkAllocatable(s hlo.Shape) error {
	if s.IsTuple() {
		for _, e := range s.Tuple {
			if err := checkAllocatable(e); err != nil {
				return err
			}
		}
		return nil
	}
	n, err := s.ByteSize()
	if err != nil {
		return err
	}
	if n > maxValueBytes {
		return fmt.Errorf("a value of shape %s takes %d bytes, more than this host can allocate (%d)", s.HumanString(), n, maxValueBytes)
	}
	return nil
}
