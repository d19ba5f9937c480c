// Package mxcsr lets generated kernels run with the kernels' SSE control
// word (package kernels' mxcsrRun: flush-to-zero and denormals-are-zero,
// unless AXLE_DENORMALS=keep) and give the caller's back on return.
// MXCSR is per thread and Go code expects the default one, so a kernel
// sets it on entry and restores it before every RET: Go code never runs
// with it, and a goroutine moved to another thread takes nothing along
// (assembly is not preempted).
package mxcsr

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
)

// saved is the current function's slot for the caller's MXCSR, or nil
// where the function leaves MXCSR alone.
var saved *operand.Mem

// TEXT starts a function that leaves MXCSR alone unless it calls Run.
func TEXT(name string, a attr.Attribute, signature string) {
	saved = nil
	build.TEXT(name, a, signature)
}

// Run saves the caller's MXCSR in a local slot and loads the kernels'.
func Run() {
	m := build.AllocLocal(8) // 4 used; frames stay 8-byte multiples
	build.STMXCSR(m)
	build.LDMXCSR(operand.NewDataAddr(operand.Symbol{Name: "·mxcsrRun"}, 0))
	saved = &m
}

// RET returns, after giving the caller its MXCSR back if Run changed it.
func RET() {
	if saved != nil {
		build.LDMXCSR(*saved)
	}
	build.RET()
}
