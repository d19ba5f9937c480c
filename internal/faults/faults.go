// Package faults injects failures into the runtime for tests of its
// containment: a panic in the kernel or handler of a named instruction.
// Only tests arm it; disarmed, each check is one atomic load.
package faults

import (
	"fmt"
	"sync/atomic"
)

// panicAt is the name of the instruction whose computation panics, or nil.
var panicAt atomic.Pointer[string]

// inWorker makes the armed kernel panic on a worker-pool goroutine (the
// cpu backend's kernels read it), not on the goroutine running the
// execution.
var inWorker atomic.Bool

// PanicAt arms a panic in the instruction named name (on a pool worker
// when inWorker) until the returned function disarms it.
func PanicAt(name string, worker bool) (disarm func()) {
	inWorker.Store(worker)
	panicAt.Store(&name)
	return func() { panicAt.Store(nil); inWorker.Store(false) }
}

// Any reports whether any fault is armed (inlined into the run loops:
// a check costs one load while disarmed).
func Any() bool { return panicAt.Load() != nil }

// Armed reports whether instruction name is to panic, and whether on a
// worker.
func Armed(name string) (armed, worker bool) {
	p := panicAt.Load()
	if p == nil || *p != name {
		return false, false
	}
	return true, inWorker.Load()
}

// Check panics if instruction name is armed.
func Check(name string) {
	if ok, _ := Armed(name); ok {
		Panic(name)
	}
}

// Panic is the injected panic.
func Panic(name string) {
	panic(fmt.Sprintf("faults: injected panic in %s", name))
}
