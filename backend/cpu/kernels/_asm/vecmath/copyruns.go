package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// copyRunsKernel emits copyRunsAVX(dst, src *byte, rows, n, ds, ss int):
// rows runs of n bytes (n >= 4), run r from src+r·ss to dst+r·ds (the
// strides non-negative), each run with the widest moves it holds and its
// last move ending at the run's end, overlapping the one before it
// (within the run: dst and src are disjoint). The width is chosen once
// for all the runs, so a run costs its moves and no call: a channel
// concatenation copies a run of a few dozen bytes per pixel, and Go's
// memmove through copy cost about 5 ns a call there, an element loop
// 0.6 ns an element.
func copyRunsKernel() {
	TEXT("copyRunsAVX", NOSPLIT, "func(dst, src *byte, rows, n, ds, ss int)")
	Pragma("noescape")
	Doc("copyRunsAVX copies rows runs of n >= 4 bytes from src+r·ss to dst+r·ds (ds, ss >= 0).")
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	rows := Load(Param("rows"), GP64())
	n := Load(Param("n"), GP64())
	ds := Load(Param("ds"), GP64())
	ss := Load(Param("ss"), GP64())
	tail := GP64() // the last move's offset in a run: n minus its width
	// Runs of 32 bytes or more: 32-byte moves, the last at n-32.
	CMPQ(n, Imm(32))
	JB(LabelRef("cr_16"))
	MOVQ(n, tail)
	SUBQ(Imm(32), tail)
	i := GP64()
	Label("cr_32row")
	TESTQ(rows, rows)
	JZ(LabelRef("cr_done"))
	XORQ(i, i)
	Label("cr_32loop")
	CMPQ(i, tail)
	JAE(LabelRef("cr_32last"))
	v := YMM()
	VMOVDQU(Mem{Base: src, Index: i, Scale: 1}, v)
	VMOVDQU(v, Mem{Base: dst, Index: i, Scale: 1})
	ADDQ(Imm(32), i)
	JMP(LabelRef("cr_32loop"))
	Label("cr_32last")
	VMOVDQU(Mem{Base: src, Index: tail, Scale: 1}, v)
	VMOVDQU(v, Mem{Base: dst, Index: tail, Scale: 1})
	ADDQ(ds, dst)
	ADDQ(ss, src)
	DECQ(rows)
	JMP(LabelRef("cr_32row"))
	// Shorter runs: two moves of the widest size that fits, the second
	// ending at the run's end (the same bytes twice where n is the size).
	for _, w := range []struct {
		size int
		next string
		move func(a, b Op)
		r    func() reg.Register
	}{
		{16, "cr_8", func(a, b Op) { VMOVDQU(a, b) }, func() reg.Register { return XMM() }},
		{8, "cr_4", func(a, b Op) { MOVQ(a, b) }, func() reg.Register { return GP64() }},
		{4, "cr_done", func(a, b Op) { MOVL(a, b) }, func() reg.Register { return GP32() }},
	} {
		Label(fmt.Sprintf("cr_%d", w.size))
		if w.size > 4 {
			CMPQ(n, Imm(uint64(w.size)))
			JB(LabelRef(w.next))
		}
		MOVQ(n, tail)
		SUBQ(Imm(uint64(w.size)), tail)
		row := fmt.Sprintf("cr_%drow", w.size)
		Label(row)
		TESTQ(rows, rows)
		JZ(LabelRef("cr_done"))
		a, b := w.r(), w.r()
		w.move(Mem{Base: src}, a)
		w.move(Mem{Base: src, Index: tail, Scale: 1}, b)
		w.move(a, Mem{Base: dst})
		w.move(b, Mem{Base: dst, Index: tail, Scale: 1})
		ADDQ(ds, dst)
		ADDQ(ss, src)
		DECQ(rows)
		JMP(LabelRef(row))
	}
	Label("cr_done")
	VZEROUPPER()
	RET()
}
