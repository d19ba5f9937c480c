//go:build !linux

package kernels

// osYield pauses between polls where no sched_yield is at hand (relax).
func osYield() { pause(relaxPauses) }
