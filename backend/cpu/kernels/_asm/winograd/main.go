// Command winograd generates the AVX2 and AVX-512 transforms of package kernels'
// Winograd F(2×2, 3×3) and F(4×4, 3×3) convolutions
// (conv_winograd_amd64.s): eight or sixteen channels a vector, every channel's
// arithmetic that of the Go twins (winoInput4Go, winoInput6Go, …) in the
// same order, products rounded before they are added (no fused
// multiply-adds), so the bits are theirs.
package main

import (
	"fmt"
	"math"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	for _, w = range []width{avx2, avx512} {
		input()
		output()
		input6()
		output6()
	}
	w = avx2
	absMax()
	Generate()
}

// width is the kernels' vectors: AVX2's eight lanes or AVX-512's sixteen
// (the same arithmetic, lane for lane).
type width struct {
	suffix, doc string
	bytes       int
	shift       uint8 // log2 of the lanes
}

var (
	avx2   = width{suffix: "", doc: "AVX2", bytes: 32, shift: 3}
	avx512 = width{suffix: "x16", doc: "AVX-512", bytes: 64, shift: 4}
	w      width
)

// vec is a new vector register of the width being generated.
func vec() reg.VecVirtual {
	if w.bytes == 64 {
		return ZMM()
	}
	return YMM()
}

// name is a kernel's or label's name at the width being generated.
func name(s string) string { return s + w.suffix }

// doc is a kernel's doc comment at the width being generated.
func doc(s string) string {
	lanes := 1 << w.shift
	s = strings.ReplaceAll(s, "AVX2", w.doc)
	return strings.ReplaceAll(s, "multiple of 8", fmt.Sprintf("multiple of %d", lanes))
}

// bytes loads integer parameter name and scales it from elements to bytes.
func bytes(name string) reg.Register {
	r := Load(Param(name), GP64())
	SHLQ(U8(2), r)
	return r
}

// rows returns base, base+s, base+2s and base+3s (s in bytes) in registers.
func rows(base, s reg.Register) [4]reg.Register {
	r := [4]reg.Register{base, GP64(), GP64(), GP64()}
	for i := 1; i < 4; i++ {
		MOVQ(r[i-1], r[i])
		ADDQ(s, r[i])
	}
	return r
}

// at is element j of a row of four whose elements are col bytes apart
// (col3: three times that) from base.
func at(base, col, col3 reg.Register, j int) Mem {
	switch j {
	case 0:
		return Mem{Base: base}
	case 1:
		return Mem{Base: base, Index: col, Scale: 1}
	case 2:
		return Mem{Base: base, Index: col, Scale: 2}
	}
	return Mem{Base: base, Index: col3, Scale: 1}
}

func triple(s reg.Register) reg.Register {
	t := GP64()
	LEAQ(Mem{Base: s, Index: s, Scale: 2}, t)
	return t
}

// input emits winoInput4: V = Bᵀ d B for c channels, eight at a time.
func input() {
	TEXT(name("winoInput4"), NOSPLIT, "func(d *float32, row, col int, v *float32, vs, c int)")
	Pragma("noescape")
	Doc(doc("winoInput4" + w.suffix + " is winoInput4Go on AVX2: v[ξ*vs+ch] = (Bᵀ d B)_ξ of d[i*row+j*col+ch] for ch < c (c a positive multiple of 8)."))
	d := Load(Param("d"), GP64())
	row, col := bytes("row"), bytes("col")
	col3 := triple(col)
	dr := rows(d, row)
	v := Load(Param("v"), GP64())
	vs := bytes("vs")
	vs3 := triple(vs)
	vs4 := GP64()
	LEAQ(Mem{Base: vs, Scale: 4, Index: vs}, vs4) // 5·vs, corrected below
	SUBQ(vs, vs4)
	vr := rows(v, vs4)
	n := Load(Param("c"), GP64())
	SHRQ(U8(w.shift), n)
	Label(name("input_loop"))
	// t = Bᵀ d, a row of t at a time: t₀ = d₀ − d₂, t₁ = d₁ + d₂,
	// t₂ = d₂ − d₁, t₃ = d₁ − d₃ (rows); then V_i = t_i B.
	type pair struct{ a, b, op int } // op 0: a−b, 1: a+b
	tRows := [4]pair{{0, 2, 0}, {1, 2, 1}, {2, 1, 0}, {1, 3, 0}}
	for i, tr := range tRows {
		var t [4]reg.VecVirtual
		for j := range 4 {
			x, y := vec(), vec()
			VMOVUPS(at(dr[tr.a], col, col3, j), x)
			VMOVUPS(at(dr[tr.b], col, col3, j), y)
			t[j] = vec()
			if tr.op == 0 {
				VSUBPS(y, x, t[j])
			} else {
				VADDPS(y, x, t[j])
			}
		}
		out := [4]reg.VecVirtual{vec(), vec(), vec(), vec()}
		VSUBPS(t[2], t[0], out[0])
		VADDPS(t[2], t[1], out[1])
		VSUBPS(t[1], t[2], out[2])
		VSUBPS(t[3], t[1], out[3])
		for j := range 4 {
			VMOVUPS(out[j], at(vr[i], vs, vs3, j))
		}
	}
	for _, r := range append(dr[:], vr[:]...) {
		ADDQ(U8(w.bytes), r)
	}
	DECQ(n)
	JNZ(LabelRef(name("input_loop")))
	VZEROUPPER()
	RET()
}

// output emits winoOutput4: Y = Aᵀ M A for n channels, eight at a time.
func output() {
	TEXT(name("winoOutput4"), NOSPLIT, "func(m *float32, ms int, y *float32, row, col, n int)")
	Pragma("noescape")
	Doc(doc("winoOutput4" + w.suffix + " is winoOutput4Go on AVX2: y[i*row+j*col+ch] = (Aᵀ M A)_ij of m[ξ*ms+ch] for ch < n (n a positive multiple of 8)."))
	m := Load(Param("m"), GP64())
	ms := bytes("ms")
	ms3 := triple(ms)
	ms4 := GP64()
	LEAQ(Mem{Base: ms, Scale: 4, Index: ms}, ms4)
	SUBQ(ms, ms4)
	mr := rows(m, ms4)
	y := Load(Param("y"), GP64())
	row, col := bytes("row"), bytes("col")
	y1 := GP64()
	MOVQ(y, y1)
	ADDQ(row, y1)
	n := Load(Param("n"), GP64())
	SHRQ(U8(w.shift), n)
	Label(name("output_loop"))
	// s = Aᵀ M: s₀ = M₀ + M₁ + M₂, s₁ = M₁ − M₂ − M₃ (rows), a column
	// j at a time; then Y_i = s_i A.
	var s [2][4]reg.VecVirtual
	for j := range 4 {
		var x [4]reg.VecVirtual
		for i := range 4 {
			x[i] = vec()
			VMOVUPS(at(mr[i], ms, ms3, j), x[i])
		}
		s[0][j], s[1][j] = vec(), vec()
		VADDPS(x[1], x[0], s[0][j])
		VADDPS(x[2], s[0][j], s[0][j])
		VSUBPS(x[2], x[1], s[1][j])
		VSUBPS(x[3], s[1][j], s[1][j])
	}
	for i, base := range []reg.Register{y, y1} {
		a, b := vec(), vec()
		VADDPS(s[i][1], s[i][0], a)
		VADDPS(s[i][2], a, a)
		VSUBPS(s[i][2], s[i][1], b)
		VSUBPS(s[i][3], b, b)
		VMOVUPS(a, Mem{Base: base})
		VMOVUPS(b, Mem{Base: base, Index: col, Scale: 1})
	}
	for _, r := range append(mr[:], y, y1) {
		ADDQ(U8(w.bytes), r)
	}
	DECQ(n)
	JNZ(LabelRef(name("output_loop")))
	VZEROUPPER()
	RET()
}

// consts broadcasts each of vs into a vector register.
func consts(vs ...float32) []reg.VecVirtual {
	out := make([]reg.VecVirtual, len(vs))
	for i, v := range vs {
		g, x := GP32(), XMM()
		MOVL(U32(math.Float32bits(v)), g)
		MOVD(g, x)
		out[i] = vec()
		VBROADCASTSS(x, out[i])
	}
	return out
}

// b6 emits F(4×4, 3×3)'s Bᵀ applied to x (six vectors), winoB6's
// operations in its order, into six new vectors.
func b6(x [6]Op, c4, c5 reg.VecVirtual) [6]reg.VecVirtual {
	var v [6]reg.VecVirtual
	for i := range v {
		v[i] = vec()
		VMOVUPS(x[i], v[i])
	}
	t, p, q, r, s := vec(), vec(), vec(), vec(), vec()
	VMULPS(c4, v[2], t)
	VSUBPS(t, v[4], p) // p = x4 - 4·x2
	VMULPS(c4, v[1], t)
	VSUBPS(t, v[3], q) // q = x3 - 4·x1
	VSUBPS(v[2], v[4], r)
	VSUBPS(v[1], v[3], s)
	VADDPS(s, s, s) // s = 2·(x3 - x1)
	var y [6]reg.VecVirtual
	for i := range y {
		y[i] = vec()
	}
	u := vec()
	VMULPS(c4, v[0], t)
	VMULPS(c5, v[2], u)
	VSUBPS(u, t, y[0])
	VADDPS(v[4], y[0], y[0]) // y0 = 4·x0 - 5·x2 + x4
	VMULPS(c4, v[1], t)
	VMULPS(c5, v[3], u)
	VSUBPS(u, t, y[5])
	VADDPS(v[5], y[5], y[5]) // y5 = 4·x1 - 5·x3 + x5
	VADDPS(q, p, y[1])
	VSUBPS(q, p, y[2])
	VADDPS(s, r, y[3])
	VSUBPS(s, r, y[4])
	return y
}

// a6 emits F(4×4, 3×3)'s Aᵀ applied to x (six vectors), winoA6's
// operations in its order, into four new vectors.
func a6(x [6]Op, c2, c4, c8 reg.VecVirtual) [4]reg.VecVirtual {
	var v [6]reg.VecVirtual
	for i := range v {
		v[i] = vec()
		VMOVUPS(x[i], v[i])
	}
	a, b, c, e, t := vec(), vec(), vec(), vec(), vec()
	VADDPS(v[2], v[1], a)
	VSUBPS(v[2], v[1], b)
	VADDPS(v[4], v[3], c)
	VSUBPS(v[4], v[3], e)
	var y [4]reg.VecVirtual
	for i := range y {
		y[i] = vec()
	}
	VADDPS(a, v[0], y[0])
	VADDPS(c, y[0], y[0]) // y0 = x0 + a + c
	VMULPS(c2, e, t)
	VADDPS(t, b, y[1]) // y1 = b + 2e
	VMULPS(c4, c, t)
	VADDPS(t, a, y[2]) // y2 = a + 4c
	VMULPS(c8, e, t)
	VADDPS(t, b, y[3])
	VADDPS(v[5], y[3], y[3]) // y3 = b + 8e + x5
	return y
}

// times returns s·k in a new register (k = 3 or 5).
func times(s reg.Register, k int) reg.Register {
	t := GP64()
	LEAQ(Mem{Base: s, Index: s, Scale: uint8(k - 1)}, t)
	return t
}

// six is element j of a run of six whose elements are s bytes apart (s3,
// s5: three and five times that) from base.
func six(base, s, s3, s5 reg.Register, j int) Mem {
	switch j {
	case 0:
		return Mem{Base: base}
	case 1, 2, 4:
		return Mem{Base: base, Index: s, Scale: uint8(j)}
	case 3:
		return Mem{Base: base, Index: s3, Scale: 1}
	}
	return Mem{Base: base, Index: s5, Scale: 1}
}

// run6 is the run of six elements s bytes apart (s3, s5: three and five
// times that) from base.
func run6(base, s, s3, s5 reg.Register) [6]Op {
	var x [6]Op
	for j := range x {
		x[j] = six(base, s, s3, s5, j)
	}
	return x
}

// scratchRow is row i of a 6-wide scratch of vectors.
func scratchRow(t Mem, i int) [6]Op {
	var x [6]Op
	for j := range x {
		x[j] = t.Offset((6*i + j) * w.bytes)
	}
	return x
}

// input6 emits winoInput6: V = Bᵀ d B for F(4×4, 3×3), eight channels a
// time: Bᵀ down each column of the patch into a 6×6 scratch of vectors,
// then along each of its rows.
func input6() {
	TEXT(name("winoInput6"), 0, "func(d *float32, row, col int, v *float32, vs, c int)")
	Pragma("noescape")
	Doc(doc("winoInput6" + w.suffix + " is winoInput6Go on AVX2: v[ξ*vs+ch] = (Bᵀ d B)_ξ of d[i*row+j*col+ch] for ch < c (c a positive multiple of 8)."))
	t := AllocLocal(36 * w.bytes)
	d := Load(Param("d"), GP64())
	row, col := bytes("row"), bytes("col")
	row3, row5 := times(row, 3), times(row, 5)
	v := Load(Param("v"), GP64())
	vs := bytes("vs")
	vs3, vs5 := times(vs, 3), times(vs, 5)
	n := Load(Param("c"), GP64())
	SHRQ(U8(w.shift), n)
	k := consts(4, 5)
	Label(name("input6_loop"))
	dj := GP64()
	MOVQ(d, dj)
	for j := range 6 {
		y := b6(run6(dj, row, row3, row5), k[0], k[1])
		for r := range 6 {
			VMOVUPS(y[r], t.Offset((6*r+j)*w.bytes))
		}
		if j < 5 {
			ADDQ(col, dj)
		}
	}
	vi := GP64()
	MOVQ(v, vi)
	for i := range 6 {
		y := b6(scratchRow(t, i), k[0], k[1])
		for j := range 6 {
			VMOVUPS(y[j], six(vi, vs, vs3, vs5, j))
		}
		if i < 5 {
			LEAQ(Mem{Base: vi, Index: vs3, Scale: 2}, vi)
		}
	}
	ADDQ(U8(w.bytes), d)
	ADDQ(U8(w.bytes), v)
	DECQ(n)
	JNZ(LabelRef(name("input6_loop")))
	VZEROUPPER()
	RET()
}

// output6 emits winoOutput6: Y = Aᵀ M A for F(4×4, 3×3), eight channels a
// time: Aᵀ down each column of the 6×6 products into a 4×6 scratch of
// vectors, then along each of its rows.
func output6() {
	TEXT(name("winoOutput6"), 0, "func(m *float32, ms int, y *float32, row, col, n int)")
	Pragma("noescape")
	Doc(doc("winoOutput6" + w.suffix + " is winoOutput6Go on AVX2: y[i*row+j*col+ch] = (Aᵀ M A)_ij of m[ξ*ms+ch] for ch < n (n a positive multiple of 8)."))
	t := AllocLocal(24 * w.bytes)
	m := Load(Param("m"), GP64())
	ms := bytes("ms")
	ms6 := GP64()
	LEAQ(Mem{Base: ms, Index: ms, Scale: 2}, ms6)
	ADDQ(ms6, ms6) // 6·ms: a row of the 6×6 products
	ms18, ms30 := times(ms6, 3), times(ms6, 5)
	y := Load(Param("y"), GP64())
	row, col := bytes("row"), bytes("col")
	col3 := triple(col)
	n := Load(Param("n"), GP64())
	SHRQ(U8(w.shift), n)
	k := consts(2, 4, 8)
	Label(name("output6_loop"))
	mj := GP64()
	MOVQ(m, mj)
	for j := range 6 {
		s := a6(run6(mj, ms6, ms18, ms30), k[0], k[1], k[2])
		for i := range 4 {
			VMOVUPS(s[i], t.Offset((6*i+j)*w.bytes))
		}
		if j < 5 {
			ADDQ(ms, mj)
		}
	}
	yi := GP64()
	MOVQ(y, yi)
	for i := range 4 {
		r := a6(scratchRow(t, i), k[0], k[1], k[2])
		for j := range 4 {
			VMOVUPS(r[j], at(yi, col, col3, j))
		}
		if i < 3 {
			ADDQ(row, yi)
		}
	}
	ADDQ(U8(w.bytes), m)
	ADDQ(U8(w.bytes), y)
	DECQ(n)
	JNZ(LabelRef(name("output6_loop")))
	VZEROUPPER()
	RET()
}

// absMax emits winoAbsMax: the largest of x's values' bits with the sign
// cleared, as unsigned integers (NaNs above infinities above every finite
// value), over n values (a positive multiple of 32), four vectors a step.
func absMax() {
	TEXT("winoAbsMax", NOSPLIT, "func(x *float32, n int) uint32")
	Pragma("noescape")
	Doc("winoAbsMax returns the largest x[i] bits &^ (1<<31) for i < n (n a positive multiple of 32; AVX2).")
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	g, m := GP32(), XMM()
	MOVL(U32(0x7fffffff), g)
	MOVD(g, m)
	mask := YMM()
	VPBROADCASTD(m, mask)
	var acc [4]reg.VecVirtual
	for i := range acc {
		acc[i] = YMM()
		VPXOR(acc[i], acc[i], acc[i])
	}
	Label("absmax_loop")
	for i := range acc {
		t := YMM()
		VPAND(Mem{Base: x, Disp: 32 * i}, mask, t)
		VPMAXUD(t, acc[i], acc[i])
	}
	ADDQ(U8(128), x)
	SUBQ(U8(32), n)
	JNZ(LabelRef("absmax_loop"))
	VPMAXUD(acc[1], acc[0], acc[0])
	VPMAXUD(acc[3], acc[2], acc[2])
	VPMAXUD(acc[2], acc[0], acc[0])
	lo, hi := XMM(), XMM()
	VEXTRACTI128(U8(1), acc[0], hi)
	VMOVDQU(acc[0].AsX(), lo)
	VPMAXUD(hi, lo, lo)
	t := XMM()
	VPSHUFD(U8(0x4e), lo, t)
	VPMAXUD(t, lo, lo)
	VPSHUFD(U8(0xb1), lo, t)
	VPMAXUD(t, lo, lo)
	r := GP32()
	MOVD(lo, r)
	Store(r, ReturnIndex(0))
	VZEROUPPER()
	RET()
}
