//go:build linux

package kernels

import "syscall"

// osYield gives the calling thread's CPU to another runnable thread, if
// any (sched_yield; relax).
func osYield() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
