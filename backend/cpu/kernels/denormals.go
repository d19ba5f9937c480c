package kernels

import (
	"os"
	"sync/atomic"
)

// Denormals. XLA's CPU client runs computations with the SSE control
// word set to flush subnormal results to zero and to read subnormal
// inputs as zero (FTZ and DAZ, TensorFlow's convention). With
// AXLE_DENORMALS=flush (or SetFlushDenormals(true)) the packed GEMM's
// blocks do the same (dot, and convolution through im2col): on Intel
// cores every FMA with a subnormal operand takes a microcode assist of
// a hundred cycles or more, and a transformer block's attention on
// realistic magnitudes (softmax probabilities far below 1e-38, then
// P·V) ran 4.7× slower with them on the AVX-512 host.
//
// It is not the default: results then differ from the evaluator's (and
// PyTorch's) wherever subnormals meet the products, and training can
// feel it. The dense example, trained with Adam (which scales tiny
// gradients up to full steps), ends at 0.767 test accuracy flushing and
// at 0.800 keeping them, the same as before. Its weight gradient, where
// the subnormals were, now avoids the assists by scaling instead
// (gemm_subnormal.go), which keeps the results.
//
// MXCSR is per thread and Go code expects the default, so a block sets
// it with its goroutine locked to the thread and gives the default back
// at the end (flushStart, flushEnd): nothing else ever runs with it.
// Setting it costs tens of cycles and waits for the floating-point work
// in flight, so it is done per block (tens of microseconds of work),
// not per kernel call: the same switch in every assembly kernel made
// softmax_4096x1024, with a few small calls per row, 23% slower. So the
// other kernels (elementwise, reductions, exp, tanh, logistic, the
// generated code, the skinny and direct products) keep subnormals
// either way, and purego builds always keep them.

// MXCSR bits: the default (all exceptions masked, round to nearest),
// flush-to-zero and denormals-are-zero.
const (
	mxcsrDefault = 0x1F80
	mxcsrFTZ     = 0x8000
	mxcsrDAZ     = 0x0040
)

// mxcsrRun is the control word the GEMM's blocks run with.
var mxcsrRun atomic.Uint32

func init() { SetFlushDenormals(os.Getenv("AXLE_DENORMALS") == "flush") }

// SetFlushDenormals sets whether the GEMM's blocks flush subnormal values
// to zero (see above) and reports the previous setting. It is
// process-wide; blocks already running keep theirs.
func SetFlushDenormals(flush bool) (was bool) {
	v := uint32(mxcsrDefault)
	if flush {
		v |= mxcsrFTZ | mxcsrDAZ
	}
	return mxcsrRun.Swap(v)&mxcsrFTZ != 0
}

// FlushDenormals reports whether the GEMM's blocks flush subnormal values
// to zero.
func FlushDenormals() bool { return mxcsrRun.Load()&mxcsrFTZ != 0 }
