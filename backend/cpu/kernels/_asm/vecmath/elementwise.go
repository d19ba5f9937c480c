package main

import (
	"fmt"
	"math"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The elementwise kernels of elementwise.go: dst[i] = f(a[i], ...) for
// i < n, any n ≥ 0. Each must give the bits the plain Go loop gives on
// amd64, NaN payloads and signed zeros included, so the operand order of
// every instruction matters: for VADDPS b, a, r (Go order) Intel's first
// source is a, and a NaN first source is the one returned, as ADDSS does
// in the Go loop's a + b.

// elementwiseOp is one kernel: its name, the Go names of its inputs and
// the instructions mapping one vector of each input to the result.
type elementwiseOp struct {
	name string
	doc  string
	ins  []string
	body func(in []reg.VecVirtual) reg.VecVirtual
}

func binaryOp(name, doc string, f func(...Op)) elementwiseOp {
	return elementwiseOp{name, doc, []string{"a", "b"}, func(in []reg.VecVirtual) reg.VecVirtual {
		r := YMM()
		f(in[1], in[0], r) // Intel: r = a op b, a the first source
		return r
	}}
}

var elementwiseOps = []elementwiseOp{
	binaryOp("addF32AVX", "dst[i] = a[i] + b[i]", VADDPS),
	binaryOp("subF32AVX", "dst[i] = a[i] - b[i]", VSUBPS),
	binaryOp("mulF32AVX", "dst[i] = a[i] * b[i]", VMULPS),
	binaryOp("divF32AVX", "dst[i] = a[i] / b[i]", VDIVPS),
	{"maximumF32AVX", "dst[i] = NaNMax(a[i], b[i])", []string{"a", "b"}, func(in []reg.VecVirtual) reg.VecVirtual {
		return nanExtreme(VMAXPS, in[0], in[1])
	}},
	{"minimumF32AVX", "dst[i] = NaNMin(a[i], b[i])", []string{"a", "b"}, func(in []reg.VecVirtual) reg.VecVirtual {
		return nanExtreme(VMINPS, in[0], in[1])
	}},
	{"clampF32AVX", "dst[i] = NaNMin(NaNMax(x[i], lo[i]), hi[i])", []string{"lo", "x", "hi"}, func(in []reg.VecVirtual) reg.VecVirtual {
		return nanExtreme(VMINPS, nanExtreme(VMAXPS, in[1], in[0]), in[2])
	}},
	{"negF32AVX", "dst[i] = -a[i] (the sign bit flipped, NaN too)", []string{"a"}, func(in []reg.VecVirtual) reg.VecVirtual {
		r := YMM()
		VXORPS(consts["vm_sign"], in[0], r)
		return r
	}},
	{"absF32AVX", "dst[i] = |a[i]| (the sign bit cleared, NaN too)", []string{"a"}, func(in []reg.VecVirtual) reg.VecVirtual {
		r := YMM()
		VANDPS(consts["vm_abs"], in[0], r)
		return r
	}},
	{"sqrtF32AVX", "dst[i] = √a[i], correctly rounded", []string{"a"}, func(in []reg.VecVirtual) reg.VecVirtual {
		r := YMM()
		VSQRTPS(in[0], r)
		return r
	}},
	{"rsqrtF32AVX", "dst[i] = float32(1/√float64(a[i]))", []string{"a"}, rsqrtBody},
	// Masks: a comparison's all-one or zero lanes, as the tile programs
	// hold predicates.
	{"selectF32AVX", "dst[i] = a[i] if p[i]'s sign bit is set, else b[i]", []string{"p", "a", "b"}, func(in []reg.VecVirtual) reg.VecVirtual {
		r := YMM()
		VBLENDVPS(in[0], in[1], in[2], r) // Go order: mask, taken when set, taken when clear
		return r
	}},
	compareOp("cmpEQF32AVX", "==", 0x00), // EQ_OQ: false on NaN
	compareOp("cmpNEF32AVX", "!=", 0x04), // NEQ_UQ: true on NaN
	compareOp("cmpLTF32AVX", "<", 0x01),  // LT_OS
	compareOp("cmpLEF32AVX", "<=", 0x02), // LE_OS
	compareOp("cmpGTF32AVX", ">", 0x0E),  // GT_OS
	compareOp("cmpGEF32AVX", ">=", 0x0D), // GE_OS
	binaryOp("andF32AVX", "dst[i] = a[i] & b[i], bitwise", VANDPS),
	binaryOp("orF32AVX", "dst[i] = a[i] | b[i], bitwise", VORPS),
	binaryOp("xorF32AVX", "dst[i] = a[i] ^ b[i], bitwise", VXORPS),
}

// compareOp is a comparison into a mask: all ones where a[i] op b[i]
// holds (IEEE: ordered predicates are false on NaN), else zero.
func compareOp(name, op string, pred uint8) elementwiseOp {
	return elementwiseOp{name, fmt.Sprintf("dst[i] = all ones if a[i] %s b[i], else 0", op), []string{"a", "b"},
		func(in []reg.VecVirtual) reg.VecVirtual {
			r := YMM()
			VCMPPS(Imm(uint64(pred)), in[1], in[0], r) // Intel: a pred b, a the first source
			return r
		}}
}

// elementwiseKernels emits every kernel of elementwiseOps.
func elementwiseKernels() {
	// 8 all-ones lanes then 8 zero lanes: the 32 bytes ending 4r bytes
	// before the middle select the first r lanes.
	m := GLOBL("vm_tailmask", RODATA|NOPTR)
	for i := range 16 {
		bits := U32(0xffffffff)
		if i >= 8 {
			bits = 0
		}
		DATA(4*i, bits) // in order: the assembler rejects DATA out of order
	}
	consts["vm_tailmask"] = m
	one := GLOBL("vm_one64", RODATA|NOPTR)
	for i := range 4 {
		DATA(8*i, U64(math.Float64bits(1)))
	}
	consts["vm_one64"] = one
	for _, op := range elementwiseOps {
		elementwise(op)
	}
	extreme512("maximumF32AVX512", "NaNMax", VMAXPS)
	extreme512("minimumF32AVX512", "NaNMin", VMINPS)
	u8ToF32()
	bf16Kernels()
	f16Kernels()
	interleave3()
	interleave3AVX2()
}

// bf16Kernels emits the widening of bf16 to float32 (the bits shifted
// up: exact) and the rounding of float32 to bf16: nearest even by adding
// 0x7fff plus the bit above the cut, and a NaN as the quiet NaN 0x7fc0
// with its sign, as the Go loops (minifloat's BF16 encoding) do. Both
// take 8 values a step; the Go side does the last n%8. Their AVX-512
// twins (names ending AVX512) take 16 with the same arithmetic, so the
// same bits: VPMOVDW narrows the rounded dwords (each ≤ 0xffff, so
// truncating is VPACKUSDW's saturation), and the NaN lanes are picked
// by a compare into a mask.
func bf16Kernels() {
	vconst("vm_bf16_round", 0x7fff)
	vconst("vm_one_int", 1)
	vconst("vm_bf16_nan", 0x7fc0)
	bf16KernelsOf(false)
	bf16KernelsOf(true)
}

func bf16KernelsOf(wide bool) {
	lanes, vec, suffix := 8, YMM, ""
	and := func(m, x, dst Op) { VPAND(m, x, dst) }
	or := func(m, x, dst Op) { VPOR(m, x, dst) }
	if wide {
		lanes, vec, suffix = 16, ZMM, "AVX512"
		and = func(m, x, dst Op) { VPANDD(m, x, dst) }
		or = func(m, x, dst Op) { VPORD(m, x, dst) }
	}

	name := "bf16ToF32" + suffix
	TEXT(name, NOSPLIT, "func(dst *float32, src *uint16, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets dst[i] to the float32 of the bf16 bits src[i] for i < n rounded down to a multiple of %d.", name, lanes))
	convertLoop("bf16w"+suffix, lanes, func(dst, src, i reg.Register) {
		v := vec()
		VPMOVZXWD(Mem{Base: src, Index: i, Scale: 2}, v)
		VPSLLD(Imm(16), v, v)
		VMOVUPS(v, Mem{Base: dst, Index: i, Scale: 4})
	})

	name = "f32ToBF16" + suffix
	TEXT(name, NOSPLIT, "func(dst *uint16, src *float32, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets dst[i] to src[i] rounded to bf16 (nearest even; NaN as 0x7fc0 with its sign) for i < n rounded down to a multiple of %d.", name, lanes))
	convertLoop("bf16n"+suffix, lanes, func(dst, src, i reg.Register) {
		x, lsb, r, q := vec(), vec(), vec(), vec()
		VMOVUPS(Mem{Base: src, Index: i, Scale: 4}, x)
		VPSRLD(Imm(16), x, lsb)
		and(consts["vm_one_int"], lsb, lsb)
		VPADDD(consts["vm_bf16_round"], x, r)
		VPADDD(lsb, r, r)
		VPSRLD(Imm(16), r, r)
		and(consts["vm_sign"], x, q) // the NaN: x's sign, shifted down, with 0x7fc0
		VPSRLD(Imm(16), q, q)
		or(consts["vm_bf16_nan"], q, q)
		out := Mem{Base: dst, Index: i, Scale: 2}
		if wide {
			nan := K()
			VCMPPS(Imm(3), x, x, nan) // unordered: x is NaN
			VPBLENDMD(q, r, nan, r)
			VPMOVDW(r, out)
			return
		}
		nan, hi := vec(), vec()
		VCMPPS(Imm(3), x, x, nan) // unordered: x is NaN
		VBLENDVPS(nan, q, r, r)
		VEXTRACTI128(Imm(1), r, hi.AsX())
		VPACKUSDW(hi.AsX(), r.AsX(), r.AsX())
		VMOVDQU(r.AsX(), out)
	})
}

// convertLoop emits a conversion's body over dst and src (the function's
// parameters), lanes elements a step, for the first n rounded down to a
// multiple of lanes.
func convertLoop(label string, lanes int, body func(dst, src, i reg.Register)) {
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	i, end := GP64(), GP64()
	XORQ(i, i)
	MOVQ(n, end)
	ANDQ(I32(int32(-lanes)), end)
	Label(label + "_loop")
	CMPQ(i, end)
	JAE(LabelRef(label + "_done"))
	body(dst, src, i)
	ADDQ(Imm(uint64(lanes)), i)
	JMP(LabelRef(label + "_loop"))
	Label(label + "_done")
	VZEROUPPER()
	RET()
}

// f16Kernels emits the widening of IEEE half to float32 (VCVTPH2PS:
// exact, subnormals included) and the rounding of float32 to half
// (VCVTPS2PH, immediate 0: nearest even, overflow to infinity, half
// subnormals kept), 8 values a step and, for the AVX512 twins, 16. A NaN
// is first made the canonical quiet NaN with its sign (f32 0x7fc00000,
// half 0x7e00), as minifloat's F16 encoding makes it; the hardware would
// keep its payload. Widening keeps a NaN's payload (quieted), as
// minifloat's decoding does. Both need F16C; the Go side checks it and
// does the last n%8.
func f16Kernels() {
	vconst("vm_f16_qnan", 0x7fc00000)
	for _, wide := range []bool{false, true} {
		lanes, vec, suffix := 8, YMM, ""
		if wide {
			lanes, vec, suffix = 16, ZMM, "AVX512"
		}
		name := "f16ToF32" + suffix
		TEXT(name, NOSPLIT, "func(dst *float32, src *uint16, n int)")
		Pragma("noescape")
		Doc(fmt.Sprintf("%s sets dst[i] to the float32 of the half bits src[i] for i < n rounded down to a multiple of %d.", name, lanes))
		convertLoop("f16w"+suffix, lanes, func(dst, src, i reg.Register) {
			v := vec()
			VCVTPH2PS(Mem{Base: src, Index: i, Scale: 2}, v)
			VMOVUPS(v, Mem{Base: dst, Index: i, Scale: 4})
		})
		name = "f32ToF16" + suffix
		TEXT(name, NOSPLIT, "func(dst *uint16, src *float32, n int)")
		Pragma("noescape")
		Doc(fmt.Sprintf("%s sets dst[i] to src[i] rounded to half (nearest even; NaN as 0x7e00 with its sign) for i < n rounded down to a multiple of %d.", name, lanes))
		convertLoop("f16n"+suffix, lanes, func(dst, src, i reg.Register) {
			x, q := vec(), vec()
			VMOVUPS(Mem{Base: src, Index: i, Scale: 4}, x)
			out := Mem{Base: dst, Index: i, Scale: 2}
			if wide {
				nan := K()
				VPANDD(consts["vm_sign"], x, q)
				VPORD(consts["vm_f16_qnan"], q, q)
				VCMPPS(Imm(3), x, x, nan) // unordered: x is NaN
				VPBLENDMD(q, x, nan, x)
				VCVTPS2PH(Imm(0), x, out)
				return
			}
			nan := vec()
			VPAND(consts["vm_sign"], x, q)
			VPOR(consts["vm_f16_qnan"], q, q)
			VCMPPS(Imm(3), x, x, nan)
			VBLENDVPS(nan, q, x, x)
			VCVTPS2PH(Imm(0), x, out)
		})
	}
}

// u8ToF32 emits the widening of bytes to float32: 32 bytes per iteration
// (zero-extend 8 bytes to 8 dwords, convert), then 8 at a time. The Go
// side converts the last n%8.
func u8ToF32() {
	TEXT("u8ToF32", NOSPLIT, "func(dst *float32, src *uint8, n int)")
	Pragma("noescape")
	Doc("u8ToF32 sets dst[i] = float32(src[i]) for i < n rounded down to a multiple of 8.")
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	i, end := GP64(), GP64()
	XORQ(i, i)
	conv := func(disp int) {
		v := YMM()
		VPMOVZXBD(Mem{Base: src, Index: i, Scale: 1, Disp: disp}, v)
		VCVTDQ2PS(v, v)
		VMOVUPS(v, Mem{Base: dst, Index: i, Scale: 4, Disp: 4 * disp})
	}
	MOVQ(n, end)
	ANDQ(I32(-32), end)
	Label("u8_loop4")
	CMPQ(i, end)
	JAE(LabelRef("u8_loop1"))
	for v := range 4 {
		conv(8 * v)
	}
	ADDQ(Imm(32), i)
	JMP(LabelRef("u8_loop4"))
	Label("u8_loop1")
	MOVQ(n, end)
	ANDQ(I32(-8), end)
	Label("u8_loop1next")
	CMPQ(i, end)
	JAE(LabelRef("u8_done"))
	conv(0)
	ADDQ(Imm(8), i)
	JMP(LabelRef("u8_loop1next"))
	Label("u8_done")
	VZEROUPPER()
	RET()
}

// interleave3AVX2 emits interleave3's AVX2 twin: 8 pixels a step, each
// of the three output vectors the three planes permuted by one table
// (VPERMPS: lane l of output k is element j = 8k+l of the triples, pixel
// j/3 of plane j%3) and blended by plane. The Go side does the last n%8.
func interleave3AVX2() {
	var tables [3]Mem
	var blends [3][2]uint8 // output k: the lanes of planes 1 and 2
	for k := range 3 {
		tables[k] = GLOBL(fmt.Sprintf("vm_rgb8_%d", k), RODATA|NOPTR)
		for l := range 8 {
			j := 8*k + l
			DATA(4*l, U32(j/3))
			if p := j % 3; p > 0 {
				blends[k][p-1] |= 1 << l
			}
		}
	}
	TEXT("interleave3AVX2", NOSPLIT, "func(dst, s0, s1, s2 *float32, n int)")
	Pragma("noescape")
	Doc("interleave3AVX2 sets dst[3i+p] = sp[i] for i < n rounded down to a multiple of 8.")
	dst := Load(Param("dst"), GP64())
	src := [3]reg.Register{Load(Param("s0"), GP64()), Load(Param("s1"), GP64()), Load(Param("s2"), GP64())}
	n := Load(Param("n"), GP64())
	var idx [3]reg.VecVirtual
	for k := range 3 {
		idx[k] = YMM()
		VMOVDQU(tables[k], idx[k])
	}
	i, j, end := GP64(), GP64(), GP64() // i pixels, j = 3i elements
	XORQ(i, i)
	XORQ(j, j)
	MOVQ(n, end)
	ANDQ(I32(-8), end)
	Label("rgb8_loop")
	CMPQ(i, end)
	JAE(LabelRef("rgb8_done"))
	var p [3]reg.VecVirtual
	for c := range 3 {
		p[c] = YMM()
		VMOVUPS(Mem{Base: src[c], Index: i, Scale: 4}, p[c])
	}
	for k := range 3 {
		o, t := YMM(), YMM()
		VPERMPS(p[0], idx[k], o) // o[l] = p0[idx[l]]
		VPERMPS(p[1], idx[k], t)
		VBLENDPS(U8(blends[k][0]), t, o, o)
		VPERMPS(p[2], idx[k], t)
		VBLENDPS(U8(blends[k][1]), t, o, o)
		VMOVUPS(o, Mem{Base: dst, Index: j, Scale: 4, Disp: 32 * k})
	}
	ADDQ(Imm(8), i)
	ADDQ(Imm(24), j)
	JMP(LabelRef("rgb8_loop"))
	Label("rgb8_done")
	VZEROUPPER()
	RET()
}

// interleave3 emits the AVX-512 interleaving of three planes into
// triples (an RGB image made channels-last): 16 pixels a step, each of
// the three output vectors two VPERMT2PS, the first picking its lanes of
// the first two planes, the second putting the third plane's in. The Go
// side does the last n%16 pixels.
func interleave3() {
	// Output vector k's lane l is element j = 16k+l of the triples:
	// plane j%3's pixel j/3. Table a indexes the first two planes (0-15,
	// 16-31), table b this vector so far (0-15) and the third plane.
	var tables [3][2]Mem
	for k := range 3 {
		for t := range 2 {
			tables[k][t] = GLOBL(fmt.Sprintf("vm_rgb%d%c", k, 'a'+t), RODATA|NOPTR)
			for l := range 16 {
				j := 16*k + l
				plane, x := j%3, j/3
				v := l // table b keeps the lane
				switch {
				case t == 0 && plane == 0:
					v = x
				case t == 0 && plane == 1:
					v = 16 + x
				case t == 0:
					v = 0 // filled by table b
				case plane == 2:
					v = 16 + x
				}
				DATA(4*l, U32(v))
			}
		}
	}
	TEXT("interleave3AVX512", NOSPLIT, "func(dst, s0, s1, s2 *float32, n int)")
	Pragma("noescape")
	Doc("interleave3AVX512 sets dst[3i+p] = sp[i] for i < n rounded down to a multiple of 16.")
	dst := Load(Param("dst"), GP64())
	src := [3]reg.Register{Load(Param("s0"), GP64()), Load(Param("s1"), GP64()), Load(Param("s2"), GP64())}
	n := Load(Param("n"), GP64())
	var idx [3][2]reg.VecVirtual
	for k := range 3 {
		for t := range 2 {
			idx[k][t] = ZMM()
			VMOVDQU32(tables[k][t], idx[k][t])
		}
	}
	i, j, end := GP64(), GP64(), GP64() // i pixels, j = 3i elements
	XORQ(i, i)
	XORQ(j, j)
	MOVQ(n, end)
	ANDQ(I32(-16), end)
	Label("rgb_loop")
	CMPQ(i, end)
	JAE(LabelRef("rgb_done"))
	var p [3]reg.VecVirtual
	for c := range 3 {
		p[c] = ZMM()
		VMOVUPS(Mem{Base: src[c], Index: i, Scale: 4}, p[c])
	}
	for k := range 3 {
		o := ZMM()
		VMOVDQA32(idx[k][0], o)
		VPERMI2PS(p[1], p[0], o)      // o[l] = (p0 ‖ p1)[o[l]]
		VPERMT2PS(p[2], idx[k][1], o) // o[l] = (o ‖ p2)[b[l]]
		VMOVUPS(o, Mem{Base: dst, Index: j, Scale: 4, Disp: 64 * k})
	}
	ADDQ(Imm(16), i)
	ADDQ(Imm(48), j)
	JMP(LabelRef("rgb_loop"))
	Label("rgb_done")
	VZEROUPPER()
	RET()
}

// elementwise emits op's kernel: four vectors per iteration, then one
// vector at a time, then the last n%8 lanes with masked loads and
// stores, which touch nothing past n. Each vector is loaded before its
// result is stored at the same index, so dst may be any input.
func elementwise(op elementwiseOp) {
	params := append([]string{"dst"}, op.ins...)
	TEXT(op.name, NOSPLIT, fmt.Sprintf("func(%s *float32, n int)", strings.Join(params, ", ")))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets, for i < n, %s.", op.name, op.doc))
	dst := Load(Param("dst"), GP64())
	src := make([]reg.Register, len(op.ins))
	for j, name := range op.ins {
		src[j] = Load(Param(name), GP64())
	}
	n := Load(Param("n"), GP64())
	i, end := GP64(), GP64()
	XORQ(i, i)
	vector := func(disp int, load func(m Mem, r reg.VecVirtual), store func(r reg.VecVirtual, m Mem)) {
		in := make([]reg.VecVirtual, len(src))
		for j, p := range src {
			in[j] = YMM()
			load(Mem{Base: p, Index: i, Scale: 4, Disp: disp}, in[j])
		}
		store(op.body(in), Mem{Base: dst, Index: i, Scale: 4, Disp: disp})
	}
	load := func(m Mem, r reg.VecVirtual) { VMOVUPS(m, r) }
	store := func(r reg.VecVirtual, m Mem) { VMOVUPS(r, m) }

	MOVQ(n, end)
	ANDQ(I32(-32), end)
	Label(op.name + "_loop4")
	CMPQ(i, end)
	JAE(LabelRef(op.name + "_loop1"))
	for v := range 4 {
		vector(32*v, load, store)
	}
	ADDQ(Imm(32), i)
	JMP(LabelRef(op.name + "_loop4"))

	Label(op.name + "_loop1")
	MOVQ(n, end)
	ANDQ(I32(-8), end)
	Label(op.name + "_loop1next")
	CMPQ(i, end)
	JAE(LabelRef(op.name + "_tail"))
	vector(0, load, store)
	ADDQ(Imm(8), i)
	JMP(LabelRef(op.name + "_loop1next"))

	Label(op.name + "_tail")
	CMPQ(i, n)
	JAE(LabelRef(op.name + "_done"))
	// mask = the 32 bytes at vm_tailmask + 32 - 4·(n-i).
	mask, p := YMM(), GP64()
	LEAQ(consts["vm_tailmask"].Offset(32), p)
	SUBQ(i, n)
	SHLQ(Imm(2), n)
	SUBQ(n, p)
	VMOVUPS(Mem{Base: p}, mask)
	vector(0,
		func(m Mem, r reg.VecVirtual) { VMASKMOVPS(m, mask, r) },
		func(r reg.VecVirtual, m Mem) { VMASKMOVPS(r, mask, m) })
	Label(op.name + "_done")
	VZEROUPPER()
	RET()
}

// nanExtreme returns max (VMAXPS) or min (VMINPS) of a and b as NaNMax
// and NaNMin define them: a if a is NaN, else b if b is NaN or beyond a,
// else a (so max(-0, +0) is -0, the first). With b as Intel's first
// source MAXPS gives (b > a) ? b : a, and a whenever either is NaN;
// the blends then put a NaN b, and over it a NaN a, in place.
func nanExtreme(op func(...Op), a, b reg.VecVirtual) reg.VecVirtual {
	r, m := YMM(), YMM()
	op(a, b, r)
	VCMPPS(Imm(3), b, b, m) // unordered: b is NaN
	VBLENDVPS(m, b, r, r)
	VCMPPS(Imm(3), a, a, m)
	VBLENDVPS(m, a, r, r)
	return r
}

// rsqrtBody computes 1/√x in float64, as the Go loop does, four lanes
// at a time: in float32, √ then 1/ rounds twice and differs from the
// float64 result rounded once on about a quarter of all inputs.
func rsqrtBody(in []reg.VecVirtual) reg.VecVirtual {
	x := in[0]
	hi := XMM()
	VEXTRACTF128(Imm(1), x, hi)
	one := YMM()
	VMOVUPD(consts["vm_one64"], one)
	r, rhi := YMM(), XMM()
	for _, h := range []struct {
		src reg.Register
		dst reg.Register
	}{{x.AsX(), r.AsX()}, {hi, rhi}} {
		d := YMM()
		VCVTPS2PD(h.src, d)
		VSQRTPD(d, d)
		VDIVPD(d, one, d) // Intel: 1/d, 1 the first source as in the Go loop
		VCVTPD2PSY(d, h.dst)
	}
	VINSERTF128(Imm(1), rhi, r, r)
	return r
}

// extreme512 emits maximumF32AVX's (or minimum's) 16-lane twin: the same
// bits, a NaN operand (a's first) blended in under a mask register, the
// last partial vector under a mask of its lanes. Max pooling folds its
// window rows with it (ResNet's stem pool: 32 channels a pixel).
func extreme512(name, f string, op func(...Op)) {
	TEXT(name, NOSPLIT, "func(dst, a, b *float32, n int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets, for i < n, dst[i] = %s(a[i], b[i]) (AVX-512).", name, f))
	dst, a, b := Load(Param("dst"), GP64()), Load(Param("a"), GP64()), Load(Param("b"), GP64())
	n := GP64()
	Load(Param("n"), n)
	i, end := GP64(), GP64()
	XORQ(i, i)
	vector := func(disp int, k reg.Register) {
		x, y, r := ZMM(), ZMM(), ZMM()
		ma, mb := K(), K()
		at := func(p reg.Register) Mem { return Mem{Base: p, Index: i, Scale: 4, Disp: disp} }
		if k == nil {
			VMOVUPS(at(a), x)
			VMOVUPS(at(b), y)
		} else {
			VMOVUPS_Z(at(a), k, x)
			VMOVUPS_Z(at(b), k, y)
		}
		op(x, y, r)              // as nanExtreme: a tie of zeros gives a
		VCMPPS(Imm(3), y, y, mb) // unordered: b is NaN
		VMOVAPS(y, mb, r)        // then b
		VCMPPS(Imm(3), x, x, ma) // a is NaN
		VMOVAPS(x, ma, r)        // then a, first
		if k == nil {
			VMOVUPS(r, at(dst))
		} else {
			VMOVUPS(r, k, at(dst))
		}
	}
	MOVQ(n, end)
	ANDQ(I32(-64), end)
	Label(name + "_loop4")
	CMPQ(i, end)
	JAE(LabelRef(name + "_loop1"))
	for v := range 4 {
		vector(64*v, nil)
	}
	ADDQ(Imm(64), i)
	JMP(LabelRef(name + "_loop4"))
	Label(name + "_loop1")
	MOVQ(n, end)
	ANDQ(I32(-16), end)
	Label(name + "_loop1next")
	CMPQ(i, end)
	JAE(LabelRef(name + "_tail"))
	vector(0, nil)
	ADDQ(Imm(16), i)
	JMP(LabelRef(name + "_loop1next"))
	Label(name + "_tail")
	CMPQ(i, n)
	JAE(LabelRef(name + "_done"))
	// The tail's lanes: the low n-i bits.
	SUBQ(i, n)
	bits, one := GP32(), GP32()
	MOVL(U32(1), one)
	SHLXL(n.As32(), one, bits)
	DECL(bits)
	tail := K()
	KMOVW(bits, tail)
	vector(0, tail)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}
