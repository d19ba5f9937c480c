package kernels

import (
	"os"
	"sync/atomic"
)

// Denormals. XLA's CPU client runs computations with the SSE control
// word set to flush subnormal results to zero and to read subnormal
// inputs as zero (FTZ and DAZ, TensorFlow's convention), and the
// assembly kernels and the generated code do the same by default: on
// Intel cores every multiply or FMA with a subnormal operand or result
// takes a microcode assist of a hundred cycles or more. A transformer
// block's attention on realistic magnitudes (softmax probabilities far
// below 1e-38, then P·V) ran 4.4× slower on the AVX-512 host with them.
// Each kernel sets MXCSR on entry and gives the caller's back before it
// returns (MXCSR is per thread; Go code expects the default), so only
// the kernels flush: loops in Go (the portable kernels, purego builds,
// ops without assembly) keep IEEE gradual underflow, as the evaluator
// does. AXLE_DENORMALS=keep, or SetFlushDenormals(false), keeps it in
// the kernels too.

// MXCSR bits: the default (all exceptions masked, round to nearest),
// flush-to-zero and denormals-are-zero.
const (
	mxcsrDefault = 0x1F80
	mxcsrFTZ     = 0x8000
	mxcsrDAZ     = 0x0040
)

// mxcsrRun is the control word the kernels run with (read by the
// assembly, where _asm/mxcsr puts it on entry).
var mxcsrRun uint32 = mxcsrFor(os.Getenv("AXLE_DENORMALS") != "keep")

func mxcsrFor(flush bool) uint32 {
	if flush {
		return mxcsrDefault | mxcsrFTZ | mxcsrDAZ
	}
	return mxcsrDefault
}

// SetFlushDenormals sets whether the assembly kernels and generated code
// flush subnormal values to zero (see above) and reports the previous
// setting. It is process-wide; kernels already running keep theirs.
func SetFlushDenormals(flush bool) (was bool) {
	return atomic.SwapUint32(&mxcsrRun, mxcsrFor(flush)) != mxcsrDefault
}

// FlushDenormals reports whether the assembly kernels and generated code
// flush subnormal values to zero.
func FlushDenormals() bool { return atomic.LoadUint32(&mxcsrRun) != mxcsrDefault }

// MXCSR is the SSE control word the kernels run with, for generated code
// to load as they do.
func MXCSR() uint32 { return atomic.LoadUint32(&mxcsrRun) }
