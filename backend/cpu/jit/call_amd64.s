//go:build linux && amd64 && !purego

#include "textflag.h"

// func call(code uintptr, args unsafe.Pointer)
//
// call runs generated code with the argument block's address in DI. The
// code uses no stack, keeps SP, BP, R14 and R15, and returns with RET.
TEXT ·call(SB), NOSPLIT, $0-16
	MOVQ code+0(FP), AX
	MOVQ args+8(FP), DI
	CALL AX
	RET
