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
	windowFold256("windowMaxAVX2", "NaNMax", VMAXPS)
	windowFold256("windowMinAVX2", "NaNMin", VMINPS)
	packCols16()
}

// windowFold256 is windowFold on AVX2, 8-lane blocks (c a multiple of
// 32 bytes), four blocks at a time where four remain (one tap's offset
// loaded for 32 channels, not 8). AVX2 has no mask registers, and
// nanExtreme's two compares and two blends a tap cost three times the
// fold itself (ResNet's stem pool); so the blocks are first folded with
// the op alone, which is NaNMax's (NaNMin's) fold wherever no tap after
// the first is NaN: with the tap as the op's first source it keeps the
// running value on a tie and on the running value's NaN. A NaN in a
// later tap would be lost, so those taps' unordered compares are ORed
// up, and blocks that saw one are folded again the exact way.
func windowFold256(name, f string, op func(...Op)) {
	dst, src, taps, ntaps, n, c, step, first := windowFoldHead(name, f, 8)
	b, at, t, end := GP64(), GP64(), GP64(), GP64()
	Label(name + "_pixel")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	XORQ(b, b)
	for _, g := range []int{4, 1} {
		l := fmt.Sprintf("%s_%d", name, g)
		Label(l + "_blocks")
		LEAQ(Mem{Base: b, Disp: 32 * g}, end)
		CMPQ(end, c)
		JA(LabelRef(fmt.Sprintf("%s_%d_blocks", name, g/4)))
		tap := Mem{Base: at, Index: b, Scale: 1} // the blocks' first at the current tap
		acc := make([]reg.VecVirtual, g)
		for i := range acc {
			acc[i] = YMM()
		}
		// loadFirst loads the first tap's blocks into acc; foldTaps runs
		// fold over every later tap, label being its loop.
		loadFirst := func() {
			LEAQ(Mem{Base: src, Index: first, Scale: 4}, at)
			for i := range acc {
				VMOVUPS(tap.Offset(32*i), acc[i])
			}
		}
		foldTaps := func(label, done string, fold func(i int)) {
			MOVQ(U32(1), t)
			Label(label)
			CMPQ(t, ntaps)
			JAE(LabelRef(done))
			MOVQ(Mem{Base: taps, Index: t, Scale: 8}, at)
			LEAQ(Mem{Base: src, Index: at, Scale: 4}, at)
			for i := range acc {
				fold(i)
			}
			INCQ(t)
			JMP(LabelRef(label))
		}
		loadFirst()
		nan := YMM()
		VXORPS(nan, nan, nan)
		foldTaps(l+"_tap", l+"_check", func(i int) {
			x, u := YMM(), YMM()
			VMOVUPS(tap.Offset(32*i), x)
			VCMPPS(Imm(3), x, x, u) // unordered: x is NaN
			VORPS(u, nan, nan)
			op(acc[i], x, acc[i]) // x beyond acc ? x : acc
		})
		Label(l + "_check")
		VTESTPS(nan, nan)
		JZ(LabelRef(l + "_store"))
		// A later tap was NaN: fold the blocks again, NaN by NaN.
		loadFirst()
		foldTaps(l+"_exact", l+"_store", func(i int) {
			y, r, m := YMM(), YMM(), YMM()
			VMOVUPS(tap.Offset(32*i), y)
			op(acc[i], y, r)
			VCMPPS(Imm(3), y, y, m)
			VBLENDVPS(m, y, r, r)
			VCMPPS(Imm(3), acc[i], acc[i], m)
			VBLENDVPS(m, acc[i], r, r)
			VMOVAPS(r, acc[i])
		})
		Label(l + "_store")
		for i := range acc {
			VMOVUPS(acc[i], Mem{Base: dst, Index: b, Scale: 1, Disp: 32 * i})
		}
		MOVQ(end, b)
		JMP(LabelRef(l + "_blocks"))
	}
	Label(name + "_0_blocks") // no block left of this pixel
	ADDQ(step, src)
	ADDQ(c, dst)
	DECQ(n)
	JMP(LabelRef(name + "_pixel"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func windowFold(name, f string, op func(...Op)) {
	dst, src, taps, ntaps, n, c, step, first := windowFoldHead(name, f, 16)
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

// windowFoldHead emits a window fold's TEXT, doc and parameter loads for
// blocks of lanes floats, and the first tap's offset.
func windowFoldHead(name, f string, lanes int) (dst, src, taps, ntaps, n, c, step, first reg.Register) {
	TEXT(name, NOSPLIT, "func(dst, src *float32, taps *int, ntaps, n, c, step int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets, for o < n and each %d-lane block b of the c bytes of an output pixel, dst[o·c + b] to the %s fold over t < ntaps of src[o·step + 4·taps[t] + b] (c and step in bytes, taps in floats; ntaps ≥ 1, c a multiple of %d).", name, lanes, f, 4*lanes))
	dst = Load(Param("dst"), GP64())
	src = Load(Param("src"), GP64())
	taps = Load(Param("taps"), GP64())
	ntaps = Load(Param("ntaps"), GP64())
	n = Load(Param("n"), GP64())
	c = Load(Param("c"), GP64())
	step = Load(Param("step"), GP64())
	first = GP64()
	MOVQ(Mem{Base: taps}, first)
	return
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

// packCols16 emits the AVX-512 packing of sixteen contiguous columns of
// a B (a transposed operand: attention's keys, whose rows are Qᵀ's
// columns) into a 16-wide sliver: each step loads sixteen columns'
// next sixteen values and transposes the 16×16 block in registers
// (unpack ps, unpack pd, then two rounds of 128-bit lane shuffles), so
// the sliver's rows are stored whole. The Go side packs the last k%16
// rows.
func packCols16() {
	TEXT("packCols16AVX512", NOSPLIT, "func(k int, src *float32, ld int, dst *float32)")
	Pragma("noescape")
	Doc("packCols16AVX512 sets dst[p·16+c] = src[c·ld+p] for c < 16 and p < k rounded down to a multiple of 16.")
	k := Load(Param("k"), GP64())
	src := Load(Param("src"), GP64())
	ld := Load(Param("ld"), GP64())
	dst := Load(Param("dst"), GP64())
	SHLQ(Imm(2), ld)
	ld3 := GP64()
	LEAQ(Mem{Base: ld, Index: ld, Scale: 2}, ld3)
	SHRQ(Imm(4), k)
	Label("pc16_loop")
	TESTQ(k, k)
	JZ(LabelRef("pc16_done"))
	// Rows r[c]: column c's next sixteen values, at src + c·ld.
	var r [16]reg.VecVirtual
	base := GP64()
	MOVQ(src, base)
	for c := range 16 {
		r[c] = ZMM()
		switch c % 4 {
		case 0:
			VMOVUPS(Mem{Base: base}, r[c])
		case 1:
			VMOVUPS(Mem{Base: base, Index: ld, Scale: 1}, r[c])
		case 2:
			VMOVUPS(Mem{Base: base, Index: ld, Scale: 2}, r[c])
		case 3:
			VMOVUPS(Mem{Base: base, Index: ld3, Scale: 1}, r[c])
			if c < 15 {
				LEAQ(Mem{Base: base, Index: ld, Scale: 4}, base)
			}
		}
	}
	// t: pairs of columns interleaved within 128-bit lanes.
	var t [16]reg.VecVirtual
	for i := 0; i < 16; i += 2 {
		t[i], t[i+1] = ZMM(), ZMM()
		VUNPCKLPS(r[i+1], r[i], t[i])   // r[i][0] r[i+1][0] r[i][1] r[i+1][1] per lane
		VUNPCKHPS(r[i+1], r[i], t[i+1]) // r[i][2] r[i+1][2] r[i][3] r[i+1][3]
	}
	// u: four columns per 128-bit lane; u[4g+q] holds columns 4g..4g+3
	// at values q, q+4, q+8, q+12 of its lanes.
	var u [16]reg.VecVirtual
	for g := range 4 {
		a, b := t[4*g], t[4*g+2]     // columns 4g,4g+1 and 4g+2,4g+3: values 0,1 of each lane
		a2, b2 := t[4*g+1], t[4*g+3] // values 2,3
		for q := range 4 {
			u[4*g+q] = ZMM()
		}
		VUNPCKLPD(b, a, u[4*g])
		VUNPCKHPD(b, a, u[4*g+1])
		VUNPCKLPD(b2, a2, u[4*g+2])
		VUNPCKHPD(b2, a2, u[4*g+3])
	}
	// For value q: lanes of u[q] (columns 0-3), u[4+q] (4-7), u[8+q]
	// (8-11), u[12+q] (12-15) at values q, q+4, q+8, q+12; two rounds of
	// lane shuffles gather each value's four lanes.
	for q := range 4 {
		v0, v1, v2, v3 := ZMM(), ZMM(), ZMM(), ZMM()
		VSHUFF32X4(Imm(0x88), u[4+q], u[q], v0)    // u[q].l0 u[q].l2 u[4+q].l0 u[4+q].l2: values q, q+8
		VSHUFF32X4(Imm(0xDD), u[4+q], u[q], v1)    // values q+4, q+12
		VSHUFF32X4(Imm(0x88), u[12+q], u[8+q], v2) // columns 8-15, values q, q+8
		VSHUFF32X4(Imm(0xDD), u[12+q], u[8+q], v3) // values q+4, q+12
		o := ZMM()
		VSHUFF32X4(Imm(0x88), v2, v0, o)
		VMOVUPS(o, Mem{Base: dst, Disp: 64 * q})
		VSHUFF32X4(Imm(0xDD), v2, v0, o)
		VMOVUPS(o, Mem{Base: dst, Disp: 64 * (q + 8)})
		VSHUFF32X4(Imm(0x88), v3, v1, o)
		VMOVUPS(o, Mem{Base: dst, Disp: 64 * (q + 4)})
		VSHUFF32X4(Imm(0xDD), v3, v1, o)
		VMOVUPS(o, Mem{Base: dst, Disp: 64 * (q + 12)})
	}
	ADDQ(Imm(64), src)
	ADDQ(U32(1024), dst)
	DECQ(k)
	JMP(LabelRef("pc16_loop"))
	Label("pc16_done")
	VZEROUPPER()
	RET()
}
