// Command winograd generates the AVX2 transforms of package kernels'
// Winograd F(2×2, 3×3) convolution (conv_winograd_amd64.s): eight
// channels a vector, every channel's arithmetic that of the Go twins
// (winoInputGo, winoOutputGo), so the bits are theirs.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	input()
	output()
	Generate()
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

// input emits winoInput256: V = Bᵀ d B for c channels, eight at a time.
func input() {
	TEXT("winoInput256", NOSPLIT, "func(d *float32, row, col int, v *float32, vs, c int)")
	Pragma("noescape")
	Doc("winoInput256 is winoInputGo on AVX2: v[ξ*vs+ch] = (Bᵀ d B)_ξ of d[i*row+j*col+ch] for ch < c (c a positive multiple of 8).")
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
	SHRQ(U8(3), n)
	Label("input_loop")
	// t = Bᵀ d, a row of t at a time: t₀ = d₀ − d₂, t₁ = d₁ + d₂,
	// t₂ = d₂ − d₁, t₃ = d₁ − d₃ (rows); then V_i = t_i B.
	type pair struct{ a, b, op int } // op 0: a−b, 1: a+b
	tRows := [4]pair{{0, 2, 0}, {1, 2, 1}, {2, 1, 0}, {1, 3, 0}}
	for i, tr := range tRows {
		var t [4]reg.VecVirtual
		for j := range 4 {
			x, y := YMM(), YMM()
			VMOVUPS(at(dr[tr.a], col, col3, j), x)
			VMOVUPS(at(dr[tr.b], col, col3, j), y)
			t[j] = YMM()
			if tr.op == 0 {
				VSUBPS(y, x, t[j])
			} else {
				VADDPS(y, x, t[j])
			}
		}
		out := [4]reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
		VSUBPS(t[2], t[0], out[0])
		VADDPS(t[2], t[1], out[1])
		VSUBPS(t[1], t[2], out[2])
		VSUBPS(t[3], t[1], out[3])
		for j := range 4 {
			VMOVUPS(out[j], at(vr[i], vs, vs3, j))
		}
	}
	for _, r := range append(dr[:], vr[:]...) {
		ADDQ(U8(32), r)
	}
	DECQ(n)
	JNZ(LabelRef("input_loop"))
	VZEROUPPER()
	RET()
}

// output emits winoOutput256: Y = Aᵀ M A for n channels, eight at a time.
func output() {
	TEXT("winoOutput256", NOSPLIT, "func(m *float32, ms int, y *float32, row, col, n int)")
	Pragma("noescape")
	Doc("winoOutput256 is winoOutputGo on AVX2: y[i*row+j*col+ch] = (Aᵀ M A)_ij of m[ξ*ms+ch] for ch < n (n a positive multiple of 8).")
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
	SHRQ(U8(3), n)
	Label("output_loop")
	// s = Aᵀ M: s₀ = M₀ + M₁ + M₂, s₁ = M₁ − M₂ − M₃ (rows), a column
	// j at a time; then Y_i = s_i A.
	var s [2][4]reg.VecVirtual
	for j := range 4 {
		var x [4]reg.VecVirtual
		for i := range 4 {
			x[i] = YMM()
			VMOVUPS(at(mr[i], ms, ms3, j), x[i])
		}
		s[0][j], s[1][j] = YMM(), YMM()
		VADDPS(x[1], x[0], s[0][j])
		VADDPS(x[2], s[0][j], s[0][j])
		VSUBPS(x[2], x[1], s[1][j])
		VSUBPS(x[3], s[1][j], s[1][j])
	}
	for i, base := range []reg.Register{y, y1} {
		a, b := YMM(), YMM()
		VADDPS(s[i][1], s[i][0], a)
		VADDPS(s[i][2], a, a)
		VSUBPS(s[i][2], s[i][1], b)
		VSUBPS(s[i][3], b, b)
		VMOVUPS(a, Mem{Base: base})
		VMOVUPS(b, Mem{Base: base, Index: col, Scale: 1})
	}
	for _, r := range append(mr[:], y, y1) {
		ADDQ(U8(32), r)
	}
	DECQ(n)
	JNZ(LabelRef("output_loop"))
	VZEROUPPER()
	RET()
}
