// Command gemm generates the AVX2+FMA GEMM micro-kernels and the FMA
// peak probe of package kernels (gemm_amd64.s).
package main

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	sgemmKernel()
	sgemmTapsKernel()
	tapsKernelOf("sgemm6x16tapsf", false, 2, false, true)
	tapsKernelOfOps("sgemm6x16tapsfo", false, 2, false, true, true)
	tapsKernelOf("sgemm6x8taps", false, 1, false, false)
	dgemmKernel()
	pairKernel("sgemm12x32z", 2, 4)
	pairKernel("sgemm6x32z", 1, 4)
	pairKernel("dgemm12x16z", 2, 8)
	pairKernel("dgemm6x16z", 1, 8)
	tapsKernelPF("sgemm6x32tapsz")
	tapsKernelOf("sgemm6x32tapszm", true, 2, true, false)
	tapsKernelOf("sgemm6x16tapszm", true, 1, true, false)
	depthwisePixelOf("depthwisePixel512", true)
	pairKernelOf("q8gemm12x32z", 2, 4, "quad")
	pairKernelOf("q8gemm6x32z", 1, 4, "quad")
	for _, rows := range []int{12, 8, 6, 4} {
		directKernel(fmt.Sprintf("sgemm%dx32zd", rows), rows, false)
		directKernel(fmt.Sprintf("sgemm%dx32zdp", rows), rows, true)
		directKernelPF(fmt.Sprintf("sgemm%dx32zdf", rows), rows)
		directKernelOps(fmt.Sprintf("sgemm%dx32zdo", rows), rows, false, false)
		directKernelOps(fmt.Sprintf("sgemm%dx32zdpo", rows), rows, true, false)
		directKernelOps(fmt.Sprintf("sgemm%dx32zdfo", rows), rows, false, true)
	}
	directTapsKernel("sgemm12x32tapsz")
	directTapsKernelOps("sgemm12x32tapszo")
	tapsKernelOps("sgemm6x32tapszo")
	directTapsKernelOf("sgemm12x32tapszm", 2, true)
	directTapsKernelOf("sgemm12x16tapszm", 1, true)
	skinnyKernel("sgemm12x16zs")
	for _, ops := range []bool{false, true} {
		for vecs := 1; vecs <= 4; vecs++ {
			for _, masked := range []bool{false, true} {
				name := fmt.Sprintf("sgemmRows%dx%d", rowsOf[vecs], 8*vecs)
				if masked {
					name += "m"
				}
				if ops {
					name += "o"
				}
				rowsKernel(name, vecs, masked, ops)
			}
		}
	}
	vnni8Peak()
	s8gemmKernel()
	fmaPeak()
	fmaPeak512()
	maddPeak()
	packPairs16S8()
	interleaveBF16()
	packRows6S8()
	packQuads16()
	packQuads6()
	packRows6F32()
	packRows16()
	packRowsMasked16()
	prefetch()
	depthwisePixel()
	mxcsr()
	Generate()
}

// microKernel emits C[rows x 2*lanes] += A·B over k steps, A packed as
// rows values per step, B as 2 vectors per step, C row-major with row
// stride ldc elements. 2*rows accumulators live in registers for the
// whole loop; each step loads two B vectors, broadcasts each A value and
// issues 2*rows FMAs. The k loop is unrolled by 4.
func microKernel(name string, rows, size int, bcast func(Op, reg.VecVirtual), load func(Op, reg.VecVirtual),
	fma func(Op, Op, Op), add func(Op, Op, Op), store func(Op, Op)) {
	microKernelOf(name, rows, size, false, false, bcast, load, fma, add, store)
}

// microKernelOf is microKernel with, pf, tapsKernelPF's prefetch stream
// (parameters pfOff and pfStep: the line at b+pfOff into L2 every two
// steps of four, pfStep bytes further each time): the AVX2 GEMM's tiles
// over one B sliver ask for their shares of the next sliver of a B
// packed before the product (a model's weights), which comes from
// memory, as the AVX-512 pair kernels' streams do.
func microKernelOf(name string, rows, size int, pf, ops bool, bcast func(Op, reg.VecVirtual), load func(Op, reg.VecVirtual),
	fma func(Op, Op, Op), add func(Op, Op, Op), store func(Op, Op)) {
	microKernelDirectOf(name, rows, size, false, pf, ops, bcast, load, fma, add, store)
}

// microKernelDirectOf is microKernelOf with, direct, A's rows read where
// they lie, lda elements apart (directKernel's rowBases), instead of
// packed: the same steps in the same order, so the same bits, without
// packing A, which under the column split each thread does for all of A
// (a transformer's 128-row products on two threads).
func microKernelDirectOf(name string, rows, size int, direct, pf, ops bool, bcast func(Op, reg.VecVirtual), load func(Op, reg.VecVirtual),
	fma func(Op, Op, Op), add func(Op, Op, Op), store func(Op, Op)) {
	microKernelTilesOf(name, rows, size, direct, pf, ops, false, bcast, load, fma, add, store)
}

// microKernelTilesOf is microKernelDirectOf with, tiles, a last
// parameter tiles: the kernel computes that many tiles down a column of
// C, each rows rows below the one before, from consecutive tiles of
// packed A, over the one B sliver, their residual rows and prefetch
// stream advancing with them (the stream as the macro-kernel's shares,
// streamShare: kb/2 prefetches a tile). A 6×16 tile of a product 32
// deep is ~300 cycles, of which the Go around a call per tile took a
// fifth (ResNet's pointwise convolutions, BENCHMARKS.md).
func microKernelTilesOf(name string, rows, size int, direct, pf, ops, tiles bool, bcast func(Op, reg.VecVirtual), load func(Op, reg.VecVirtual),
	fma func(Op, Op, Op), add func(Op, Op, Op), store func(Op, Op)) {
	sig := fmt.Sprintf("func(k int, a, b, c *%s, ldc int, overwrite bool)", map[int]string{4: "float32", 8: "float64"}[size])
	doc := []string{fmt.Sprintf("%s computes C[%dx%d] += A·B (C = A·B if overwrite) over k steps (A packed %d per step, B packed %d per step).",
		name, rows, 64/size, rows, 64/size)}
	if direct {
		sig = "func(k int, a *float32, lda int, b, c *float32, ldc int, overwrite bool)"
		doc = []string{fmt.Sprintf("%s computes C[%dx%d] += A·B (C = A·B if overwrite) over k steps from %d rows of A, lda apart, and a packed %d-column B sliver.",
			name, rows, 64/size, rows, 64/size)}
	}
	if pf {
		sig = sig[:len(sig)-1] + ", pfOff, pfStep int)"
		doc = append(doc, "Every two steps of four it prefetches the line at b+pfOff into L2, pfStep bytes further each time.")
	}
	if ops {
		sig = sig[:len(sig)-1] + opsParams
		doc = append(doc, opsDocOf(64/size))
	}
	if tiles {
		sig = sig[:len(sig)-1] + ", tiles int)"
		doc = append(doc, fmt.Sprintf("It computes tiles such tiles down a column of C, %d rows apart, from consecutive tiles of packed A; c, res and the prefetch stream advance with them.", rows))
	}
	TEXT(name, NOSPLIT, sig)
	Doc(doc...)
	microKernelBodyTiles(name, rows, size, direct, pf, ops, tiles, bcast, load, fma, add, store)
}

// microKernelBody is microKernel after the TEXT and Doc lines: size is
// the bytes of one packed A value per row and step and of one C element.
func microKernelBody(name string, rows, size int, bcast func(Op, reg.VecVirtual), load func(Op, reg.VecVirtual),
	fma func(Op, Op, Op), add func(Op, Op, Op), store func(Op, Op)) {
	microKernelBodyOf(name, rows, size, false, false, false, bcast, load, fma, add, store)
}

// microKernelBodyOf is microKernelBody with microKernelOf's pf and ops
// (f32: the tile finished as it is stored, storeOpsAndReturnW).
func microKernelBodyOf(name string, rows, size int, direct, pf, ops bool, bcast func(Op, reg.VecVirtual), load func(Op, reg.VecVirtual),
	fma func(Op, Op, Op), add func(Op, Op, Op), store func(Op, Op)) {
	microKernelBodyTiles(name, rows, size, direct, pf, ops, false, bcast, load, fma, add, store)
}

// microKernelBodyTiles is microKernelBodyOf looping over tiles where
// tiles is set (microKernelTilesOf): each pass reloads its parameters,
// which the pass before advanced in place.
func microKernelBodyTiles(name string, rows, size int, direct, pf, ops, tiles bool, bcast func(Op, reg.VecVirtual), load func(Op, reg.VecVirtual),
	fma func(Op, Op, Op), add func(Op, Op, Op), store func(Op, Op)) {
	Pragma("noescape")
	if tiles {
		Label(name + "_tile")
	}
	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	as := []reg.Register{a}
	var ld reg.Register
	if direct {
		as, ld = directBases(a, rows)
	}
	var pfp, pfStep reg.Register
	if pf {
		pfp, pfStep = Load(Param("pfOff"), GP64()), Load(Param("pfStep"), GP64())
		ADDQ(b, pfp)
	}
	// Start pulling the C tile into L1 now: it is read and written once at
	// the end, and its rows are a whole row of C apart, so without this
	// each of them is a cache miss the FMAs cannot hide.
	{
		c, ldc := loadC(size)
		for i := range rows {
			PREFETCHT0(Mem{Base: c})
			PREFETCHT0(Mem{Base: c, Disp: 63})
			if i < rows-1 {
				ADDQ(ldc, c)
			}
		}
	}
	if ops {
		prefetchResidualW(name, rows, 32)
	}
	var ah *tilesAhead
	if pf {
		ah = newTilesAhead(name, rows, ops)
	}
	acc := make([]reg.VecVirtual, 2*rows)
	for i := range acc {
		acc[i] = YMM()
		VXORPS(acc[i], acc[i], acc[i])
	}
	b0, b1 := YMM(), YMM()
	step := func(s int) {
		if ah != nil && s == 0 {
			ah.emit()
		}
		if pf && s%2 == 1 {
			PREFETCHT1(Mem{Base: pfp})
			ADDQ(pfStep, pfp)
		}
		load(Mem{Base: b, Disp: s * 64}, b0)
		load(Mem{Base: b, Disp: s*64 + 32}, b1)
		for i := range rows {
			x := YMM()
			m := Mem{Base: a, Disp: (s*rows + i) * size}
			if direct {
				m = rowAt(as, ld, i, s*size)
			}
			bcast(m, x)
			fma(b0, x, acc[2*i])
			fma(b1, x, acc[2*i+1])
		}
	}
	kLoop4(name, k, step, func(n int) {
		if direct {
			for _, base := range as {
				ADDQ(U32(n*size), base)
			}
		} else {
			ADDQ(U32(n*rows*size), a)
		}
		ADDQ(U32(n*64), b)
	}, name+"_store")
	Label(name + "_store")
	if ops && tiles {
		storeOpsThenW(name, rows, 32, acc, func() { nextTile(name, rows, size, pf) })
		return
	}
	if ops {
		storeOpsAndReturnW(name, rows, 32, acc)
		return
	}
	storeAndReturn(name, size, func(c, ldc reg.Register, put func(Mem, reg.VecVirtual)) {
		storeTile(rows, c, ldc, acc, put)
	}, add, store)
}

// nextTile advances a multi-tile kernel's parameters to its next tile
// and jumps back to its start while tiles remain: a to the next packed
// tile (rows·k values on), c and res rows rows down, the prefetch
// stream's offset past the kb/2 lines of this tile's share.
func nextTile(name string, rows, size int, pf bool) {
	left := Load(Param("tiles"), GP64())
	DECQ(left)
	Store(left, Param("tiles"))
	JZ(LabelRef(name + "_done"))
	k := Load(Param("k"), GP64())
	t := GP64()
	MOVQ(k, t)
	IMUL3Q(Imm(uint64(rows*size)), t, t)
	a := Load(Param("a"), GP64())
	ADDQ(t, a)
	Store(a, Param("a"))
	c, ldc := loadC(size)
	IMUL3Q(Imm(uint64(rows)), ldc, ldc)
	ADDQ(ldc, c)
	Store(c, Param("c"))
	// The residual advances only where there is one (flags 4): res is
	// nil otherwise, and stays so.
	flags := Load(Param("flags"), GP64())
	TESTQ(U32(4), flags)
	JZ(LabelRef(name + "_nextpf"))
	res := Load(Param("res"), GP64())
	ldr := Load(Param("ldr"), GP64())
	IMUL3Q(Imm(uint64(rows*4)), ldr, ldr)
	ADDQ(ldr, res)
	Store(res, Param("res"))
	Label(name + "_nextpf")
	if pf {
		off, step := Load(Param("pfOff"), GP64()), Load(Param("pfStep"), GP64())
		SHRQ(Imm(1), k)
		IMULQ(step, k)
		ADDQ(k, off)
		Store(off, Param("pfOff"))
	}
	JMP(LabelRef(name + "_tile"))
	Label(name + "_done")
}

// aheadRows is how far below its own tile a 6-row AVX2 kernel
// prefetches the rows of C (and of the residual) it does not store
// itself: two tiles, those the macro-kernel runs after the next.
const aheadRows = 12

// tilesAhead prefetches, one row every four steps of a kernel's k loop,
// the rows of C that the tile aheadRows below it stores, and with ops
// the residual's rows it reads: the rows of the next tiles of a
// macro-kernel's sliver. A tile's own burst of prefetches at its start
// comes a few hundred cycles before its store, too late where those
// rows are in memory (ResNet's 56² pointwise convolutions, whose 1.6 MB
// output and residual were written layers before: their short k loops,
// 32 steps, left the store waiting for each line).
type tilesAhead struct {
	name                 string
	c, ldc, r, ldr, left reg.Register
	seq                  int
}

// newTilesAhead sets up tilesAhead for a kernel of rows rows (with ops,
// its parameters res and ldr; with no residual in flags, the residual's
// stream follows C's).
func newTilesAhead(name string, rows int, ops bool) *tilesAhead {
	h := &tilesAhead{name: name}
	h.c, h.ldc = loadC(4)
	t := GP64()
	IMUL3Q(Imm(aheadRows), h.ldc, t)
	ADDQ(t, h.c)
	h.left = GP64()
	MOVQ(U32(uint64(rows)), h.left)
	if !ops {
		return h
	}
	h.r, h.ldr = GP64(), GP64()
	MOVQ(h.c, h.r)
	MOVQ(h.ldc, h.ldr)
	flags := Load(Param("flags"), GP64())
	TESTQ(U32(4), flags)
	JZ(LabelRef(name + "_aheadset"))
	Load(Param("res"), h.r)
	Load(Param("ldr"), h.ldr)
	SHLQ(Imm(2), h.ldr)
	IMUL3Q(Imm(aheadRows), h.ldr, t)
	ADDQ(t, h.r)
	Label(name + "_aheadset")
	return h
}

// emit prefetches the next row ahead, until rows rows are done.
func (h *tilesAhead) emit() {
	skip := fmt.Sprintf("%s_ahead%d", h.name, h.seq)
	h.seq++
	TESTQ(h.left, h.left)
	JZ(LabelRef(skip))
	PREFETCHT0(Mem{Base: h.c})
	PREFETCHT0(Mem{Base: h.c, Disp: 63})
	ADDQ(h.ldc, h.c)
	if h.r != nil {
		PREFETCHT0(Mem{Base: h.r})
		PREFETCHT0(Mem{Base: h.r, Disp: 63})
		ADDQ(h.ldr, h.r)
	}
	DECQ(h.left)
	Label(skip)
}

// storeTile writes the accumulators, two 32-byte vectors a row, row by
// row; it advances c.
func storeTile(rows int, c, ldc reg.Register, acc []reg.VecVirtual, put func(Mem, reg.VecVirtual)) {
	storeRows(rows, 2, 32, c, ldc, acc, put)
}

// storeRows writes the accumulators row by row, vecs vectors of width
// bytes a row; it advances c.
func storeRows(rows, vecs, width int, c, ldc reg.Register, acc []reg.VecVirtual, put func(Mem, reg.VecVirtual)) {
	for i := range rows {
		for h := range vecs {
			put(Mem{Base: c, Disp: width * h}, acc[vecs*i+h])
		}
		if i < rows-1 {
			ADDQ(ldc, c)
		}
	}
}

func sgemmKernel() {
	for _, v := range []struct{ direct, pf, ops bool }{{false, false, false}, {false, true, false}, {false, true, true}, {true, true, false}, {true, true, true}} {
		name := "sgemm6x16"
		if v.direct {
			name += "d"
		}
		if v.pf {
			name += "f"
		}
		if v.ops {
			name += "o"
		}
		microKernelDirectOf(name, 6, 4, v.direct, v.pf, v.ops,
			func(m Op, x reg.VecVirtual) { VBROADCASTSS(m, x) },
			func(m Op, x reg.VecVirtual) { VMOVUPS(m, x) },
			func(b, x, acc Op) { VFMADD231PS(b, x, acc) },
			func(m, x, dst Op) { VADDPS(m, x, dst) },
			func(x, m Op) { VMOVUPS(x, m) })
	}
	microKernelTilesOf("sgemm6x16fot", 6, 4, false, true, true, true,
		func(m Op, x reg.VecVirtual) { VBROADCASTSS(m, x) },
		func(m Op, x reg.VecVirtual) { VMOVUPS(m, x) },
		func(b, x, acc Op) { VFMADD231PS(b, x, acc) },
		func(m, x, dst Op) { VADDPS(m, x, dst) },
		func(x, m Op) { VMOVUPS(x, m) })
}

// s8gemmKernel is the integer micro-kernel: packed A holds, per step, a
// pair of s16 (two consecutive k) for each of 6 rows, read as one 32-bit
// broadcast; packed B holds 16 such pairs, two vectors. VPMADDWD forms
// each lane's two products and their exact s32 sum; VPADDD accumulates
// (AVX2 has no fused form). 12 accumulators, two B vectors, the
// broadcast and one product register are all 16 YMM registers.
func s8gemmKernel() {
	TEXT("s8gemm6x16", NOSPLIT, "func(k int, a, b *int16, c *int32, ldc int, overwrite bool)")
	Doc("s8gemm6x16 computes C[6x16] += A·B (C = A·B if overwrite), s32 wrapping, over k steps of s16 pairs (A packed 6 pairs per step, B packed 16 pairs per step).")
	microKernelBody("s8gemm6x16", 6, 4,
		func(m Op, x reg.VecVirtual) { VPBROADCASTD(m, x) },
		func(m Op, x reg.VecVirtual) { VMOVDQU(m, x) },
		func(b, x, acc Op) { t := YMM(); VPMADDWD(b, x, t); VPADDD(t, acc, acc) },
		func(m, x, dst Op) { VPADDD(m, x, dst) },
		func(x, m Op) { VMOVDQU(x, m) })
}

// maddPeak issues n rounds of 8 independent VPMADDWD + VPADDD pairs, the
// s8 kernel's inner operation (8·16 s16 multiply-adds, 256 integer ops
// per round), so it runs at the machine's throughput for that pair.
func maddPeak() {
	probe("maddPeak", "maddPeak runs n rounds of 8 independent VPMADDWD+VPADDD (256 integer ops per round).",
		8, YMM, func(x reg.VecVirtual) { VPXOR(x, x, x) },
		func(x, y, acc reg.VecVirtual) { t := YMM(); VPMADDWD(x, y, t); VPADDD(t, acc, acc) })
}

// probe emits a throughput probe: n rounds of op on chains independent
// accumulators (enough to cover the operation's latency on every pipe
// that runs it), from registers made by vec and cleared by zero.
func probe(name, doc string, chains int, vec func() reg.VecVirtual, zero func(reg.VecVirtual), op func(x, y, acc reg.VecVirtual)) {
	TEXT(name, NOSPLIT, "func(n int)")
	Doc(doc)
	n := Load(Param("n"), GP64())
	acc := make([]reg.VecVirtual, chains)
	for i := range acc {
		acc[i] = vec()
		zero(acc[i])
	}
	x, y := vec(), vec()
	zero(x)
	zero(y)
	alignLoop()
	Label(name + "_loop")
	for i := range acc {
		op(x, y, acc[i])
	}
	DECQ(n)
	JNZ(LabelRef(name + "_loop"))
	VZEROUPPER()
	RET()
}

// packPairs16S8 packs one B sliver of a row-major s8 B: per pair of rows,
// the 16 values of each are interleaved byte by byte (VPUNPCKL/HBW) and
// sign-extended to s16 (VPMOVSXBW), giving the kernel's 16 (b[2p,j],
// b[2p+1,j]) pairs in two stores.
func packPairs16S8() {
	TEXT("packPairs16S8", NOSPLIT, "func(pairs int, src *int8, ldb int, dst *int16)")
	Pragma("noescape")
	Doc("packPairs16S8 packs pairs of rows of 16 s8 from src, ldb apart, into 32 interleaved s16 per pair at dst.")
	n := Load(Param("pairs"), GP64())
	src := Load(Param("src"), GP64())
	ldb := Load(Param("ldb"), GP64())
	dst := Load(Param("dst"), GP64())
	ldb2 := GP64()
	LEAQ(Mem{Base: ldb, Index: ldb, Scale: 1}, ldb2)
	TESTQ(n, n)
	JZ(LabelRef("pairs_done"))
	r0, r1, lo, hi := XMM(), XMM(), XMM(), XMM()
	wlo, whi := YMM(), YMM()
	alignLoop()
	Label("pairs_loop")
	VMOVDQU(Mem{Base: src}, r0)
	VMOVDQU(Mem{Base: src, Index: ldb, Scale: 1}, r1)
	VPUNPCKLBW(r1, r0, lo)
	VPUNPCKHBW(r1, r0, hi)
	VPMOVSXBW(lo, wlo)
	VPMOVSXBW(hi, whi)
	VMOVDQU(wlo, Mem{Base: dst})
	VMOVDQU(whi, Mem{Base: dst, Disp: 32})
	ADDQ(ldb2, src)
	ADDQ(Imm(64), dst)
	DECQ(n)
	JNZ(LabelRef("pairs_loop"))
	Label("pairs_done")
	VZEROUPPER()
	RET()
}

// interleaveBF16 packs a pair of rows of a row-major bf16 B across
// slivers for the VDPBF16PS kernels: per sliver, the 16 values of each row
// are interleaved word by word (VPUNPCKL/HWD, which work within 128-bit
// lanes; VPERM2I128 puts the lanes in order), giving each column's pair
// (b[2p,j] low, b[2p+1,j] high) as one 32-bit word, 64 bytes a sliver.
func interleaveBF16() {
	TEXT("interleaveBF16", NOSPLIT, "func(slivers int, lo *uint16, hi *uint16, dst *uint32, step int)")
	Pragma("noescape")
	Doc("interleaveBF16 interleaves 16 bf16 of lo and of hi per sliver into 16 (lo, hi) words at dst, slivers step words apart.")
	n := Load(Param("slivers"), GP64())
	lo := Load(Param("lo"), GP64())
	hi := Load(Param("hi"), GP64())
	dst := Load(Param("dst"), GP64())
	step := Load(Param("step"), GP64())
	SHLQ(Imm(2), step)
	TESTQ(n, n)
	JZ(LabelRef("interleave_done"))
	r0, r1, ul, uh, w0, w1 := YMM(), YMM(), YMM(), YMM(), YMM(), YMM()
	alignLoop()
	Label("interleave_loop")
	VMOVDQU(Mem{Base: lo}, r0)
	VMOVDQU(Mem{Base: hi}, r1)
	VPUNPCKLWD(r1, r0, ul) // words 0-3 | 8-11
	VPUNPCKHWD(r1, r0, uh) // words 4-7 | 12-15
	VPERM2I128(Imm(0x20), uh, ul, w0)
	VPERM2I128(Imm(0x31), uh, ul, w1)
	VMOVDQU(w0, Mem{Base: dst})
	VMOVDQU(w1, Mem{Base: dst, Disp: 32})
	ADDQ(Imm(32), lo)
	ADDQ(Imm(32), hi)
	ADDQ(step, dst)
	DECQ(n)
	JNZ(LabelRef("interleave_loop"))
	Label("interleave_done")
	VZEROUPPER()
	RET()
}

// packQuads16 packs one 16-column B sliver of a row-major s8 B for the
// VNNI kernel: per four rows, their 16 bytes are interleaved byte by
// byte, then word by word (VPUNPCKL/H BW, WD), giving each column's four
// bytes together, 64 bytes a quad; VPDPBUSD of a vector of u8 ones with
// each 16-byte quarter adds the column's four values to its running sum,
// which the s8-A path's bias needs (gemm_quad.go).
func packQuads16() {
	TEXT("packQuads16", NOSPLIT, "func(quads int, src *int8, ldb int, dst *byte, sums *int32)")
	Pragma("noescape")
	Doc("packQuads16 packs quads·4 rows of 16 s8 from src, ldb apart, as quads steps of 16 columns' four bytes at dst, and adds each column's values to sums[0:16] (AVX512_VNNI).")
	n := Load(Param("quads"), GP64())
	src := Load(Param("src"), GP64())
	ldb := Load(Param("ldb"), GP64())
	dst := Load(Param("dst"), GP64())
	sums := Load(Param("sums"), GP64())
	ld3 := GP64()
	LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ld3)
	ones := XMM()
	one := GP32()
	MOVL(U32(0x01010101), one)
	VPBROADCASTD(one, ones)
	acc := make([]reg.VecVirtual, 4)
	for i := range acc {
		acc[i] = XMM()
		VMOVDQU(Mem{Base: sums, Disp: 16 * i}, acc[i])
	}
	TESTQ(n, n)
	JZ(LabelRef("quads16_done"))
	Label("quads16_loop")
	r := make([]reg.VecVirtual, 4)
	for i := range r {
		r[i] = XMM()
	}
	VMOVDQU(Mem{Base: src}, r[0])
	VMOVDQU(Mem{Base: src, Index: ldb, Scale: 1}, r[1])
	VMOVDQU(Mem{Base: src, Index: ldb, Scale: 2}, r[2])
	VMOVDQU(Mem{Base: src, Index: ld3, Scale: 1}, r[3])
	t := []reg.VecVirtual{XMM(), XMM(), XMM(), XMM()}
	VPUNPCKLBW(r[1], r[0], t[0]) // columns 0-7, rows 0 and 1
	VPUNPCKHBW(r[1], r[0], t[1]) // columns 8-15
	VPUNPCKLBW(r[3], r[2], t[2])
	VPUNPCKHBW(r[3], r[2], t[3])
	for i, u := range []struct {
		lo   bool
		x, y reg.VecVirtual
	}{{true, t[0], t[2]}, {false, t[0], t[2]}, {true, t[1], t[3]}, {false, t[1], t[3]}} {
		q := XMM()
		if u.lo {
			VPUNPCKLWD(u.y, u.x, q)
		} else {
			VPUNPCKHWD(u.y, u.x, q)
		}
		VMOVDQU(q, Mem{Base: dst, Disp: 16 * i})
		vpdpbusd(q, ones, acc[i])
	}
	LEAQ(Mem{Base: src, Index: ldb, Scale: 4}, src)
	ADDQ(Imm(64), dst)
	DECQ(n)
	JNZ(LabelRef("quads16_loop"))
	Label("quads16_done")
	for i := range acc {
		VMOVDQU(acc[i], Mem{Base: sums, Disp: 16 * i})
	}
	RET()
}

// packQuads6 packs six rows of a row-major 8-bit A for the VNNI kernel,
// 16 values (four quads) of each a round: each row's quads are dwords, so
// the 6×4 dword block is turned around with dword and qword unpacks (as
// packRows6S8 does with pairs) and each quad step's six dwords (24 bytes:
// rows 0-3 as 16, rows 4-5 as 8) are stored together; every byte is xored
// with the flip bytes first (0x80 each turns s8 into u8 plus 128).
func packQuads6() {
	TEXT("packQuads6", NOSPLIT, "func(chunks int, src *byte, lda int, dst *byte, flip uint32)")
	Pragma("noescape")
	Doc("packQuads6 packs 16·chunks bytes of 6 rows, lda apart, each xor flip's bytes, as 4·chunks steps of six rows' four bytes at dst.")
	f := XMM()
	fl := Load(Param("flip"), GP32())
	VPBROADCASTD(fl, f)
	n, p, p3, dst, rows := sixRows("quads6", func(m Op, r reg.VecVirtual) { VMOVDQU(m, r.AsX()) })
	x := make([]reg.Register, 6)
	for i, r := range rows {
		x[i] = r.AsX()
		VPXOR(f, x[i], x[i])
	}
	lo, hi := make([]reg.VecVirtual, 3), make([]reg.VecVirtual, 3)
	for h := range 3 {
		lo[h], hi[h] = XMM(), XMM()
		VPUNPCKLDQ(x[2*h+1], x[2*h], lo[h]) // quads 0, 1 of rows 2h, 2h+1
		VPUNPCKHDQ(x[2*h+1], x[2*h], hi[h]) // quads 2, 3
	}
	for q, src := range []reg.VecVirtual{lo[0], lo[0], hi[0], hi[0]} {
		other, tail := lo[1], lo[2]
		if q >= 2 {
			other, tail = hi[1], hi[2]
		}
		v := XMM()
		if q%2 == 0 {
			VPUNPCKLQDQ(other, src, v)
			VMOVQ(tail, Mem{Base: dst, Disp: 24*q + 16})
		} else {
			VPUNPCKHQDQ(other, src, v)
			VPEXTRQ(Imm(1), tail, Mem{Base: dst, Disp: 24*q + 16})
		}
		VMOVDQU(v, Mem{Base: dst, Disp: 24 * q})
	}
	ADDQ(Imm(16), p)
	ADDQ(Imm(16), p3)
	ADDQ(Imm(96), dst)
	DECQ(n)
	JNZ(LabelRef("quads6_loop"))
	Label("quads6_done")
	RET()
}

// packRows6S8 packs six rows of a row-major s8 A, 16 values (8 pairs)
// per round: each row's 16 values are sign-extended to s16 (VPMOVSXBW),
// which makes them 8 dwords, one per pair; the 6×8 dword block is then
// turned around with dword and qword unpacks so each pair's six dwords
// (24 bytes: rows 0-3 as 16, rows 4-5 as 8) are stored together.
func packRows6S8() {
	TEXT("packRows6S8", NOSPLIT, "func(chunks int, src *int8, lda int, dst *int16)")
	Pragma("noescape")
	Doc("packRows6S8 packs 16·chunks values of 6 rows of s8, lda apart, as 8·chunks steps of 6 s16 pairs at dst.")
	n, p, p3, dst, rows := sixRows("rows6", func(m Op, r reg.VecVirtual) { VPMOVSXBW(m, r) })
	// lo[h] holds pairs 0,1 | 4,5 of rows 2h, 2h+1 as qwords; hi[h] 2,3 | 6,7.
	lo, hi := make([]reg.VecVirtual, 3), make([]reg.VecVirtual, 3)
	for h := range 3 {
		lo[h], hi[h] = YMM(), YMM()
		VPUNPCKLDQ(rows[2*h+1], rows[2*h], lo[h])
		VPUNPCKHDQ(rows[2*h+1], rows[2*h], hi[h])
	}
	// Rows 0-3 of pair q as one 16-byte vector: q0|q4, q1|q5, q2|q6, q3|q7.
	q := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
	VPUNPCKLQDQ(lo[1], lo[0], q[0])
	VPUNPCKHQDQ(lo[1], lo[0], q[1])
	VPUNPCKLQDQ(hi[1], hi[0], q[2])
	VPUNPCKHQDQ(hi[1], hi[0], q[3])
	store45 := func(x reg.Register, pair int) {
		VMOVQ(x, Mem{Base: dst, Disp: 24*pair + 16})
		VPEXTRQ(Imm(1), x, Mem{Base: dst, Disp: 24*(pair+1) + 16})
	}
	for i := range 4 {
		VMOVDQU(q[i].AsX(), Mem{Base: dst, Disp: 24 * i})
		VEXTRACTI128(Imm(1), q[i], Mem{Base: dst, Disp: 24 * (i + 4)})
	}
	store45(lo[2].AsX(), 0)
	store45(hi[2].AsX(), 2)
	for i, v := range []reg.VecVirtual{lo[2], hi[2]} {
		x := XMM()
		VEXTRACTI128(Imm(1), v, x)
		store45(x, 4+2*i)
	}
	ADDQ(Imm(16), p)
	ADDQ(Imm(16), p3)
	ADDQ(U32(192), dst)
	DECQ(n)
	JNZ(LabelRef("rows6_loop"))
	Label("rows6_done")
	VZEROUPPER()
	RET()
}

func dgemmKernel() {
	microKernel("dgemm6x8", 6, 8,
		func(m Op, x reg.VecVirtual) { VBROADCASTSD(m, x) },
		func(m Op, x reg.VecVirtual) { VMOVUPD(m, x) },
		func(b, x, acc Op) { VFMADD231PD(b, x, acc) },
		func(m, x, dst Op) { VADDPD(m, x, dst) },
		func(x, m Op) { VMOVUPD(x, m) })
}

// sgemmTapsKernel runs a whole list of row runs (a convolution tile's
// kernel taps within one K block) into one register tile, so C is loaded
// and stored once per tile rather than once per tap. runs points to n
// records of 8 words: k, six row pointers, and a word the kernel ignores;
// B holds the runs' steps back to back, 16 per step.
func sgemmTapsKernel() { tapsKernel("sgemm6x16taps", false) }

// tapsKernel emits sgemmTapsKernel's kernel; wide, the AVX-512 one that
// runs the same runs against two B slivers, the second kb steps after
// the first: a 6×32 tile in 12 ZMM accumulators.
func tapsKernel(name string, wide bool) { tapsKernelOf(name, wide, 2, false, false) }

// tapsKernelPF is the wide two-sliver taps kernel with a prefetch
// stream: parameters pfOff and pfStep ask for the line at b+pfOff into
// L2 every two steps, pfStep bytes further each time. The caller points
// it at the next pair of B slivers, a share of them per tile, so that a
// kernel too big for L2 (ResNet's last stage: 2.4 MB of 3×3 weights for
// 49 pixels) arrives while this pair's tiles run, instead of the next
// pair's first tile waiting on memory for each of its lines.
func tapsKernelPF(name string) { tapsKernelOf(name, true, 2, false, true) }

// tapsKernelOps is tapsKernelPF finishing its tile as it stores it
// (storeOpsAndReturn): for the final K block of a convolution whose
// epilogue is a bias, a residual and a floor (ReLU).
func tapsKernelOps(name string) { tapsKernelOfOps(name, true, 2, false, true, true) }

// tapsKernelOf is tapsKernel with, wide, vecs B slivers (one or two) and,
// masked, a last parameter mask whose set bits are the columns of the
// last sliver stored: an output 8, 12 or 24 channels wide is then
// written in place, where the scratch tile and its copy back cost a
// quarter of a 96→24 channel 3×3 convolution.
func tapsKernelOf(name string, wide bool, vecs int, masked, pf bool) {
	tapsKernelOfOps(name, wide, vecs, masked, pf, false)
}

// tapsKernelOfOps is tapsKernelOf, with ops (wide, two slivers, not
// masked) storing through storeOpsAndReturn.
func tapsKernelOfOps(name string, wide bool, vecs int, masked, pf, ops bool) {
	const rows = 6
	sig := "func(runs *int, n int, b, c *float32, ldc int, overwrite bool)"
	doc := name + " computes C[6x16] += Σ over runs of A_run·B_run (C = ... if overwrite), A_run given by six row pointers."
	vec, zero, width := YMM, func(x reg.VecVirtual) { VXORPS(x, x, x) }, 32
	if !wide && vecs == 1 {
		doc = name + " computes C[6x8] += Σ over runs of A_run·B_run (C = ... if overwrite), A_run given by six row pointers, over the first 8 columns of a 16-column B sliver: a sliver's last 8 columns of C stored in place, the 6x16 kernel's sums for them."
	}
	if wide {
		sig = "func(runs *int, n int, b, c *float32, ldc int, overwrite bool, kb int)"
		doc = fmt.Sprintf("%s computes C[6x%d] += Σ over runs of A_run·B_run (C = ... if overwrite), A_run given by six row pointers, over %s (AVX-512).",
			name, 16*vecs, slivers[vecs])
		vec, zero, width = ZMM, func(x reg.VecVirtual) { VPXORD(x, x, x) }, 64
	}
	if masked {
		sig = sig[:len(sig)-1] + ", mask uint16)"
		doc += " Only the columns of the last sliver set in mask are stored."
	}
	if pf {
		sig = sig[:len(sig)-1] + ", pfOff, pfStep int)"
		doc += " Every two steps it prefetches the line at b+pfOff into L2, pfStep bytes further each time."
	}
	if ops {
		sig = sig[:len(sig)-1] + opsParams
		doc += " " + opsDocOf(16*vecs)
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc)
	rp := Load(Param("runs"), GP64())
	n := Load(Param("n"), GP64())
	b := Load(Param("b"), GP64())
	var bHi reg.Register // the second B sliver, wide only
	if wide && vecs == 2 {
		bHi = Load(Param("kb"), GP64())
		SHLQ(Imm(6), bHi)
		ADDQ(b, bHi)
	}
	{
		c, ldc := loadC(4)
		for i := range rows {
			PREFETCHT0(Mem{Base: c})
			PREFETCHT0(Mem{Base: c, Disp: min(2, vecs)*width - 1})
			if wide && vecs == 2 {
				PREFETCHT0(Mem{Base: c, Disp: 64})
			}
			if i < rows-1 {
				ADDQ(ldc, c)
			}
		}
	}
	if ops {
		prefetchResidualW(name, rows, width)
	}
	acc := make([]reg.VecVirtual, vecs*rows)
	for i := range acc {
		acc[i] = vec()
		zero(acc[i])
	}
	arow := make([]reg.GPVirtual, rows)
	for i := range arow {
		arow[i] = GP64()
	}
	var pfp, pfStep reg.Register
	if pf {
		pfp, pfStep = Load(Param("pfOff"), GP64()), Load(Param("pfStep"), GP64())
		ADDQ(b, pfp)
	}
	k, off := GP64(), GP64()
	step := tapsStep(wide, vecs, b, bHi, off, arow, acc, vec)
	advance := func(steps int) {
		ADDQ(U32(64*steps), b)
		if bHi != nil {
			ADDQ(U32(64*steps), bHi)
		}
	}
	Label(name + "_run")
	TESTQ(n, n)
	JZ(LabelRef(name + "_store"))
	MOVQ(Mem{Base: rp}, k)
	for i := range arow {
		MOVQ(Mem{Base: rp, Disp: 8 * (i + 1)}, arow[i])
	}
	XORQ(off, off)
	// Two steps per iteration while at least two remain, then one.
	Label(name + "_pair")
	CMPQ(k, Imm(2))
	JL(LabelRef(name + "_single"))
	step(0)
	if pf {
		PREFETCHT1(Mem{Base: pfp})
		ADDQ(pfStep, pfp)
	}
	step(1)
	ADDQ(Imm(8), off)
	advance(2)
	SUBQ(Imm(2), k)
	JMP(LabelRef(name + "_pair"))
	Label(name + "_single")
	TESTQ(k, k)
	JZ(LabelRef(name + "_next"))
	step(0)
	advance(1)
	Label(name + "_next")
	ADDQ(U32(64), rp)
	DECQ(n)
	JMP(LabelRef(name + "_run"))
	Label(name + "_store")
	if masked {
		storeMaskedAndReturn(name, rows, vecs, acc)
		return
	}
	if ops {
		storeOpsAndReturnW(name, rows, width, acc)
		return
	}
	c, ldc := loadC(4)
	ow := Load(Param("overwrite"), GP8())
	TESTB(ow, ow)
	JNZ(LabelRef(name + "_overwrite"))
	store := storeTile
	if wide {
		store = storeTile512
	} else if vecs == 1 {
		store = func(rows int, c, ldc reg.Register, acc []reg.VecVirtual, put func(Mem, reg.VecVirtual)) {
			storeRows(rows, 1, 32, c, ldc, acc, put)
		}
	}
	store(rows, c, ldc, acc, func(m Mem, x reg.VecVirtual) { VADDPS(m, x, x); VMOVUPS(x, m) })
	VZEROUPPER()
	RET()
	Label(name + "_overwrite")
	store(rows, c, ldc, acc, func(m Mem, x reg.VecVirtual) { VMOVUPS(x, m) })
	VZEROUPPER()
	RET()
}

// slivers names the B operand of a kernel over one or two B slivers.
var slivers = map[int]string{1: "one B sliver", 2: "two B slivers kb steps apart"}

// tapsStep returns the step of tapsKernelOf's k loop at displacement
// disp: B's vectors loaded (from b, and bHi if wide with two slivers, or
// the two halves of b's 64 bytes if not wide), each row's A value
// broadcast from its pointer plus off and FMAed into the row's
// accumulators acc.
func tapsStep(wide bool, vecs int, b, bHi, off reg.Register, arow []reg.GPVirtual, acc []reg.VecVirtual, vec func() reg.VecVirtual) func(int) {
	b0, b1 := vec(), vec()
	return func(disp int) {
		switch {
		case vecs == 1 && !wide:
			// The first half of a 16-column sliver's step.
			VMOVUPS(Mem{Base: b, Disp: disp * 64}, b0)
			for i := range arow {
				x := vec()
				VBROADCASTSS(Mem{Base: arow[i], Index: off, Scale: 1, Disp: 4 * disp}, x)
				VFMADD231PS(b0, x, acc[i])
			}
			return
		case vecs == 1:
			VMOVUPS(Mem{Base: b, Disp: disp * 64}, b0)
			for i := range arow {
				VFMADD231PS_BCST(Mem{Base: arow[i], Index: off, Scale: 1, Disp: 4 * disp}, b0, acc[i])
			}
			return
		case wide:
			VMOVUPS(Mem{Base: b, Disp: disp * 64}, b0)
			VMOVUPS(Mem{Base: bHi, Disp: disp * 64}, b1)
		default:
			VMOVUPS(Mem{Base: b, Disp: disp * 64}, b0)
			VMOVUPS(Mem{Base: b, Disp: disp*64 + 32}, b1)
		}
		for i := range arow {
			x := vec()
			VBROADCASTSS(Mem{Base: arow[i], Index: off, Scale: 1, Disp: 4 * disp}, x)
			VFMADD231PS(b0, x, acc[2*i])
			VFMADD231PS(b1, x, acc[2*i+1])
		}
	}
}

// storeMaskedAndReturn adds rows×vecs ZMM accumulators into C (sets
// them, if overwrite) and returns, the last vector of each row under
// parameter mask: the masked kernels' end. Masked-off lanes of C are
// neither read nor written.
func storeMaskedAndReturn(name string, rows, vecs int, acc []reg.VecVirtual) {
	c, ldc := loadC(4)
	m := Load(Param("mask"), GP32())
	KMOVW(m, reg.K1)
	ow := Load(Param("overwrite"), GP8())
	TESTB(ow, ow)
	JNZ(LabelRef(name + "_overwrite"))
	storeRowsMasked(rows, vecs, c, ldc, acc, func(m Mem, x reg.VecVirtual, last bool) {
		if last {
			VADDPS(m, x, reg.K1, x)
			VMOVUPS(x, reg.K1, m)
			return
		}
		VADDPS(m, x, x)
		VMOVUPS(x, m)
	})
	VZEROUPPER()
	RET()
	Label(name + "_overwrite")
	storeRowsMasked(rows, vecs, c, ldc, acc, func(m Mem, x reg.VecVirtual, last bool) {
		if last {
			VMOVUPS(x, reg.K1, m)
			return
		}
		VMOVUPS(x, m)
	})
	VZEROUPPER()
	RET()
}

// storeRowsMasked is storeRows for ZMM rows whose last vector put stores
// under a mask (last set); it advances c.
func storeRowsMasked(rows, vecs int, c, ldc reg.Register, acc []reg.VecVirtual, put func(Mem, reg.VecVirtual, bool)) {
	for i := range rows {
		for h := range vecs {
			put(Mem{Base: c, Disp: 64 * h}, acc[vecs*i+h], h == vecs-1)
		}
		if i < rows-1 {
			ADDQ(ldc, c)
		}
	}
}

// fmaPeak issues n rounds of 12 independent 8-lane FMAs (192 FLOP per
// round): enough independent chains to cover the FMA latency on both
// pipes, so it runs at the machine's FMA throughput.
func fmaPeak() {
	probe("fmaPeak", "fmaPeak runs n rounds of 12 independent VFMADD231PS (192 f32 FLOP per round).",
		12, YMM, func(x reg.VecVirtual) { VXORPS(x, x, x) },
		func(x, y, acc reg.VecVirtual) { VFMADD231PS(x, y, acc) })
}

// fmaPeak512 is fmaPeak with 16-lane (AVX-512) FMAs.
func fmaPeak512() {
	probe("fmaPeak512", "fmaPeak512 runs n rounds of 12 independent 16-lane VFMADD231PS (384 f32 FLOP per round).",
		12, ZMM, func(x reg.VecVirtual) { VPXORD(x, x, x) },
		func(x, y, acc reg.VecVirtual) { VFMADD231PS(x, y, acc) })
}

// packRows16 emits the copy of k rows of 16 float32, ldb elements apart,
// into consecutive 64-byte rows: one B sliver of a row-major B, packed
// with two vector moves per row instead of sixteen scalar ones.
func packRows16() { packRowsOf16(false) }

// packRowsMasked16 is packRows16 for rows of fewer than 16 values (a
// narrow B: a classifier's 10 columns; the last sliver of a wider one):
// each row's values are read under a mask (VMASKMOVPS reads nothing
// past them, so the last row may end the array) and stored as a whole
// 16-lane row, zeros past them. AVX2, so the AVX2 and AVX-512 machines
// pack alike.
func packRowsMasked16() { packRowsOf16(true) }

// packRowsOf16 emits packRows16, or packRowsMasked16 when masked.
func packRowsOf16(masked bool) {
	name, label, sig := "packRows16", "pack", "func(k int, src *float32, ldb int, dst *float32)"
	if masked {
		name, label, sig = "packRowsMasked16", "masked", "func(k int, src *float32, ldb int, dst *float32, mask *int32)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	if masked {
		Doc("packRowsMasked16 copies k rows from src, ldb elements apart, to dst, 16 apart: the lanes",
			"of mask (16 int32, all ones for a lane to copy) are read, the others stored as zero.")
	} else {
		Doc("packRows16 copies k rows of 16 float32 from src, ldb elements apart, to dst, 16 apart.")
	}
	k := Load(Param("k"), GP64())
	src := Load(Param("src"), GP64())
	ldb := Load(Param("ldb"), GP64())
	dst := Load(Param("dst"), GP64())
	load := func(disp int, y reg.VecVirtual) { VMOVUPS(Mem{Base: src, Disp: disp}, y) }
	if masked {
		mask := Load(Param("mask"), GP64())
		m := []reg.VecVirtual{YMM(), YMM()}
		VMOVDQU(Mem{Base: mask}, m[0])
		VMOVDQU(Mem{Base: mask, Disp: 32}, m[1])
		load = func(disp int, y reg.VecVirtual) { VMASKMOVPS(Mem{Base: src, Disp: disp}, m[disp/32], y) }
	}
	SHLQ(Imm(2), ldb)
	TESTQ(k, k)
	JZ(LabelRef(label + "_done"))
	y0, y1 := YMM(), YMM()
	alignLoop()
	Label(label + "_loop")
	load(0, y0)
	load(32, y1)
	VMOVUPS(y0, Mem{Base: dst})
	VMOVUPS(y1, Mem{Base: dst, Disp: 32})
	ADDQ(ldb, src)
	ADDQ(Imm(64), dst)
	DECQ(k)
	JNZ(LabelRef(label + "_loop"))
	Label(label + "_done")
	VZEROUPPER()
	RET()
}

// prefetch emits a loop of PREFETCHT0 over n bytes, one per 64-byte line.
func prefetch() {
	TEXT("prefetchT0", NOSPLIT, "func(p *byte, n int)")
	Pragma("noescape")
	Doc("prefetchT0 asks for the cache lines of the n bytes at p to be brought into L1.")
	p := Load(Param("p"), GP64())
	n := Load(Param("n"), GP64())
	end := GP64()
	LEAQ(Mem{Base: p, Index: n, Scale: 1}, end)
	Label("prefetch_loop")
	CMPQ(p, end)
	JAE(LabelRef("prefetch_done"))
	PREFETCHT0(Mem{Base: p})
	ADDQ(Imm(64), p)
	JMP(LabelRef("prefetch_loop"))
	Label("prefetch_done")
	RET()
}

// packRows6F32 emits the f32 A packer: 8·chunks values of six rows, lda
// bytes apart, as 8·chunks steps of the six rows' values. Each chunk is
// an 8×8 transpose with two empty rows: unpack pairs of rows, shuffle to
// columns of rows 0-3 (s) and pairs of rows 4-5 (t, u), and join a
// column's four and two with one lane permute. A step's six values are
// stored as eight, the two extra overwritten by the next step's store;
// the chunk's last step is stored as four and two, so nothing is written
// past it.
func packRows6F32() {
	TEXT("packRows6F32", NOSPLIT, "func(chunks int, src *float32, lda int, dst *float32)")
	Pragma("noescape")
	Doc("packRows6F32 packs 8·chunks values of 6 rows of f32, lda bytes apart, as 8·chunks steps of 6 values at dst.")
	n, p, p3, dst, r := sixRows("rows6f", func(m Op, r reg.VecVirtual) { VMOVUPS(m, r) })
	// t[2h] = r(2h)0 r(2h+1)0 r(2h)1 r(2h+1)1 | the same for steps 4, 5;
	// t[2h+1] likewise for steps 2, 3 | 6, 7.
	t := make([]reg.VecVirtual, 6)
	for h := range 3 {
		t[2*h], t[2*h+1] = YMM(), YMM()
		VUNPCKLPS(r[2*h+1], r[2*h], t[2*h])
		VUNPCKHPS(r[2*h+1], r[2*h], t[2*h+1])
	}
	// s[j]: rows 0-3 of step j | of step j+4.
	s := []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
	VSHUFPS(Imm(0x44), t[2], t[0], s[0])
	VSHUFPS(Imm(0xEE), t[2], t[0], s[1])
	VSHUFPS(Imm(0x44), t[3], t[1], s[2])
	VSHUFPS(Imm(0xEE), t[3], t[1], s[3])
	// rows 4-5 of step j (| j+4) in the low quarter of pair[j].
	u4, u5 := YMM(), YMM()
	VSHUFPS(Imm(0xEE), t[4], t[4], u4)
	VSHUFPS(Imm(0xEE), t[5], t[5], u5)
	pair := []reg.VecVirtual{t[4], u4, t[5], u5}
	for j := range 8 {
		o := YMM()
		VPERM2F128(Imm(map[bool]uint64{false: 0x20, true: 0x31}[j >= 4]), pair[j%4], s[j%4], o)
		if j < 7 {
			VMOVUPS(o, Mem{Base: dst, Disp: 24 * j})
			continue
		}
		VMOVUPS(o.AsX(), Mem{Base: dst, Disp: 24 * j})
		hi := XMM()
		VEXTRACTF128(Imm(1), o, hi)
		VMOVQ(hi, Mem{Base: dst, Disp: 24*j + 16})
	}
	ADDQ(Imm(32), p)
	ADDQ(Imm(32), p3)
	ADDQ(U32(192), dst)
	DECQ(n)
	JNZ(LabelRef("rows6f_loop"))
	Label("rows6f_done")
	VZEROUPPER()
	RET()
}

// sixRows loads the chunks, src, lda and dst parameters, opens the loop
// named label (exiting at once for no chunks) and loads six rows, lda
// bytes apart from src, with load: the head of the A packers.
func sixRows(label string, load func(Op, reg.VecVirtual)) (n, p, p3, dst reg.Register, rows []reg.VecVirtual) {
	n = Load(Param("chunks"), GP64())
	p = Load(Param("src"), GP64())
	lda := Load(Param("lda"), GP64())
	dst = Load(Param("dst"), GP64())
	p3 = GP64()
	LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, p3)
	ADDQ(p, p3)
	TESTQ(n, n)
	JZ(LabelRef(label + "_done"))
	alignLoop()
	Label(label + "_loop")
	rows = make([]reg.VecVirtual, 6)
	for i := range rows {
		rows[i] = YMM()
		base := p
		if i >= 3 {
			base = p3
		}
		m := Mem{Base: base}
		if i%3 > 0 {
			m = Mem{Base: base, Index: lda, Scale: uint8(i % 3)}
		}
		load(m, rows[i])
	}
	return
}

// depthwisePixel emits one output pixel of a depthwise convolution: for
// the whole vectors of n channels, acc = Σ_t in[offs[t]+c]·w[woffs[t]+c]
// over the ntaps taps in order, each product rounded and added as the Go
// loop does (VMULPS then VADDPS, no fusing), so the bits match it. 32
// channels are kept in registers across the taps, then 8 at a time.
func depthwisePixel() { depthwisePixelOf("depthwisePixel", false) }

// depthwisePixelOf emits depthwisePixel; wide, its AVX-512 twin on
// 16-lane vectors (the same multiply, then add, per lane and tap, so the
// same bits), for n rounded down to a multiple of 16.
func depthwisePixelOf(name string, wide bool) {
	lanes, vec, zero := 8, YMM, func(x reg.VecVirtual) { VXORPS(x, x, x) }
	if wide {
		lanes, vec, zero = 16, ZMM, func(x reg.VecVirtual) { VPXORD(x, x, x) }
	}
	TEXT(name, NOSPLIT, "func(acc, in, w *float32, offs, woffs *int, ntaps, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets acc[c] to the sum over taps t < ntaps of in[offs[t]+c]*w[woffs[t]+c], for c < n rounded down to a multiple of %d.", name, lanes))
	acc := Load(Param("acc"), GP64())
	in := Load(Param("in"), GP64())
	w := Load(Param("w"), GP64())
	offs := Load(Param("offs"), GP64())
	woffs := Load(Param("woffs"), GP64())
	ntaps := Load(Param("ntaps"), GP64())
	n := Load(Param("n"), GP64())
	c, end, t, o, wo := GP64(), GP64(), GP64(), GP64(), GP64()
	XORQ(c, c)
	block := func(label string, vecs int) {
		MOVQ(n, end)
		ANDQ(I32(-lanes*vecs), end)
		Label(label + "_next")
		CMPQ(c, end)
		JAE(LabelRef(label + "_done"))
		r := make([]reg.VecVirtual, vecs)
		for v := range r {
			r[v] = vec()
			zero(r[v])
		}
		XORQ(t, t)
		Label(label + "_tap")
		CMPQ(t, ntaps)
		JAE(LabelRef(label + "_store"))
		MOVQ(Mem{Base: offs, Index: t, Scale: 8}, o)
		MOVQ(Mem{Base: woffs, Index: t, Scale: 8}, wo)
		ADDQ(c, o)
		ADDQ(c, wo)
		for v := range r {
			x := vec()
			VMOVUPS(Mem{Base: in, Index: o, Scale: 4, Disp: 4 * lanes * v}, x)
			VMULPS(Mem{Base: w, Index: wo, Scale: 4, Disp: 4 * lanes * v}, x, x)
			VADDPS(x, r[v], r[v])
		}
		INCQ(t)
		JMP(LabelRef(label + "_tap"))
		Label(label + "_store")
		for v := range r {
			VMOVUPS(r[v], Mem{Base: acc, Index: c, Scale: 4, Disp: 4 * lanes * v})
		}
		ADDQ(Imm(uint64(lanes*vecs)), c)
		JMP(LabelRef(label + "_next"))
		Label(label + "_done")
	}
	block(name+"4", 4)
	if wide { // 32 channels (a common count) in one pass over the taps
		block(name+"2", 2)
	}
	block(name+"1", 1)
	VZEROUPPER()
	RET()
}

// alignLoop starts the loop that follows on a 32-byte boundary (Go's
// PCALIGN): where the linker happens to place a kernel otherwise decides
// whether a short loop straddles two of the front end's 64-byte windows,
// and that moved maxAVX's share of softmax from 8% to 19% between two
// builds that differed elsewhere.
func alignLoop() {
	Instruction(&ir.Instruction{Opcode: "PCALIGN", Operands: []Op{Imm(32)}})
}

// pairKernel emits the AVX-512 micro-kernel over the AVX2 kernels' packed
// layout: ablocks (1 or 2) consecutive 6-row A slivers by two consecutive
// B slivers, each B sliver one 64-byte vector per step (16 f32 or 8 f64).
// The packing stays the same on every machine; an AVX-512 machine just
// takes the slivers two (or four) at a time. With two A slivers the tile
// is 12 rows: 24 accumulators, each step two B loads, twelve broadcasts
// and 24 FMAs, so the FMA ports and not the loads set the pace.
func pairKernel(name string, ablocks, size int) { pairKernelOf(name, ablocks, size, "") }

// packBAheadLog is log2 of how many steps ahead directKernel's packB
// prefetches B's rows.
const packBAheadLog = 4

// directKernel is the f32 pairKernel reading A where it lies, rows lda
// elements apart, instead of from packed slivers: the same steps in the
// same order, so the same bits, without the cost of packing A (5–7% of a
// product of an MLP layer's size on two threads, where each thread packs
// all of A under the column split). With packB it reads B's rows in
// place too, ldb apart, and stores each step's two vectors into the
// packed slivers as it goes: the first tile of a B sliver pair packs it
// for the tiles after it, its loads hidden among the FMAs instead of a
// packing pass of their own.
//
// Not bound to 6-row slivers, it comes in 12, 8, 6 and 4 rows: a block's
// last rows (eight of a 32-row batch, four of 256) take a kernel of their
// height instead of 6-row tiles through scratch, which computed up to
// half as many rows again (one thread, ×512×784: 8 rows 67 → 91 GFLOP/s,
// 16 rows 120 → 134, 32 rows 136 → 154).
func directKernel(name string, rows int, packB bool) {
	pairKernelBody(name, 0, rows, 4, "", true, packB, false, false)
}

// directKernelOps is directKernel (with packB, or directKernelPF's
// stream with pf) finishing its tile as it stores it
// (storeOpsAndReturn): a product's bias, residual and ReLU.
func directKernelOps(name string, rows int, packB, pf bool) {
	pairKernelBody(name, 0, rows, 4, "", true, packB, pf, true)
}

// directKernelPF is directKernel with tapsKernelPF's prefetch stream,
// every two steps of four: for B's panels packed before the product
// (a model's weights), which come from memory. B packed by the product
// is in cache already, and the plain kernel saves the stream's
// instructions (1024³ on two threads, 1%).
func directKernelPF(name string, rows int) {
	pairKernelBody(name, 0, rows, 4, "", true, false, true, false)
}

// pairKernelOf is pairKernel for element type typ ("": float32 or
// float64 by size; "int16": the s8 kernel's s16 pairs, one 4-byte pair
// per A value and 16 per B step, into int32 C).
func pairKernelOf(name string, ablocks, size int, typ string) {
	pairKernelBody(name, ablocks, 6*ablocks, size, typ, false, false, false, false)
}

// pairKernelBody emits pairKernelOf's kernel (ablocks 6-row slivers,
// rows = 6·ablocks), or directKernel's of rows rows when direct (packB:
// directKernel's packB; pf: directKernelPF's prefetch stream; ops:
// directKernelOps' finish).
func pairKernelBody(name string, ablocks, rows, size int, typ string, direct, packB, pf, ops bool) {
	sig := fmt.Sprintf("func(k int, a, b, c *%s, ldc int, overwrite bool)", map[int]string{4: "float32", 8: "float64"}[size])
	if typ == "int16" {
		sig = "func(k int, a, b *int16, c *int32, ldc int, overwrite bool)"
	}
	if typ == "quad" {
		sig = "func(k int, a *uint8, b *int8, c *int32, ldc int, overwrite bool, bias *int32)"
	}
	if direct {
		sig = "func(k int, a *float32, lda int, b, c *float32, ldc int, overwrite bool)"
	}
	if packB {
		sig = "func(k int, a *float32, lda int, src *float32, ldb int, b, c *float32, ldc int, overwrite bool)"
	}
	if pf {
		sig = sig[:len(sig)-1] + ", pfOff, pfStep int)"
	}
	if ops {
		sig = sig[:len(sig)-1] + opsParams
	}
	lanes := 64 / size
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	if packB {
		doc := []string{fmt.Sprintf("%s computes C[%dx%d] += A·B (C = A·B if overwrite) over k steps from %d rows of A, lda apart, and 32 columns of B's rows at src, ldb apart, storing them into two packed %d-column B slivers at b, k apart (AVX-512).",
			name, rows, 2*lanes, rows, lanes)}
		if ops {
			doc = append(doc, opsDoc)
		}
		Doc(doc...)
	} else if direct {
		doc := []string{fmt.Sprintf("%s computes C[%dx%d] += A·B (C = A·B if overwrite) over k steps from %d rows of A, lda apart, and two packed %d-column B slivers, k apart (AVX-512).",
			name, rows, 2*lanes, rows, lanes)}
		if pf {
			doc = append(doc, "Every two steps of four it prefetches the line at b+pfOff into L2, pfStep bytes further each time.")
		}
		if ops {
			doc = append(doc, opsDoc)
		}
		Doc(doc...)
	} else if typ == "quad" {
		Doc(fmt.Sprintf("%s computes C[%dx32] += bias + A·B (C = bias + A·B if overwrite) over k steps of four u8 (A) by s8 (B) products from %d packed 6-row A sliver(s), k apart, two packed 16-column B slivers, k apart, and 32 s32 column biases (AVX512_VNNI).",
			name, rows, ablocks))
	} else {
		Doc(fmt.Sprintf("%s computes C[%dx%d] += A·B (C = A·B if overwrite) over k steps from %d packed 6-row A sliver(s), k apart, and two packed %d-column B slivers, k apart (AVX-512).",
			name, rows, 2*lanes, ablocks, lanes))
	}
	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	// The second B sliver starts 64·k bytes on, the second A sliver
	// 6·size·k.
	b1 := GP64()
	MOVQ(k, b1)
	SHLQ(Imm(6), b1)
	ADDQ(b, b1)
	as := []reg.Register{a}
	if ablocks == 2 && !direct {
		a1 := GP64()
		LEAQ(Mem{Base: k, Index: k, Scale: 2}, a1)
		SHLQ(Imm(uint64(map[int]int{4: 3, 8: 4}[size])), a1)
		ADDQ(a, a1)
		as = append(as, a1)
	}
	// aAt addresses row i's value of step s: packed, 6 values a step per
	// sliver; direct, rows lda·size bytes apart, reached from a base
	// every three rows plus 0, 1 or 2 times the row stride.
	aAt := func(blk, i, s int) Mem { return Mem{Base: as[blk], Disp: (s*6 + i) * size} }
	var ld reg.Register
	if direct {
		as, ld = directBases(a, rows)
	}
	spread := spreadPrefetchC(name, rows, size, k)
	if ops {
		prefetchResidual(name, rows)
	}
	var acc []reg.VecVirtual
	if typ == "quad" {
		acc = biasZMM(rows)
	} else {
		acc = zeroZMM(2 * rows)
	}
	bcast := func(m Op, x reg.VecVirtual) { VBROADCASTSS(m, x) }
	fma := func(b, x, acc Op) { VFMADD231PS(b, x, acc) }
	add := func(m, x, dst Op) { VADDPS(m, x, dst) }
	switch {
	case size == 8:
		bcast = func(m Op, x reg.VecVirtual) { VBROADCASTSD(m, x) }
		fma = func(b, x, acc Op) { VFMADD231PD(b, x, acc) }
		add = func(m, x, dst Op) { VADDPD(m, x, dst) }
	case typ == "int16":
		// A and B hold s16 pairs (two consecutive k) in 32-bit lanes:
		// VPDPWSSD forms each lane's two products and adds their sum to
		// the s32 accumulator, wrapping: what the AVX2 kernel's VPMADDWD
		// + VPADDD give, in one instruction.
		bcast = func(m Op, x reg.VecVirtual) { VPBROADCASTD(m, x) }
		fma = func(b, x, acc Op) { vpdpwssd(b, x, acc) }
		add = func(m, x, dst Op) { VPADDD(m, x, dst) }
	case typ == "quad":
		// A holds four u8 and B four s8 (consecutive k) in each 32-bit
		// lane: VPDPBUSD adds the lane's four exact products (each
		// ≤ 255·128, their sum well inside s32) to the s32 accumulator,
		// wrapping: 64 multiply-adds an instruction, twice VPDPWSSD's.
		bcast = func(m Op, x reg.VecVirtual) { VPBROADCASTD(m, x) }
		fma = func(b, x, acc Op) { vpdpbusd(b, x, acc) }
		add = func(m, x, dst Op) { VPADDD(m, x, dst) }
	}
	var src, ldb, ahead reg.Register
	if packB {
		src = Load(Param("src"), GP64())
		ldb = Load(Param("ldb"), GP64())
		SHLQ(Imm(2), ldb)
		// B's rows may come from memory, each on its own page: fetch the
		// row packBAhead steps on, which the loop reaches after about
		// the latency of memory (12 cycles a step).
		ahead = GP64()
		MOVQ(ldb, ahead)
		SHLQ(Imm(packBAheadLog), ahead)
	}
	var pfp, pfStep reg.Register
	if pf {
		pfp, pfStep = Load(Param("pfOff"), GP64()), Load(Param("pfStep"), GP64())
		ADDQ(b, pfp)
	}
	v0, v1 := ZMM(), ZMM()
	step := func(s int) {
		if pf && s%2 == 1 {
			PREFETCHT1(Mem{Base: pfp})
			ADDQ(pfStep, pfp)
		}
		if packB {
			PREFETCHT0(Mem{Base: src, Index: ahead, Scale: 1})
			PREFETCHT0(Mem{Base: src, Index: ahead, Scale: 1, Disp: 64})
			VMOVUPS(Mem{Base: src}, v0)
			VMOVUPS(Mem{Base: src, Disp: 64}, v1)
			VMOVUPS(v0, Mem{Base: b, Disp: s * 64})
			VMOVUPS(v1, Mem{Base: b1, Disp: s * 64})
			ADDQ(ldb, src)
		} else {
			VMOVUPS(Mem{Base: b, Disp: s * 64}, v0)
			VMOVUPS(Mem{Base: b1, Disp: s * 64}, v1)
		}
		for r := range rows {
			m := aAt(r/6, r%6, s)
			if direct {
				m = rowAt(as, ld, r, s*size)
			}
			x := ZMM()
			bcast(m, x)
			fma(v0, x, acc[2*r])
			fma(v1, x, acc[2*r+1])
		}
	}
	advance := func(steps int) {
		for _, base := range as {
			if direct {
				ADDQ(U32(steps*size), base)
			} else {
				ADDQ(U32(steps*6*size), base)
			}
		}
		ADDQ(U32(steps*64), b)
		ADDQ(U32(steps*64), b1)
	}
	kLoop4(name, k, withSpread(step, spread), advance, name+"_store")
	Label(name + "_store")
	if ops {
		storeOpsAndReturn(name, rows, acc)
		return
	}
	storeAndReturn512(name, rows, size, acc, add)
}

// prefetchRow prefetches with pf the 128 bytes of C's row at c (three
// lines' addresses: the row need not start a line).
func prefetchRow(c reg.Register, pf func(Op)) {
	pf(Mem{Base: c})
	pf(Mem{Base: c, Disp: 64})
	pf(Mem{Base: c, Disp: 127})
}

// spreadPrefetchC asks for the tile's C (rows of 128 bytes, parameters c
// and ldc) one row at a time instead of all at once: it prefetches the
// first row into L1 now and returns code that, run once every four steps
// of the k loop, prefetches the next row into L2, staying on the last row
// once there. A tile's 24 lines asked for at once from memory wait for
// the core's few fill buffers, and the k loop waits behind them; spread
// out, they arrive while the FMAs run (one thread, 2048³, alternated:
// 150–156 GFLOP/s with the burst, 156–163 spread). Where k is too short for the spread to
// reach the last row it prefetches every row now, as before.
func spreadPrefetchC(name string, rows, size int, k reg.Register) func() {
	c, ldc := loadC(size)
	last := GP64()
	IMUL3Q(Imm(uint64(rows-1)), ldc, last)
	ADDQ(c, last)
	prefetchRow(c, PREFETCHT0)
	ADDQ(ldc, c)
	if k == nil {
		return spreadRows(c, ldc, last)
	}
	CMPQ(k, Imm(uint64(4*(rows-1))))
	JAE(LabelRef(name + "_spread"))
	for i := 1; i < rows; i++ {
		prefetchRow(c, PREFETCHT0)
		ADDQ(ldc, c)
	}
	MOVQ(last, c)
	Label(name + "_spread")
	return spreadRows(c, ldc, last)
}

// withSpread is a k loop's step that runs spread (spreadPrefetchC's code)
// before its first step of each four.
func withSpread(step func(int), spread func()) func(int) {
	return func(s int) {
		if s == 0 {
			spread()
		}
		step(s)
	}
}

// spreadRows is spreadPrefetchC's code run every four steps.
func spreadRows(c, ldc, last reg.Register) func() {
	return func() {
		prefetchRow(c, PREFETCHT1)
		ADDQ(ldc, c)
		CMPQ(c, last)
		CMOVQGT(last, c)
	}
}

// zeroZMM returns n new ZMM accumulators, cleared.
func zeroZMM(n int) []reg.VecVirtual {
	acc := make([]reg.VecVirtual, n)
	for i := range acc {
		acc[i] = ZMM()
		VPXORD(acc[i], acc[i], acc[i])
	}
	return acc
}

// directBases loads parameter lda (in bytes) and returns the base
// registers of a direct kernel's rows rows of A, a the first (rowBases),
// and the row stride.
func directBases(a reg.Register, rows int) ([]reg.Register, reg.Register) {
	ld := Load(Param("lda"), GP64())
	SHLQ(Imm(2), ld)
	as := []reg.Register{a}
	for q := 1; q < (rows+2)/3; q++ {
		as = append(as, GP64())
	}
	rowBases(as, ld)
	return as, ld
}

// rowBases sets bases[1:] to bases[0] plus 3, 6, ... times the row
// stride ld (bytes): the direct kernels' base register every three rows.
func rowBases(bases []reg.Register, ld reg.Register) {
	ld3 := GP64()
	LEAQ(Mem{Base: ld, Index: ld, Scale: 2}, ld3)
	for q := 1; q < len(bases); q++ {
		LEAQ(Mem{Base: bases[q-1], Index: ld3, Scale: 1}, bases[q])
	}
}

// rowAt addresses row r of rows ld bytes apart, disp bytes in, from the
// rowBases registers.
func rowAt(bases []reg.Register, ld reg.Register, r, disp int) Mem {
	m := Mem{Base: bases[r/3], Disp: disp}
	if r%3 != 0 {
		m.Index, m.Scale = ld, uint8(r%3)
	}
	return m
}

// kLoop4 emits the k loop of the pair kernels: four steps an iteration
// while four remain, then one at a time; it jumps to done at k = 0.
func kLoop4(name string, k reg.Register, step func(int), advance func(int), done string) {
	alignLoop()
	Label(name + "_loop4")
	CMPQ(k, Imm(4))
	JL(LabelRef(name + "_tail"))
	for s := range 4 {
		step(s)
	}
	advance(4)
	SUBQ(Imm(4), k)
	JMP(LabelRef(name + "_loop4"))
	Label(name + "_tail")
	TESTQ(k, k)
	JZ(LabelRef(done))
	step(0)
	advance(1)
	DECQ(k)
	JMP(LabelRef(name + "_tail"))
}

// storeAndReturn512 adds the rows×2 vector tile acc into C (sets it, if
// overwrite) and returns: the pair kernels' end.
func storeAndReturn512(name string, rows, size int, acc []reg.VecVirtual, add func(m, x, dst Op)) {
	storeAndReturn(name, size, func(c, ldc reg.Register, put func(Mem, reg.VecVirtual)) {
		storeTile512(rows, c, ldc, acc, put)
	}, add, func(x, m Op) { VMOVUPS(x, m) })
}

// storeAndReturn adds a tile into C (sets it, if overwrite) and returns:
// tile writes the tile through put, add and store are the element
// type's.
func storeAndReturn(name string, size int, tile func(c, ldc reg.Register, put func(Mem, reg.VecVirtual)),
	add func(m, x, dst Op), store func(x, m Op)) {
	c, ldc := loadC(size)
	ow := Load(Param("overwrite"), GP8())
	TESTB(ow, ow)
	JNZ(LabelRef(name + "_overwrite"))
	tile(c, ldc, func(m Mem, x reg.VecVirtual) { add(m, x, x); store(x, m) })
	VZEROUPPER()
	RET()
	// The first k block of a GEMM writes C without reading it, which
	// saves clearing C beforehand.
	Label(name + "_overwrite")
	tile(c, ldc, func(m Mem, x reg.VecVirtual) { store(x, m) })
	VZEROUPPER()
	RET()
}

// loadC loads C's address and its row stride in bytes (size a C
// element's).
func loadC(size int) (c, ldc reg.Register) {
	c = Load(Param("c"), GP64())
	ldc = Load(Param("ldc"), GP64())
	SHLQ(Imm(uint64(map[int]int{4: 2, 8: 3}[size])), ldc)
	return c, ldc
}

// directTapsKernel emits the direct convolution's 12-row kernel: twelve
// output pixels whose windows lie lda elements apart in the image (one
// output row, all inside), so that each tap's run is one offset from the
// first pixel's window, for every pixel the same: the runs are (offset,
// k) pairs shared by every such group of a K block, where the 6-row taps
// kernel takes six row pointers per run and sliver. Its steps are the
// direct GEMM kernel's: twelve broadcasts, two B loads, 24 FMAs.
func directTapsKernel(name string) { directTapsKernelOfOps(name, 2, false, false, true) }

// directTapsKernelOps is directTapsKernel finishing its tile as it stores
// it (storeOpsAndReturn).
func directTapsKernelOps(name string) { directTapsKernelOfOps(name, 2, false, true, true) }

// directTapsKernelOf is directTapsKernel over vecs B slivers (one or
// two) and, masked, with a last parameter mask whose set bits are the
// columns of the last sliver stored (tapsKernelOf's reason). With one
// sliver a step is one B load and twelve FMAs broadcasting A from
// memory.
func directTapsKernelOf(name string, vecs int, masked bool) {
	directTapsKernelOfOps(name, vecs, masked, false, false)
}

// directTapsKernelOfOps is directTapsKernelOf, with ops (two slivers, not
// masked) storing through storeOpsAndReturn, and with pf tapsKernelPF's
// prefetch stream every two steps of four: a 1×1 convolution over
// ResNet's 7×7 maps runs 12-row groups only, which without it waited on
// memory for the first group's every line of each pair of its 1 MB of
// weights (0.108 ms in the model against 0.084 with the weights in L2).
func directTapsKernelOfOps(name string, vecs int, masked, ops, pf bool) {
	const rows, size = 12, 4
	sig := "func(runs *int, n int, a *float32, lda int, b, c *float32, ldc int, overwrite bool, kb int)"
	if masked {
		sig = sig[:len(sig)-1] + ", mask uint16)"
	}
	if pf {
		sig = sig[:len(sig)-1] + ", pfOff, pfStep int)"
	}
	if ops {
		sig = sig[:len(sig)-1] + opsParams
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	doc := []string{fmt.Sprintf("%s computes C[12x%d] += Σ over n runs of A_run·B_run (C = ... if overwrite): run (off, k) reads k", name, 16*vecs),
		fmt.Sprintf("channels at a+off of twelve rows lda apart, and k steps of %s (AVX-512).", slivers[vecs])}
	if masked {
		doc = append(doc, "Only the columns of the last sliver set in mask are stored.")
	}
	if pf {
		doc = append(doc, "Every two steps of four it prefetches the line at b+pfOff into L2, pfStep bytes further each time.")
	}
	if ops {
		doc = append(doc, opsDoc)
	}
	Doc(doc...)
	rp := Load(Param("runs"), GP64())
	n := Load(Param("n"), GP64())
	// a stays in its argument slot, read at each run: the prefetch
	// stream needs the register.
	aArg, err := Param("a").Resolve()
	if err != nil {
		panic(err)
	}
	ld := Load(Param("lda"), GP64())
	SHLQ(Imm(2), ld)
	b := Load(Param("b"), GP64())
	var bHi reg.Register
	if vecs == 2 {
		bHi = Load(Param("kb"), GP64())
		SHLQ(Imm(6), bHi)
		ADDQ(b, bHi)
	}
	spread := spreadPrefetchC(name, rows, 4, nil)
	if ops {
		prefetchResidual(name, rows)
	}
	acc := zeroZMM(vecs * rows)
	base := []reg.Register{GP64(), GP64(), GP64(), GP64()}
	k := GP64()
	var pfp reg.Register
	var pfStep Mem
	if pf {
		pfp = Load(Param("pfOff"), GP64())
		ADDQ(b, pfp)
		st, err := Param("pfStep").Resolve()
		if err != nil {
			panic(err)
		}
		pfStep = st.Addr
	}
	v0, v1 := ZMM(), ZMM()
	step := func(s int) {
		if pf && s%2 == 1 {
			PREFETCHT1(Mem{Base: pfp})
			ADDQ(pfStep, pfp)
		}
		VMOVUPS(Mem{Base: b, Disp: s * 64}, v0)
		if vecs == 1 {
			for r := range rows {
				VFMADD231PS_BCST(rowAt(base, ld, r, s*size), v0, acc[r])
			}
			return
		}
		VMOVUPS(Mem{Base: bHi, Disp: s * 64}, v1)
		for r := range rows {
			x := ZMM()
			VBROADCASTSS(rowAt(base, ld, r, s*size), x)
			VFMADD231PS(v0, x, acc[2*r])
			VFMADD231PS(v1, x, acc[2*r+1])
		}
	}
	advance := func(steps int) {
		for _, r := range base {
			ADDQ(U32(steps*size), r)
		}
		ADDQ(U32(steps*64), b)
		if bHi != nil {
			ADDQ(U32(steps*64), bHi)
		}
	}
	Label(name + "_run")
	TESTQ(n, n)
	JZ(LabelRef(name + "_store"))
	MOVQ(Mem{Base: rp, Disp: 8}, k)
	MOVQ(Mem{Base: rp}, base[0])
	SHLQ(Imm(2), base[0])
	ADDQ(aArg.Addr, base[0])
	rowBases(base, ld)
	kLoop4(name, k, withSpread(step, spread), advance, name+"_next")
	Label(name + "_next")
	ADDQ(U32(16), rp)
	DECQ(n)
	JMP(LabelRef(name + "_run"))
	Label(name + "_store")
	if masked {
		storeMaskedAndReturn(name, rows, vecs, acc)
		return
	}
	if ops {
		storeOpsAndReturn(name, rows, acc)
		return
	}
	storeAndReturn512(name, rows, size, acc, func(m, x, dst Op) { VADDPS(m, x, dst) })
}

// skinnyKernel emits the skinny product's kernel (n ≤ 16 columns, a
// classifier layer): twelve rows of A read where they lie, lda apart, by
// one packed 16-column B sliver over all k steps, into twelve
// accumulators, one vector a row. A step is one B load and twelve FMAs
// with A's value broadcast from memory (one fused load-FMA each): the
// 6×16 AVX2 taps kernel gave such products half the FMA rate, 12 ymm
// FMAs a step for 6 rows. Only the columns in mask are stored, so a
// 10-column C needs no scratch tile.
func skinnyKernel(name string) {
	const rows = 12
	TEXT(name, NOSPLIT, "func(k int, a *float32, lda int, b, c *float32, ldc int, mask uint16, overwrite bool)")
	Pragma("noescape")
	Doc(name+" computes C[12x16] += A·B (C = A·B if overwrite) over k steps from twelve rows of A, lda apart, and one",
		"packed 16-column B sliver, storing only the columns whose bits are set in mask (AVX-512).")
	k := Load(Param("k"), GP64())
	ld := Load(Param("lda"), GP64())
	SHLQ(Imm(2), ld)
	as := []reg.Register{Load(Param("a"), GP64()), GP64(), GP64(), GP64()}
	rowBases(as, ld)
	b := Load(Param("b"), GP64())
	acc := zeroZMM(rows)
	v := ZMM()
	step := func(s int) {
		VMOVUPS(Mem{Base: b, Disp: s * 64}, v)
		for r := range rows {
			VFMADD231PS_BCST(rowAt(as, ld, r, s*4), v, acc[r])
		}
	}
	advance := func(steps int) {
		for _, base := range as {
			ADDQ(U32(steps*4), base)
		}
		ADDQ(U32(steps*64), b)
	}
	kLoop4(name, k, step, advance, name+"_store")
	Label(name + "_store")
	storeMaskedAndReturn(name, rows, 1, acc)
}

// vpdpwssd emits VPDPWSSD b, x, acc (AVX512_VNNI), which avo v0.5 does not
// know: acc's 32-bit lanes += x.lo·b.lo + x.hi·b.hi over their s16 halves.
func vpdpwssd(b, x, acc Op) {
	Instruction(&ir.Instruction{Opcode: "VPDPWSSD", Operands: []Op{b, x, acc},
		Inputs: []Op{b, x, acc}, Outputs: []Op{acc}, ISA: []string{"AVX512_VNNI"}})
}

// vpdpbusd emits VPDPBUSD b, x, acc (AVX512_VNNI), which avo v0.5 does not
// know: acc's 32-bit lanes += the sum of the four products of x's u8 and
// b's s8 bytes in the lane.
func vpdpbusd(b, x, acc Op) {
	Instruction(&ir.Instruction{Opcode: "VPDPBUSD", Operands: []Op{b, x, acc},
		Inputs: []Op{b, x, acc}, Outputs: []Op{acc}, ISA: []string{"AVX512_VNNI"}})
}

// biasZMM returns rows×2 new ZMM accumulators, row by row each pair
// loaded with the 32 column biases at parameter bias.
func biasZMM(rows int) []reg.VecVirtual {
	bias := Load(Param("bias"), GP64())
	acc := make([]reg.VecVirtual, 2*rows)
	for i := range acc {
		acc[i] = ZMM()
		VMOVDQU32(Mem{Base: bias, Disp: 64 * (i % 2)}, acc[i])
	}
	return acc
}

// vnni8Peak issues n rounds of 12 independent VPDPBUSD on ZMM registers
// (12·16 lanes · 4 multiply-adds = 1536 integer ops per round).
func vnni8Peak() {
	probe("vnni8Peak", "vnni8Peak runs n rounds of 12 independent VPDPBUSD on ZMM registers (1536 integer ops per round).",
		12, ZMM, func(x reg.VecVirtual) { VPXORD(x, x, x) },
		func(x, y, acc reg.VecVirtual) { vpdpbusd(x, y, acc) })
}

// storeTile512 is storeTile for rows of two 64-byte vectors.
func storeTile512(rows int, c, ldc reg.Register, acc []reg.VecVirtual, put func(Mem, reg.VecVirtual)) {
	storeRows(rows, 2, 64, c, ldc, acc, put)
}

// mxcsr emits the SSE control word's getter and setter (denormals.go).
func mxcsr() {
	TEXT("getMXCSR", NOSPLIT, "func() uint32")
	Doc("getMXCSR returns the thread's SSE control word (MXCSR).")
	m := AllocLocal(8)
	STMXCSR(m)
	r := GP32()
	MOVL(m, r)
	Store(r, ReturnIndex(0))
	RET()

	TEXT("setMXCSR", NOSPLIT, "func(v uint32)")
	Doc("setMXCSR sets the thread's SSE control word (MXCSR) to v.")
	b, err := Param("v").Resolve()
	if err != nil {
		panic(err)
	}
	LDMXCSR(b.Addr)
	RET()
}

// opsParams are the parameters of a kernel that finishes its tile as it
// stores it (storeOpsAndReturn), opsDoc what its doc says of them.
const (
	opsParams = ", bias, res *float32, ldr int, resBias *float32, flags int, floor, ceil float32)"
	opsDoc    = "Before storing it finishes the tile with flags' ops, in this order: plus the 32 column biases at bias (1; bias first: 2), plus the residual tile at res, rows ldr floats apart (4; residual first: 8), itself plus the 32 column biases at resBias (32; those first: 64), at least floor (16: MAXPS with floor first, so NaN and an equal value are kept), at most ceil (128: MINPS with ceil first, likewise)."
)

// opsDocOf is opsDoc for a tile cols columns wide.
func opsDocOf(cols int) string {
	return strings.ReplaceAll(opsDoc, "the 32 column biases", fmt.Sprintf("the %d column biases", cols))
}

// storeOpsAndReturn adds rows×2 ZMM accumulators acc into C unless
// overwrite, then finishes them with the ops parameter flags selects
// (kernels.TileOps: each an epilogue's op, its operands in the
// epilogue's order, so its NaN payloads too) and stores them: the
// epilogue's pass over C done while the tile is in registers.
func storeOpsAndReturn(name string, rows int, acc []reg.VecVirtual) {
	storeOpsAndReturnW(name, rows, 64, acc)
}

// storeOpsAndReturnW is storeOpsAndReturn for vectors width bytes wide:
// 64 (ZMM, rows of 32 columns) or 32 (YMM, the AVX2 kernels' rows of 16).
func storeOpsAndReturnW(name string, rows, width int, acc []reg.VecVirtual) {
	storeOpsThenW(name, rows, width, acc, nil)
}

// storeOpsThenW is storeOpsAndReturnW running next, where not nil, after
// the store and before the return: a kernel of several tiles jumps back
// from there for its next one.
func storeOpsThenW(name string, rows, width int, acc []reg.VecVirtual, next func()) {
	vec := ZMM
	if width == 32 {
		vec = YMM
	}
	c, ldc := loadC(4)
	ow := Load(Param("overwrite"), GP8())
	TESTB(ow, ow)
	JNZ(LabelRef(name + "_ops"))
	for i := range rows {
		row := Mem{Base: c, Index: ldc, Scale: 1}
		if i == 0 {
			row = Mem{Base: c}
		}
		VADDPS(row, acc[2*i], acc[2*i])
		VADDPS(row.Offset(width), acc[2*i+1], acc[2*i+1])
		if i > 0 {
			ADDQ(ldc, c)
		}
	}
	Label(name + "_ops")
	c, ldc = loadC(4)
	flags := Load(Param("flags"), GP64())
	t0, t1 := vec(), vec()
	// Bias: a row of the tile's columns, the same for every row.
	TESTQ(U32(1), flags)
	JZ(LabelRef(name + "_res"))
	bias := Load(Param("bias"), GP64())
	VMOVUPS(Mem{Base: bias}, t0)
	VMOVUPS(Mem{Base: bias, Disp: width}, t1)
	TESTQ(U32(2), flags)
	JNZ(LabelRef(name + "_biasfirst"))
	for i, x := range acc {
		VADDPS([]reg.VecVirtual{t0, t1}[i%2], x, x) // x + bias
	}
	JMP(LabelRef(name + "_res"))
	Label(name + "_biasfirst")
	for i, x := range acc {
		VADDPS(x, []reg.VecVirtual{t0, t1}[i%2], x) // bias + x
	}
	// Residual: a tile of C's shape, rows ldr floats apart, with its own
	// bias where flags has 32.
	Label(name + "_res")
	TESTQ(U32(4), flags)
	JZ(LabelRef(name + "_floor"))
	res := Load(Param("res"), GP64())
	ldr := Load(Param("ldr"), GP64())
	SHLQ(Imm(2), ldr)
	TESTQ(U32(32), flags)
	JNZ(LabelRef(name + "_resbias"))
	TESTQ(U32(8), flags)
	JNZ(LabelRef(name + "_resfirst"))
	for i := range rows {
		VADDPS(Mem{Base: res}, acc[2*i], acc[2*i]) // x + r
		VADDPS(Mem{Base: res, Disp: width}, acc[2*i+1], acc[2*i+1])
		ADDQ(ldr, res)
	}
	JMP(LabelRef(name + "_floor"))
	Label(name + "_resfirst")
	for i := range rows {
		VMOVUPS(Mem{Base: res}, t0)
		VMOVUPS(Mem{Base: res, Disp: width}, t1)
		VADDPS(acc[2*i], t0, acc[2*i]) // r + x
		VADDPS(acc[2*i+1], t1, acc[2*i+1])
		ADDQ(ldr, res)
	}
	JMP(LabelRef(name + "_floor"))
	residualWithBias(name, rows, width, acc, flags, res, ldr, t0, t1)
	// Floor: MAXPS with the floor first returns x where x is NaN or
	// equal to it, as the generated epilogue's maximum(x, constant).
	bound(name+"_floor", name+"_ceil", 16, "floor", acc, flags, t0, func(x, t reg.VecVirtual) { VMAXPS(x, t, x) })
	// Ceiling: MINPS with the ceiling first, as the generated epilogue's
	// minimum(x, constant) and clamp's upper bound (ReLU6).
	bound(name+"_ceil", name+"_put", 128, "ceil", acc, flags, t0, func(x, t reg.VecVirtual) { VMINPS(x, t, x) })
	Label(name + "_put")
	storeRows(rows, 2, width, c, ldc, acc, func(m Mem, x reg.VecVirtual) { VMOVUPS(x, m) })
	if next != nil {
		next()
	}
	VZEROUPPER()
	RET()
}

// bound emits, at label, the bound op (with the parameter param, broadcast
// into t, as its first operand) on every accumulator where flags has
// flag, then goes on to next.
func bound(label, next string, flag uint32, param string, acc []reg.VecVirtual, flags reg.Register, t reg.VecVirtual, op func(x, t reg.VecVirtual)) {
	Label(label)
	TESTQ(U32(flag), flags)
	JZ(LabelRef(next))
	v, err := Param(param).Resolve()
	if err != nil {
		panic(err)
	}
	VBROADCASTSS(v.Addr, t)
	for _, x := range acc {
		op(x, t)
	}
}

// prefetchResidual asks for the residual tile of a kernel with ops (flag
// 4) into L2 before its k loop: the tile's rows are read only at the
// store, where loads from L3 stalled the kernel for each row (the
// residual of a ResNet block was written three convolutions before).
func prefetchResidual(name string, rows int) { prefetchResidualW(name, rows, 64) }

// prefetchResidualW is prefetchResidual for rows of two vectors width
// bytes wide (storeOpsAndReturnW).
func prefetchResidualW(name string, rows, width int) {
	flags := Load(Param("flags"), GP64())
	TESTQ(U32(4), flags)
	JZ(LabelRef(name + "_nores"))
	res := Load(Param("res"), GP64())
	ldr := Load(Param("ldr"), GP64())
	SHLQ(Imm(2), ldr)
	for i := range rows {
		if width == 32 {
			PREFETCHT1(Mem{Base: res})
			PREFETCHT1(Mem{Base: res, Disp: 63})
		} else {
			prefetchRow(res, PREFETCHT1)
		}
		if i < rows-1 {
			ADDQ(ldr, res)
		}
	}
	Label(name + "_nores")
}

// residualWithBias emits storeOpsAndReturn's residual with its own bias
// (flags 32): each row of the residual tile loaded into t0, t1, its bias
// added in the order flags 64 says, then added to the row in the order
// flags 8 says: four variants, one chosen per tile. It ends at the
// floor.
func residualWithBias(name string, rows, width int, acc []reg.VecVirtual, flags, res, ldr reg.Register, t0, t1 reg.VecVirtual) {
	Label(name + "_resbias")
	rb := Load(Param("resBias"), GP64())
	vec := ZMM
	if width == 32 {
		vec = YMM
	}
	b0, b1 := vec(), vec()
	VMOVUPS(Mem{Base: rb}, b0)
	VMOVUPS(Mem{Base: rb, Disp: width}, b1)
	for v := range 4 {
		biasFirst, resFirst := v&1 != 0, v&2 != 0
		if v < 3 {
			// Fall through to variant v where flags asks for it.
			next := fmt.Sprintf("%s_resbias%d", name, v+1)
			TESTQ(U32(64), flags)
			if biasFirst {
				JZ(LabelRef(next))
			} else {
				JNZ(LabelRef(next))
			}
			TESTQ(U32(8), flags)
			if resFirst {
				JZ(LabelRef(next))
			} else {
				JNZ(LabelRef(next))
			}
		}
		for i := range rows {
			VMOVUPS(Mem{Base: res}, t0)
			VMOVUPS(Mem{Base: res, Disp: width}, t1)
			for h, t := range []reg.VecVirtual{t0, t1} {
				b := []reg.VecVirtual{b0, b1}[h]
				if biasFirst {
					VADDPS(t, b, t) // resBias + r
				} else {
					VADDPS(b, t, t) // r + resBias
				}
				x := acc[2*i+h]
				if resFirst {
					VADDPS(x, t, x) // r + x
				} else {
					VADDPS(t, x, x) // x + r
				}
			}
			ADDQ(ldr, res)
		}
		JMP(LabelRef(name + "_floor"))
		if v < 3 {
			Label(fmt.Sprintf("%s_resbias%d", name, v+1))
		}
	}
}

// rowsOf is the rows of a rows kernel's group, by its vectors a row: as
// many as keep twelve accumulators (eight for four vectors), the row's
// B vectors, a broadcast and the mask in the sixteen YMM registers.
var rowsOf = map[int]int{1: 12, 2: 6, 3: 3, 4: 2}

// rowsKernel emits name(k, a, lda, b, c, ldc, groups, mask, overwrite):
// the AVX2 kernel of narrow products (at most 32 columns), which walks
// groups groups of rowsOf[vecs] rows of A itself, read in place (lda
// elements apart), each over all k steps of one or two packed 16-column
// B slivers (16 floats a step; the second k steps after the first), of
// which it reads 8·vecs columns, so that a call
// covers many rows where the 6×16 kernels take a call, a packed A and,
// for fewer than 16 columns, a scratch copy per six rows. Each C row of
// 8·vecs columns is set (overwrite) or added to; with masked, its last
// vector is read and stored under the eight 32-bit lanes at mask. The
// sums are the GEMM kernels': each element's FMAs from zero in k order.
// With ops, it takes the TileOps parameters of the 6×16 kernels' ops
// variants and finishes each group with them before storing it
// (storeOpsThenW's ops, on rows of vecs vectors).
func rowsKernel(name string, vecs int, masked, ops bool) {
	rows := rowsOf[vecs]
	sig := "func(k int, a *float32, lda int, b, c *float32, ldc int, groups int, mask *int32, overwrite bool)"
	if ops {
		sig = strings.TrimSuffix(sig, ")") + ", bias, res *float32, ldr int, resBias *float32, flags int, floor, ceil float32)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	doc := []string{name + " computes groups groups of C[" + fmt.Sprint(rows) + "x" + fmt.Sprint(8*vecs) + "] = A·B (+= unless overwrite) over k steps,",
		"A read in place, B packed 16-column slivers (AVX2); see rowsKernel."}
	if ops {
		doc = append(doc, opsDocOf(8*vecs))
	}
	Doc(doc...)
	ld := Load(Param("lda"), GP64())
	SHLQ(Imm(2), ld)
	as := []reg.Register{Load(Param("a"), GP64())}
	for q := 1; q < (rows+2)/3; q++ {
		as = append(as, GP64())
	}
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(2), ldc)
	c := Load(Param("c"), GP64())
	groups := Load(Param("groups"), GP64())
	var resp reg.Register
	if ops {
		resp = Load(Param("res"), GP64())
	}
	// next is what takes a base from one group's end (k steps in) to the
	// next group's start: rows rows down, k steps back.
	next := GP64()
	IMUL3Q(U32(rows), ld, next)
	kb := Load(Param("k"), GP64())
	SHLQ(Imm(2), kb)
	SUBQ(kb, next)
	var mv reg.VecVirtual
	if masked {
		m := Load(Param("mask"), GP64())
		mv = YMM()
		VMOVDQU(Mem{Base: m}, mv)
	}
	// load reads vector h of a row at m, under the mask if it is the last
	// one of a masked kernel.
	load := func(m Mem, h int, dst reg.VecVirtual) {
		if masked && h == vecs-1 {
			VMASKMOVPS(m, mv, dst)
		} else {
			VMOVUPS(m, dst)
		}
	}
	Label(name + "_group")
	TESTQ(groups, groups)
	JZ(LabelRef(name + "_done"))
	rowBases(as, ld)
	acc := make([]reg.VecVirtual, rows*vecs)
	for i := range acc {
		acc[i] = YMM()
		VXORPS(acc[i], acc[i], acc[i])
	}
	b := Load(Param("b"), GP64())
	k := Load(Param("k"), GP64())
	bs := []reg.Register{b}
	if vecs > 2 {
		b2 := GP64()
		MOVQ(k, b2)
		SHLQ(Imm(6), b2)
		ADDQ(b, b2)
		bs = append(bs, b2)
	}
	bv := make([]reg.VecVirtual, vecs)
	for h := range bv {
		bv[h] = YMM()
	}
	t := YMM()
	step := func(s int) {
		for h := range vecs {
			VMOVUPS(Mem{Base: bs[h/2], Disp: s*64 + 32*(h%2)}, bv[h])
		}
		for r := range rows {
			VBROADCASTSS(rowAt(as, ld, r, s*4), t)
			for h := range vecs {
				VFMADD231PS(bv[h], t, acc[r*vecs+h])
			}
		}
	}
	advance := func(steps int) {
		for _, base := range as {
			ADDQ(U32(steps*4), base)
		}
		for _, base := range bs {
			ADDQ(U32(steps*64), base)
		}
	}
	kLoop4(name, k, step, advance, name+"_store")
	Label(name + "_store")
	ow := Load(Param("overwrite"), GP8())
	TESTB(ow, ow)
	if ops {
		// C's rows first, as the 6×16 kernels add them, then the ops.
		JNZ(LabelRef(name + "_ops"))
		cr := GP64()
		MOVQ(c, cr)
		for r := range rows {
			for h := range vecs {
				x := acc[r*vecs+h]
				load(Mem{Base: cr, Disp: 32 * h}, h, t)
				VADDPS(t, x, x) // x + c
			}
			ADDQ(ldc, cr)
		}
		Label(name + "_ops")
		rowsOps(name, rows, vecs, acc, resp, load)
		rowsPut(c, ldc, rows, vecs, acc, masked, mv, false)
		ldr := Load(Param("ldr"), GP64())
		IMUL3Q(U32(4*rows), ldr, ldr)
		ADDQ(ldr, resp)
	} else {
		JNZ(LabelRef(name + "_set"))
		rowsPut(c, ldc, rows, vecs, acc, masked, mv, true)
		JMP(LabelRef(name + "_next"))
		Label(name + "_set")
		rowsPut(c, ldc, rows, vecs, acc, masked, mv, false)
		Label(name + "_next")
	}
	ADDQ(next, as[0])
	DECQ(groups)
	JMP(LabelRef(name + "_group"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// rowsPut stores the rows kernels' group acc (rows rows of vecs vectors)
// into C at c, rows ldc bytes apart, adding C's values first if add,
// the last vector of a row under mask mv if masked; it leaves c at the
// next group's first row.
func rowsPut(c, ldc reg.Register, rows, vecs int, acc []reg.VecVirtual, masked bool, mv reg.VecVirtual, add bool) {
	var t reg.VecVirtual
	if add && masked {
		t = YMM()
	}
	for r := range rows {
		for h := range vecs {
			m, x := Mem{Base: c, Disp: 32 * h}, acc[r*vecs+h]
			last := masked && h == vecs-1
			if add {
				if last {
					VMASKMOVPS(m, mv, t)
					VADDPS(t, x, x)
				} else {
					VADDPS(m, x, x)
				}
			}
			if last {
				VMASKMOVPS(x, mv, m)
			} else {
				VMOVUPS(x, m)
			}
		}
		ADDQ(ldc, c)
	}
}

// rowsOps applies the ops parameter flags selects to a rows kernel's
// group acc (rows rows of vecs vectors), the residual's rows from resp
// (ldr floats apart), vectors read by load: storeOpsThenW's ops, in its
// order and with its operands' order.
func rowsOps(name string, rows, vecs int, acc []reg.VecVirtual, resp reg.Register, load func(Mem, int, reg.VecVirtual)) {
	flags := Load(Param("flags"), GP64())
	TESTQ(U32(1), flags)
	JZ(LabelRef(name + "_res"))
	bz := rowVectors("bias", vecs, load)
	TESTQ(U32(2), flags)
	JNZ(LabelRef(name + "_biasfirst"))
	for i, x := range acc {
		VADDPS(bz[i%vecs], x, x) // x + bias
	}
	JMP(LabelRef(name + "_res"))
	Label(name + "_biasfirst")
	for i, x := range acc {
		VADDPS(x, bz[i%vecs], x) // bias + x
	}
	Label(name + "_res")
	TESTQ(U32(4), flags)
	JZ(LabelRef(name + "_floor"))
	ldr := Load(Param("ldr"), GP64())
	SHLQ(Imm(2), ldr)
	rp := GP64()
	t := YMM()
	// residual emits the residual's rows with resBias rb (nil: none), it
	// first if rbFirst, then x + r (r + x where flags has 8).
	residual := func(label string, rb []reg.VecVirtual, rbFirst bool) {
		for _, resFirst := range []bool{false, true} {
			if !resFirst {
				TESTQ(U32(8), flags)
				JNZ(LabelRef(label + "_resfirst"))
			} else {
				Label(label + "_resfirst")
			}
			MOVQ(resp, rp)
			for r := range rows {
				for h := range vecs {
					load(Mem{Base: rp, Disp: 32 * h}, h, t)
					if rb != nil {
						if rbFirst {
							VADDPS(t, rb[h], t) // resBias + r
						} else {
							VADDPS(rb[h], t, t) // r + resBias
						}
					}
					x := acc[r*vecs+h]
					if resFirst {
						VADDPS(x, t, x) // r + x
					} else {
						VADDPS(t, x, x) // x + r
					}
				}
				ADDQ(ldr, rp)
			}
			JMP(LabelRef(name + "_floor"))
		}
	}
	TESTQ(U32(32), flags)
	JZ(LabelRef(name + "_plainres"))
	rb := rowVectors("resBias", vecs, load)
	TESTQ(U32(64), flags)
	JNZ(LabelRef(name + "_rbfirst"))
	residual(name+"_rb", rb, false)
	Label(name + "_rbfirst")
	residual(name+"_rbf", rb, true)
	Label(name + "_plainres")
	residual(name+"_pr", nil, false)
	bound(name+"_floor", name+"_ceil", 16, "floor", acc, flags, t, func(x, t reg.VecVirtual) { VMAXPS(x, t, x) })
	bound(name+"_ceil", name+"_put", 128, "ceil", acc, flags, t, func(x, t reg.VecVirtual) { VMINPS(x, t, x) })
	Label(name + "_put")
}

// rowVectors loads the vecs vectors of one row of columns at the pointer
// parameter param (a bias) into new YMM registers, by load.
func rowVectors(param string, vecs int, load func(Mem, int, reg.VecVirtual)) []reg.VecVirtual {
	p := Load(Param(param), GP64())
	v := make([]reg.VecVirtual, vecs)
	for h := range v {
		v[h] = YMM()
		load(Mem{Base: p, Disp: 32 * h}, h, v[h])
	}
	return v
}
