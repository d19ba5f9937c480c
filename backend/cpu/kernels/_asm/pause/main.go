// Command pause generates the spin-wait hint of package kernels
// (pause_amd64.s): n PAUSE instructions, which tell the core that the
// loop around them waits for memory another core writes. A waiting pool
// worker then leaves its core's execution units to a hyperthread sibling
// (on a VM whose two vCPUs are siblings, the sibling may be the thread
// the worker waits for) and does not flood the memory order machinery
// with loads that all see the same value.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
)

func main() {
	ConstraintExpr("amd64,!purego")
	TEXT("pause", NOSPLIT, "func(n int)")
	Doc("pause executes n PAUSE instructions (n ≥ 1).")
	n := Load(Param("n"), GP64())
	Label("loop")
	PAUSE()
	DECQ(n)
	JNZ(LabelRef("loop"))
	RET()
	Generate()
}
