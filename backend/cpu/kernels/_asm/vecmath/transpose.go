package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// transposeKernels emits the register transposes of the tiled copies
// (kernels.Transpose): dst[i·dr + j] = src[i + j·sc] over a block whose
// sides are multiples of the square's side, 8×8 squares of 32-bit words
// and 4×4 of 64-bit ones, each read as rows of the source, shuffled in
// registers and written as rows of the destination. Go's 4×4 blocks
// through general registers moved about 1.1 ns an element (an ONNX
// model's NHWC→NCHW relayout of 112²×96 floats took 1.4 ms on one
// thread); the AVX2 shuffles, the same on every host with AVX2, cost
// three a row of eight.
func transposeKernels() {
	transposeKernel(4, 8, transpose8x32)
	transposeKernel(8, 4, transpose4x64)
}

// transposeKernel emits transpose<bits>AVX(dst, src *word, rows, cols,
// dr, sc int) for words of size bytes, square×square squares: the
// squares run down i (rows) inside a loop over bands of j (cols), so
// the source rows a band reads stay in L1 while its squares use them.
func transposeKernel(size, square int, body func(sp, dp, sc, sc3, dr, dr3 reg.Register)) {
	name := fmt.Sprintf("transpose%dAVX", 8*size)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, src *uint%d, rows, cols, dr, sc int)", 8*size))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets dst[i·dr+j] = src[i+j·sc] for i < rows, j < cols (both multiples of %d).", name, square))
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	dr := Load(Param("dr"), GP64())
	sc := Load(Param("sc"), GP64())
	// Strides in bytes, and three of each for the fourth row of a group.
	SHLQ(Imm(uint64(log2(size))), dr)
	SHLQ(Imm(uint64(log2(size))), sc)
	dr3, sc3 := GP64(), GP64()
	LEAQ(Mem{Base: dr, Index: dr, Scale: 2}, dr3)
	LEAQ(Mem{Base: sc, Index: sc, Scale: 2}, sc3)
	// band is square source rows' bytes: how far src moves a band of j.
	band := GP64()
	MOVQ(sc, band)
	SHLQ(Imm(uint64(log2(square))), band)
	sp, dp, i := GP64(), GP64(), GP64()
	Label(name + "_band")
	CMPQ(cols, Imm(0))
	JLE(LabelRef(name + "_done"))
	MOVQ(src, sp)
	MOVQ(dst, dp)
	MOVQ(rows, i)
	Label(name + "_square")
	CMPQ(i, Imm(0))
	JLE(LabelRef(name + "_next"))
	body(sp, dp, sc, sc3, dr, dr3)
	ADDQ(Imm(uint64(size*square)), sp)
	LEAQ(Mem{Base: dp, Index: dr, Scale: uint8(square)}, dp)
	SUBQ(Imm(uint64(square)), i)
	JMP(LabelRef(name + "_square"))
	Label(name + "_next")
	ADDQ(band, src)
	ADDQ(Imm(uint64(size*square)), dst)
	SUBQ(Imm(uint64(square)), cols)
	JMP(LabelRef(name + "_band"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// rowsAt returns the addresses of n rows stride apart from base, in
// groups of four, each group from a pointer four rows past the last.
func rowsAt(base, stride, stride3 reg.Register, n int) []Mem {
	var ms []Mem
	p := base
	for g := 0; g < n; g += 4 {
		if g > 0 {
			q := GP64()
			LEAQ(Mem{Base: p, Index: stride, Scale: 4}, q)
			p = q
		}
		ms = append(ms, Mem{Base: p}, Mem{Base: p, Index: stride, Scale: 1},
			Mem{Base: p, Index: stride, Scale: 2}, Mem{Base: p, Index: stride3, Scale: 1})
	}
	return ms[:n]
}

// transpose8x32 transposes one 8×8 square of 32-bit words: source row k
// (8 consecutive i) into lane k of destination rows i. Unpacks pair rows
// 2k and 2k+1 lane by lane, shuffles gather four rows' lanes in each
// 128-bit half, and the cross-half permutes join rows 0–3 with rows 4–7.
func transpose8x32(sp, dp, sc, sc3, dr, dr3 reg.Register) {
	in := rowsAt(sp, sc, sc3, 8)
	r := make([]reg.VecVirtual, 8)
	for k := range r {
		r[k] = YMM()
		VMOVUPS(in[k], r[k])
	}
	t := make([]reg.VecVirtual, 8)
	for k := 0; k < 8; k += 2 {
		t[k], t[k+1] = YMM(), YMM()
		VUNPCKLPS(r[k+1], r[k], t[k])   // lanes 0, 1 of rows k, k+1 interleaved | lanes 4, 5
		VUNPCKHPS(r[k+1], r[k], t[k+1]) // lanes 2, 3 | 6, 7
	}
	// u[4h+m]: lane m (in the high half m+4) of rows 4h..4h+3.
	u := make([]reg.VecVirtual, 8)
	for h := range 2 {
		a, b, c, d := t[4*h], t[4*h+1], t[4*h+2], t[4*h+3]
		for m := range 4 {
			u[4*h+m] = YMM()
		}
		VSHUFPS(Imm(0x44), c, a, u[4*h])
		VSHUFPS(Imm(0xee), c, a, u[4*h+1])
		VSHUFPS(Imm(0x44), d, b, u[4*h+2])
		VSHUFPS(Imm(0xee), d, b, u[4*h+3])
	}
	out := rowsAt(dp, dr, dr3, 8)
	for m := range 4 {
		lo, hi := YMM(), YMM()
		VPERM2F128(Imm(0x20), u[m+4], u[m], lo) // lane m of rows 0–7
		VPERM2F128(Imm(0x31), u[m+4], u[m], hi) // lane m+4
		VMOVUPS(lo, out[m])
		VMOVUPS(hi, out[m+4])
	}
}

// transpose4x64 transposes one 4×4 square of 64-bit words: unpacks pair
// rows 0–1 and 2–3, the cross-half permutes join the pairs.
func transpose4x64(sp, dp, sc, sc3, dr, dr3 reg.Register) {
	in := rowsAt(sp, sc, sc3, 4)
	r := make([]reg.VecVirtual, 4)
	for k := range r {
		r[k] = YMM()
		VMOVUPD(in[k], r[k])
	}
	t := make([]reg.VecVirtual, 4)
	for k := 0; k < 4; k += 2 {
		t[k], t[k+1] = YMM(), YMM()
		VUNPCKLPD(r[k+1], r[k], t[k])   // lane 0 of rows k, k+1 | lane 2
		VUNPCKHPD(r[k+1], r[k], t[k+1]) // lane 1 | lane 3
	}
	out := rowsAt(dp, dr, dr3, 4)
	for m, p := range [][3]int{{0x20, 0, 2}, {0x20, 1, 3}, {0x31, 0, 2}, {0x31, 1, 3}} {
		o := YMM()
		VPERM2F128(Imm(uint64(p[0])), t[p[2]], t[p[1]], o) // lane m of rows 0–3
		VMOVUPD(o, out[m])
	}
}
