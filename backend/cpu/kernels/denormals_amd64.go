//go:build amd64 && !purego

package kernels

import "runtime"

// flushStart locks the goroutine to its thread and sets the thread's SSE
// control word to mxcsrRun; it returns the word to give back.
func flushStart() uint32 {
	runtime.LockOSThread()
	m := getMXCSR()
	if r := mxcsrRun.Load(); r != m {
		setMXCSR(r)
	}
	return m
}

// flushEnd gives the thread its control word m back and unlocks the
// goroutine.
func flushEnd(m uint32) {
	if getMXCSR() != m {
		setMXCSR(m)
	}
	runtime.UnlockOSThread()
}
