package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// windowKernels emits the AVX-512 window folds of channels-last pooling
// (kernels.WindowFoldF32): for each of n output pixels, each 16-lane
// block of its c channels is the fold of its window's taps in their
// order, each tap a run of channels at a byte offset from the pixel's
// window (taps), the windows step bytes apart. The fold is NaNMax's or
// NaNMin's: the running value's NaN, else the tap's, else the extreme,
// the running value on a tie; so a window's result is its first extreme
// tap in order (its first NaN), as the Go fold gives.
func windowKernels() {
	windowFold("windowMaxAVX512", "NaNMax", VMAXPS)
	windowFold("windowMinAVX512", "NaNMin", VMINPS)
}

func windowFold(name, f string, op func(...Op)) {
	TEXT(name, NOSPLIT, "func(dst, src *float32, taps *int, ntaps, n, c, step int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets, for o < n and each 16-lane block b of the c bytes of an output pixel, dst[o·c + b] to the %s fold over t < ntaps of src[o·step + 4·taps[t] + b] (c and step in bytes, taps in floats; ntaps ≥ 1, c a multiple of 64).", name, f))
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	taps := Load(Param("taps"), GP64())
	ntaps := Load(Param("ntaps"), GP64())
	n := Load(Param("n"), GP64())
	c := Load(Param("c"), GP64())
	step := Load(Param("step"), GP64())
	first := GP64()
	MOVQ(Mem{Base: taps}, first)
	Label(name + "_pixel")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	b := GP64()
	XORQ(b, b)
	Label(name + "_block")
	CMPQ(b, c)
	JAE(LabelRef(name + "_next"))
	at := GP64()
	LEAQ(Mem{Base: src, Index: first, Scale: 4}, at)
	acc := ZMM()
	VMOVUPS(Mem{Base: at, Index: b, Scale: 1}, acc)
	t := GP64()
	MOVQ(U32(1), t)
	Label(name + "_tap")
	CMPQ(t, ntaps)
	JAE(LabelRef(name + "_store"))
	MOVQ(Mem{Base: taps, Index: t, Scale: 8}, at)
	LEAQ(Mem{Base: src, Index: at, Scale: 4}, at)
	x, r := ZMM(), ZMM()
	VMOVUPS(Mem{Base: at, Index: b, Scale: 1}, x)
	foldInto(op, acc, x, r)
	INCQ(t)
	JMP(LabelRef(name + "_tap"))
	Label(name + "_store")
	VMOVUPS(acc, Mem{Base: dst, Index: b, Scale: 1})
	ADDQ(Imm(64), b)
	JMP(LabelRef(name + "_block"))
	Label(name + "_next")
	ADDQ(step, src)
	ADDQ(c, dst)
	DECQ(n)
	JMP(LabelRef(name + "_pixel"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// foldInto sets acc to the fold of acc and x (r is scratch), as
// extreme512's vectors: the op keeps acc on a tie of zeros, then x if it
// is NaN, then acc if it is.
func foldInto(op func(...Op), acc, x, r reg.VecVirtual) {
	ma, mx := K(), K()
	op(acc, x, r)
	VCMPPS(Imm(3), x, x, mx)
	VMOVAPS(x, mx, r)
	VCMPPS(Imm(3), acc, acc, ma)
	VMOVAPS(acc, ma, r)
	VMOVAPS(r, acc)
}
