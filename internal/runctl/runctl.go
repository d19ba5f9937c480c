// Package runctl holds what stops a run, shared by the reference
// evaluator and the compiled engine so that callers test one error for
// both: the interruption of a cancelled context and a panic contained as
// an error.
package runctl

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrInterrupted is what an execution stopped by its stop flag returns;
// the caller who set the flag knows why (its context's error).
var ErrInterrupted = errors.New("execution interrupted")

// PanicError is a panic raised while computing an instruction (a bug in
// a handler or a kernel), caught and turned into an error so that the
// process survives it.
type PanicError struct {
	// Instruction names the instruction being computed ("computation
	// %s, instruction %s" from the evaluator, the instruction's name from
	// a compiled kernel).
	Instruction string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error: panic in instruction %s: %v", e.Instruction, e.Value)
}

// Unwrap exposes a panic value that is itself an error (a runtime error).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// NewPanicError wraps a recovered value r raised while computing the
// instruction named name, keeping the current stack. A value that is a
// *PanicError already (a nested computation's, or one raised on a worker
// goroutine and carried to its caller) is kept as is: it names the
// innermost instruction and the stack that panicked.
func NewPanicError(name string, r any) *PanicError {
	if p, ok := r.(*PanicError); ok {
		return p
	}
	return &PanicError{Instruction: name, Value: r, Stack: debug.Stack()}
}

// RngState is rng-get-and-update-state's 128-bit state, shared in form by
// the evaluator and the compiled engine: seeded from the run's seed at
// first use, its low word advanced by each call's delta.
type RngState struct {
	state [2]uint64
	set   bool
}

// GetAndUpdate returns the state and advances its low word by delta.
func (r *RngState) GetAndUpdate(seed uint64, delta int64) [2]uint64 {
	if !r.set {
		r.state, r.set = [2]uint64{seed, 0}, true
	}
	s := r.state
	r.state[0] += uint64(delta)
	return s
}
