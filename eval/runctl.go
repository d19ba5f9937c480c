package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/faults"
	"github.com/axle-ml/axle/internal/runctl"
)

// The run loop's controls: interruption (a cancelled context), panic
// containment and the measured peak of live values.

// ErrInterrupted is what an evaluation stopped by its Interrupt flag
// returns; the compiled engine returns the same (package runctl).
var ErrInterrupted = runctl.ErrInterrupted

// PanicError is a panic raised while computing an instruction, caught and
// turned into an error so that the process survives it. The cpu backend
// and the runtime API return it too.
type PanicError = runctl.PanicError

// NewPanicError wraps a recovered value r raised while computing the
// instruction named name (runctl.NewPanicError).
func NewPanicError(name string, r any) *PanicError { return runctl.NewPanicError(name, r) }

func newPanicError(c *hlo.Computation, in *hlo.Instruction, r any) *PanicError {
	name := "(none)"
	if in != nil {
		name = in.Name
	}
	return NewPanicError(fmt.Sprintf("%s (computation %s)", name, c.Name), r)
}

func (e *Evaluator) interrupted() bool { return e.Interrupt != nil && e.Interrupt.Load() }

// testHook panics where a test armed a fault (internal/faults).
func testHook(in *hlo.Instruction) {
	if faults.Any() {
		faults.Check(in.Name)
	}
}

// memTrack counts the bytes held by the values of the computations being
// evaluated: each instruction's result counts the array storage it does
// not share with its operands (a get-tuple-element, a tuple or a copy
// that passes its operand on count nothing; constants count nothing, the
// module holds them) until its computation returns. A computation's
// result is counted again by the instruction that called it, once the
// call's values are dropped, so a while loop's state between iterations
// is counted in the body's frame.
type memTrack struct {
	live, peak int64
}

// add counts v, in's result, and returns the bytes it added.
func (m *memTrack) add(in *hlo.Instruction, v *hlo.Literal, ops []*hlo.Literal) int64 {
	if in.Opcode == hlo.OpConstant {
		return 0
	}
	n := newBytes(v, ops)
	m.live += n
	m.peak = max(m.peak, m.live)
	return n
}

func (m *memTrack) drop(n int64) { m.live -= n }

// newBytes sums the storage of v's arrays not shared with an operand's.
func newBytes(v *hlo.Literal, ops []*hlo.Literal) int64 {
	if v == nil {
		return 0
	}
	if v.Shape().IsTuple() {
		var n int64
		for _, e := range v.Elements() {
			n += newBytes(e, ops)
		}
		return n
	}
	b := v.RawBytes()
	if len(b) == 0 || sharedWith(&b[0], ops) {
		return 0
	}
	return int64(len(b))
}

func sharedWith(p *byte, ops []*hlo.Literal) bool {
	for _, o := range ops {
		if o.Shape().IsTuple() {
			if sharedWith(p, o.Elements()) {
				return true
			}
			continue
		}
		if b := o.RawBytes(); len(b) > 0 && &b[0] == p {
			return true
		}
	}
	return false
}

// PeakBytes is the high-water mark of the bytes the evaluator's live
// values held during its last Run with MeasurePeak set (arguments and
// constants excluded).
func (e *Evaluator) PeakBytes() int64 { return e.mem.peak }
