// Command vecmath generates the AVX2+FMA vector math and reduction
// kernels of package kernels (vecmath_amd64.s): exp, tanh and logistic
// over whole 8-lane vectors, and the block sum, max, min and the
// element-wise accumulate steps the reductions are built from, and the
// elementwise arithmetic of elementwise.go (add, sub, mul, div, NaN-
// propagating max, min and clamp, neg, abs, sqrt, rsqrt) over any n.
//
// The exp, tanh and logistic kernels take n, a multiple of 8; the Go
// side runs the last partial vector through the same kernel via a stack
// buffer, so every element gets the same arithmetic.
package main

import (
	"fmt"
	"math"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
	"github.com/mmcloughlin/avo/x86"
)

// The constants below are shared with the pure-Go twin in vecmath.go;
// keep them in step.
const (
	log2e = 1.44269504088896340736
	// ln2Hi+ln2Lo = ln 2; ln2Hi is ln 2 rounded to float32, so with FMA
	// x - n·ln2Hi is exact for every |n| ≤ 150 we produce, and ln2Lo
	// carries the rest.
	ln2Hi = float32(0.693145751953125 + 1.4286068203094173e-06)
	// round is 1.5·2^23: adding it to |t| < 2^22 rounds t to an integer
	// that sits in the low mantissa bits.
	round = 12582912.0
	// expHi and expLo clamp the argument of exp: e^88.76 > MaxFloat32 so
	// it still overflows to +Inf, and e^-104 < 2^-150 still rounds to 0;
	// in between the two-step scaling below is exact or rounds once.
	expHi = 88.76
	expLo = -104.0
	// tanhBig is past the point where tanh rounds to ±1.
	tanhBig = 10.0
	// fastLo is the least n = round(x·log2e) of exp's shortcut, which
	// takes n in [fastLo, fastLo+127]: e^r·2^n (e^r in [0.70, 1.42]) is then
	// a normal float (n ≥ -125 and ≤ 127), so 2^n can go straight into
	// its exponent field with an integer add, exact like the two
	// multiplies it replaces. The window is 128 wide so that one test of
	// the high bits checks it; it covers x in [-44.0, 43.6] (logistic's
	// |x| ≤ 44), where nearly all of ML's arguments fall. A group with a
	// lane outside (an overflow, a -Inf mask, a NaN) takes the full body.
	fastLo = -64
)

// expPoly approximates e^r on [-ln2/2, ln2/2] (degree 6, fitted at
// Chebyshev nodes; c0..c2 came out as exactly 1, 1, 1/2).
var expPoly = []float32{1, 1, 0.5, 0.166664049, 0.0416663401, 0.00837596785, 0.00139421597}

// expm1Poly is p with e^r - 1 ≈ r + r²·p(r) on |r| ≤ ln2/2: Taylor's
// 1/k! for k = 2..8, whose truncation error (under r^9/9!, 2e-10
// relative) is far below a ULP. expPoly, fitted for e^r, is not
// accurate relative to e^r - 1 near 0, which tanh needs.
var expm1Poly = []float32{1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320}

var consts = map[string]Mem{}

// wide says whether the unary kernel being generated is the AVX-512 one,
// on 16-lane ZMM vectors (AVX512F and DQ, for the float logic ops and
// VPMOVD2M); otherwise it is the AVX2 one on YMM vectors. The two do
// the same arithmetic lane by lane, so they give the same bits.
var wide bool

// V returns a new vector register of the current width.
func V() reg.VecVirtual {
	if wide {
		return ZMM()
	}
	return YMM()
}

// vecBytes is the current vector's size in bytes.
func vecBytes() int {
	if wide {
		return 64
	}
	return 32
}

// vconst declares a 64-byte constant of sixteen copies of bits, so that
// it can be a YMM or ZMM instruction's memory operand.
func vconst(name string, bits uint32) {
	m := GLOBL(name, RODATA|NOPTR)
	for i := range 16 {
		DATA(4*i, U32(bits))
	}
	consts[name] = m
}

func f32(name string, v float32) { vconst(name, math.Float32bits(v)) }

// hoisted holds the constants the current function keeps in registers.
var hoisted = map[string]reg.VecVirtual{}

// k is constant name as an operand: its register if hoisted, else memory.
func k(name string) Op {
	if r, ok := hoisted[name]; ok {
		return r
	}
	return consts[name]
}

// hoist loads constants into registers for the whole function: every
// constant left in memory costs a load per use, and with 15 or so per
// vector the load ports, not the FMA units, would set the pace.
func hoist(names []string) {
	clear(hoisted)
	for _, name := range names {
		r := V()
		VMOVUPS(consts[name], r)
		hoisted[name] = r
	}
}

func declareConsts() {
	f32("vm_log2e", log2e)
	f32("vm_round", round)
	f32("vm_ln2hi", ln2Hi)
	f32("vm_ln2lo", float32(math.Ln2-float64(ln2Hi)))
	f32("vm_exphi", expHi)
	f32("vm_explo", expLo)
	f32("vm_one", 1)
	f32("vm_two", 2)
	f32("vm_mtwo", -2)
	f32("vm_tanhbig", tanhBig)
	// t's bits minus vm_roundfast are n - fastLo, in [0, 127] exactly
	// when n is in the shortcut's window (t NaN or ±Inf: far outside).
	vconst("vm_roundfast", math.Float32bits(round)-uint32(-fastLo))
	vconst("vm_fastmask", ^uint32(127))
	vconst("vm_abs", 0x7fffffff)
	vconst("vm_sign", 0x80000000)
	// t's bits minus these are n+254 and n+127 (the exponent biases of
	// two and one powers of two folded into the subtraction).
	vconst("vm_round254", math.Float32bits(round)-254)
	vconst("vm_round127", math.Float32bits(round)-127)
	for i, c := range expPoly {
		f32(fmt.Sprintf("vm_exp%d", i), c)
	}
	for i, c := range expm1Poly {
		f32(fmt.Sprintf("vm_expm1_%d", i), c)
	}
}

// The constants each kernel keeps in registers: as many as leave enough
// of the 16 YMM registers for two interleaved vectors' temporaries. (The
// allocator would otherwise hand out Y16 and up, which only AVX-512 can
// encode; TestVecMathAsmRegisters checks the output for them.)
var (
	expKeep      = []string{"vm_explo", "vm_exphi", "vm_log2e", "vm_round"}
	tanhKeep     = []string{}
	logisticKeep = []string{"vm_log2e"}
)

// The AVX-512 kernels' choices: 32 registers hold more constants.
var (
	expKeepWide      = []string{"vm_explo", "vm_exphi", "vm_log2e", "vm_round", "vm_ln2hi", "vm_ln2lo", "vm_one"}
	tanhKeepWide     = []string{"vm_abs", "vm_tanhbig", "vm_mtwo", "vm_log2e", "vm_round", "vm_ln2hi", "vm_one", "vm_two", "vm_sign"}
	logisticKeepWide = []string{"vm_log2e", "vm_round", "vm_ln2hi", "vm_ln2lo", "vm_one", "vm_sign", "vm_explo"}
)

const (
	expGroupWide      = 2
	tanhGroupWide     = 2
	logisticGroupWide = 2
)

// How many vectors each kernel interleaves: 2 (4 do not fit in the
// registers).
const (
	expGroup      = 2
	tanhGroup     = 2
	logisticGroup = 2
)

func main() {
	ConstraintExpr("amd64,!purego")
	declareConsts()
	for _, w := range []bool{false, true} {
		wide = w
		unaryKernels()
	}
	wide = false
	sumKernel()
	extremeKernel("maxAVX", "maxAVX returns the largest of x[:n] (n a positive multiple of 8), NaN if any is NaN.", true)
	extremeKernel("minAVX", "minAVX returns the smallest of x[:n] (n a positive multiple of 8), NaN if any is NaN.", false)
	accumulate("addToAVX", "addToAVX sets dst[i] += x[i] for i < n (n a multiple of 8).", func(d, x reg.VecVirtual) { VADDPS(x, d, d) })
	accumulate("maxToAVX", "maxToAVX sets dst[i] = max(dst[i], x[i]) for i < n (n a multiple of 8), NaN if either is NaN.", maxNaN)
	elementwiseKernels()
	windowKernels()
	transposeKernels()
	copyRunsKernel()
	for _, w := range []int{1, 2, 4} {
		columnSum(w)
	}
	Generate()
}

// prefetchAhead is how far ahead of the loop (bytes) the streaming
// kernels ask for their input, a line per 64 bytes read: with arrays far
// larger than the caches the loads then rarely wait, and the math
// overlaps the memory traffic better than with the hardware prefetcher
// alone. tanh over 16M f32 on two threads, AVX-512: 37–39 GB/s without,
// 41–43 with 512 to 4096 bytes ahead (a plain copy: 50–52); AVX2: 28 →
// 31 GB/s; logistic 38–39 → 43–44 (AVX2: unchanged).
const prefetchAhead = 1024

// unaryKernels emits exp, tanh and logistic at the current width, with
// ordinary and non-temporal stores.
func unaryKernels() {
	for _, nt := range []bool{false, true} {
		ek, tk, lk, eg, tg, lg := expKeep, tanhKeep, logisticKeep, expGroup, tanhGroup, logisticGroup
		if wide {
			ek, tk, lk, eg, tg, lg = expKeepWide, tanhKeepWide, logisticKeepWide, expGroupWide, tanhGroupWide, logisticGroupWide
		}
		eb, ef, lb, lf := expBody, &fastPath{expFirst, expRest}, logisticBody, &fastPath{logisticFirst, logisticRest}
		if wide {
			eb, ef, lb, lf = expScaleBody, nil, logisticScaleBody, nil
		}
		unary("expAVX", "%s sets dst[i] = e^x[i] for i < n (n a multiple of %d).", eb, ef, ek, eg, nt)
		unary("tanhAVX", "%s sets dst[i] = tanh(x[i]) for i < n (n a multiple of %d).", tanhBody, nil, tk, tg, nt)
		unary("logisticAVX", "%s sets dst[i] = 1/(1+e^-x[i]) for i < n (n a multiple of %d).", lb, lf, lk, lg, nt)
	}
}

// unary emits a loop mapping body over n floats, four vectors per
// iteration in groups of group whose instructions are interleaved, then
// one vector at a time. The body functions build their instructions with
// rec so that unary can interleave them.
//
// With nt the stores are non-temporal (dst must be 32-byte aligned): for
// arrays far larger than the caches this skips reading dst's lines in
// before overwriting them, a third of the memory traffic, and does not
// evict useful data for output nobody will read soon.
func unary(name, doc string, body func(x reg.VecVirtual) reg.VecVirtual, fast *fastPath, keep []string, group int, nt bool) {
	vb := vecBytes()
	lanes := vb / 4
	storeInst := func(x, m Op) *ir.Instruction { return must(x86.VMOVUPS(x, m)) }
	if wide {
		name = strings.Replace(name, "AVX", "AVX512", 1)
	}
	doc = fmt.Sprintf(doc, name, lanes)
	if nt {
		name += "NT"
		doc = strings.Replace(doc, name[:len(name)-2], name, 1)
		doc += fmt.Sprintf(" dst must be %d-byte aligned; the stores are non-temporal.", vb)
		storeInst = func(x, m Op) *ir.Instruction { return must(x86.VMOVNTPS(x, m)) }
	}
	dst, src, n := unaryText(name, doc)
	hoist(keep)
	defer clear(hoisted)
	// interleave computes the vectors at the given offsets with their
	// instructions interleaved, so each vector's long dependency chain
	// is dispatched spread out among the others' instead of all at once
	// (the chain is ~45 cycles; ops stuck waiting for it fill the
	// scheduler and starve the FMA units). xs are the vectors already
	// loaded (nil: load them).
	interleave := func(body func(x reg.VecVirtual) reg.VecVirtual, offs []int) {
		lists := make([][]*ir.Instruction, len(offs))
		for v, off := range offs {
			recording = &lists[v]
			x := V()
			rec(x86.VMOVUPS(Mem{Base: src, Disp: off}, x))
			y := body(x)
			recording = nil
			lists[v] = append(lists[v], storeInst(y, Mem{Base: dst, Disp: off}))
		}
		emitInterleaved(lists)
	}
	// one computes the vectors at offs. With a fast path, a group whose
	// lanes are all inside its range takes it, and any other group the
	// full body, out of line (slow collects those blocks, emitted after
	// the loops).
	var slow []func()
	one := func(offs ...int) {
		if fast == nil {
			interleave(body, offs)
			return
		}
		// First every vector's reduction and its window test, then one
		// branch for the group, then the rest.
		firsts := make([][]*ir.Instruction, len(offs))
		rests := make([][]*ir.Instruction, len(offs))
		var us []reg.VecVirtual
		for v, off := range offs {
			recording = &firsts[v]
			x := V()
			rec(x86.VMOVUPS(Mem{Base: src, Disp: off}, x))
			st, u := fast.first(x)
			us = append(us, u)
			recording = &rests[v]
			y := fast.rest(x, st)
			recording = nil
			rests[v] = append(rests[v], storeInst(y, Mem{Base: dst, Disp: off}))
		}
		emitInterleaved(firsts)
		label := fmt.Sprintf("%s_slow%d", name, len(slow))
		if wide { // VPTEST has no ZMM form: test into a mask
			out := K()
			VPTESTMD(k("vm_fastmask"), us[0], out)
			for _, u := range us[1:] {
				m := K()
				VPTESTMD(k("vm_fastmask"), u, m)
				KORW(m, out, out)
			}
			KORTESTW(out, out)
		} else {
			for _, u := range us[1:] {
				VPOR(u, us[0], us[0])
			}
			VPTEST(k("vm_fastmask"), us[0])
		}
		JNZ(LabelRef(label))
		emitInterleaved(rests)
		back := label + "_back"
		Label(back)
		slow = append(slow, func() {
			Label(label)
			interleave(body, offs)
			JMP(LabelRef(back))
		})
	}
	alignLoop()
	Label(name + "_loop4")
	CMPQ(n, Imm(uint64(4*lanes)))
	JL(LabelRef(name + "_loop1"))
	for g := 0; g < 4; g += group {
		offs := make([]int, group)
		for i := range offs {
			offs[i] = vb * (g + i)
		}
		one(offs...)
	}
	if nt { // arrays larger than the caches: see prefetchAhead
		for off := 0; off < 4*vb; off += 64 {
			PREFETCHT0(Mem{Base: src, Disp: prefetchAhead + off})
		}
	}
	ADDQ(U32(4*vb), src)
	ADDQ(U32(4*vb), dst)
	SUBQ(Imm(uint64(4*lanes)), n)
	JMP(LabelRef(name + "_loop4"))
	alignLoop()
	Label(name + "_loop1")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	one(0)
	ADDQ(Imm(uint64(vb)), src)
	ADDQ(Imm(uint64(vb)), dst)
	SUBQ(Imm(uint64(lanes)), n)
	JMP(LabelRef(name + "_loop1"))
	Label(name + "_done")
	if nt {
		SFENCE() // order the weakly-ordered stores before anything later
	}
	VZEROUPPER()
	RET()
	for _, f := range slow {
		f()
	}
}

// emitInterleaved emits the lists' instructions round-robin.
func emitInterleaved(lists [][]*ir.Instruction) {
	for i := 0; ; i++ {
		done := true
		for _, l := range lists {
			if i < len(l) {
				Instruction(l[i])
				done = false
			}
		}
		if done {
			break
		}
	}
}

// fastPath is a kernel's shortcut for vectors whose lanes all lie in a
// range where it gives the full body's bits with fewer instructions.
// first starts the shortcut on x and returns its state and a vector
// whose lanes have bits outside vm_fastmask's complement clear only if
// they are in the range (NaN is not); rest finishes it.
type fastPath struct {
	first func(x reg.VecVirtual) (st []reg.VecVirtual, u reg.VecVirtual)
	rest  func(x reg.VecVirtual, st []reg.VecVirtual) reg.VecVirtual
}

// recording is where rec puts instructions (nil: emit them at once).
var recording *[]*ir.Instruction

// rec emits or records an instruction built by package x86.
func rec(i *ir.Instruction, err error) {
	if recording == nil {
		Instruction(must(i, err))
		return
	}
	*recording = append(*recording, must(i, err))
}

func must(i *ir.Instruction, err error) *ir.Instruction {
	if err != nil {
		panic(err)
	}
	return i
}

// clamp limits x to [lo, hi] and keeps NaN: MINPS/MAXPS return their
// second source when either is NaN, and x is that source here.
func clamp(x reg.VecVirtual, lo, hi Op) reg.VecVirtual {
	inReg := func(c Op) Op {
		if _, ok := c.(Mem); !ok {
			return c
		}
		r := V()
		rec(x86.VMOVUPS(c, r))
		return r
	}
	y := V()
	rec(x86.VMAXPS(x, inReg(lo), y))
	rec(x86.VMINPS(y, inReg(hi), y))
	return y
}

// expReduce overwrites x (finite and in [expLo, expHi], or NaN) with r
// and returns t = round + n and nf = n as a float, where x = n·ln2 + r,
// n = round(x·log2e) and |r| ≤ ln2/2: n sits in t's low mantissa bits. Without lo, r is
// x - n·ln2Hi, off by n·ln2Lo (|n|·2e-9), which is enough where 2^n
// scales the error down as fast as n grows (tanh's e^r - 1).
func expReduce(x reg.VecVirtual, lo bool) (t, nf reg.VecVirtual) {
	t = V()
	rec(x86.VMOVUPS(k("vm_log2e"), t))
	rec(x86.VFMADD213PS(k("vm_round"), x, t)) // t = x·log2e + round
	nf = V()
	rec(x86.VSUBPS(k("vm_round"), t, nf)) // n as a float
	rec(x86.VFNMADD231PS(k("vm_ln2hi"), nf, x))
	if lo {
		rec(x86.VFNMADD231PS(k("vm_ln2lo"), nf, x))
	}
	return t, nf
}

// expCore returns e^x for x already in [expLo, expHi] (or NaN); it
// overwrites x. e^r comes from the polynomial, and 2^n is applied as
// 2^n1·2^n2 with n1 = n>>1 and n2 = n-n1, both normal exponents, so
// results near the overflow threshold and in the subnormal range need no
// special case.
func expCore(x reg.VecVirtual) reg.VecVirtual {
	t, _ := expReduce(x, true)
	p := expPolyEstrin(x)
	n1, n2 := V(), V()
	rec(x86.VPSUBD(k("vm_round254"), t, n2)) // n+254
	rec(x86.VPSRAD(Imm(1), n2, n1))          // n1+127
	rec(x86.VPSUBD(n1, n2, n2))              // n2+127
	rec(x86.VPSLLD(Imm(23), n1, n1))
	rec(x86.VPSLLD(Imm(23), n2, n2))
	// Multiplies, not adds to p's exponent field: they round once into
	// the subnormals, overflow to +Inf, and keep NaN a NaN.
	rec(x86.VMULPS(n1, p, p))
	rec(x86.VMULPS(n2, p, p))
	return p
}

// expPolyEstrin evaluates expPoly at r as
// 1 + ((r + r²·(c2 + c3·r)) + r⁴·((c4 + c5·r) + r²·c6)),
// a shorter dependency chain than Horner's (c0 = c1 = 1), with the 1
// added last so that only one rounding happens at the result's scale.
func expPolyEstrin(r reg.VecVirtual) reg.VecVirtual {
	r2, r4, a, b := V(), V(), V(), V()
	rec(x86.VMULPS(r, r, r2))
	rec(x86.VMULPS(r2, r2, r4))
	rec(x86.VMOVUPS(k("vm_exp3"), a))
	rec(x86.VFMADD213PS(k("vm_exp2"), r, a))
	rec(x86.VMOVUPS(k("vm_exp5"), b))
	rec(x86.VFMADD213PS(k("vm_exp4"), r, b))
	rec(x86.VFMADD231PS(k("vm_exp6"), r2, b))
	rec(x86.VFMADD213PS(r, r2, a))
	rec(x86.VFMADD213PS(a, r4, b))
	rec(x86.VADDPS(k("vm_one"), b, b))
	return b
}

// expm1PolyEstrin evaluates e^r - 1 with expm1Poly as
// r + r²·(((p0 + p1·r) + r²·(p2 + p3·r)) + r⁴·((p4 + p5·r) + r²·p6)).
func expm1PolyEstrin(r reg.VecVirtual) reg.VecVirtual {
	r2, r4, a, b, c := V(), V(), V(), V(), V()
	rec(x86.VMULPS(r, r, r2))
	rec(x86.VMULPS(r2, r2, r4))
	rec(x86.VMOVUPS(k("vm_expm1_1"), a))
	rec(x86.VFMADD213PS(k("vm_expm1_0"), r, a))
	rec(x86.VMOVUPS(k("vm_expm1_3"), b))
	rec(x86.VFMADD213PS(k("vm_expm1_2"), r, b))
	rec(x86.VMOVUPS(k("vm_expm1_5"), c))
	rec(x86.VFMADD213PS(k("vm_expm1_4"), r, c))
	rec(x86.VFMADD231PS(k("vm_expm1_6"), r2, c))
	rec(x86.VFMADD213PS(a, r2, b)) // b = r2·b + a
	rec(x86.VFMADD213PS(b, r4, c)) // c = r4·c + b
	rec(x86.VFMADD213PS(r, r2, c))
	return c
}

func expBody(x reg.VecVirtual) reg.VecVirtual {
	return expCore(clamp(x, k("vm_explo"), k("vm_exphi")))
}

// expFirst is the shortcut's range reduction: x becomes r, st holds t
// (round + n) and u is n - fastLo as an integer.
func expFirst(x reg.VecVirtual) ([]reg.VecVirtual, reg.VecVirtual) {
	t, _ := expReduce(x, true)
	u := V()
	rec(x86.VPSUBD(k("vm_roundfast"), t, u))
	return []reg.VecVirtual{t}, u
}

// expRest finishes the shortcut: e^r·2^n with n added into e^r's
// exponent field. t = round + n holds n in its low bits and round's are
// zero from bit 9 up, so t << 23 is n << 23.
func expRest(r reg.VecVirtual, st []reg.VecVirtual) reg.VecVirtual {
	t := st[0]
	p := expPolyEstrin(r)
	rec(x86.VPSLLD(Imm(23), t, t))
	rec(x86.VPADDD(t, p, p))
	return p
}

// expScale is e^x for x already in [expLo, expHi] (or NaN) with
// AVX-512's VSCALEFPS: p·2^n in one instruction that rounds once into
// the subnormals and overflows to +Inf by itself, the two multiplies'
// result with no window test for a shortcut. It overwrites x.
func expScale(x reg.VecVirtual) reg.VecVirtual {
	_, nf := expReduce(x, true)
	p := expPolyEstrin(x)
	rec(x86.VSCALEFPS(nf, p, p))
	return p
}

func expScaleBody(x reg.VecVirtual) reg.VecVirtual {
	return expScale(clamp(x, k("vm_explo"), k("vm_exphi")))
}

// logisticScaleBody is logisticBody with expScale.
func logisticScaleBody(x reg.VecVirtual) reg.VecVirtual { return logisticWith(x, expScale) }

// tanhBody computes N = 1 - e^-2|x| ∈ [0, 1) and returns N/(2-N) with
// x's sign: one formula for every x, no polynomial in x² for small |x|
// and no blend. With -2|x| = n·ln2 + r (the exp reduction), N is
// (1 - 2^n) - 2^n·(e^r - 1), one FMA of the e^r - 1 polynomial and the
// exact 1 - 2^n, so it keeps its relative accuracy near 0, where
// 1 - e^-2|x| would cancel. |x| is capped at tanhBig (n ≥ -29, 2^n
// normal). N/(2-N) ≥ 0 (+0 for ±0), so x's sign goes in with one XOR.
// NaN stays NaN: the MINPS returns it, its second source.
func tanhBody(x reg.VecVirtual) reg.VecVirtual {
	a := V()
	rec(x86.VANDPS(k("vm_abs"), x, a))
	y := V()
	rec(x86.VMOVUPS(k("vm_tanhbig"), y))
	rec(x86.VMINPS(a, y, y))
	rec(x86.VMULPS(k("vm_mtwo"), y, y))
	t, nf := expReduce(y, false)
	if wide { // 2^n as VSCALEFPS(1, n): one op for two
		rec(x86.VMOVUPS(k("vm_one"), t))
		rec(x86.VSCALEFPS(nf, t, t))
	}
	q := expm1PolyEstrin(y)
	if !wide {
		rec(x86.VPSUBD(k("vm_round127"), t, t)) // n+127
		rec(x86.VPSLLD(Imm(23), t, t))          // 2^n
	}
	oms := V()
	rec(x86.VMOVUPS(k("vm_one"), oms))
	rec(x86.VSUBPS(t, oms, oms))     // 1 - 2^n
	rec(x86.VFNMADD213PS(oms, q, t)) // N = (1 - 2^n) - 2^n·q
	den := V()
	rec(x86.VMOVUPS(k("vm_two"), den))
	rec(x86.VSUBPS(t, den, den))
	rec(x86.VDIVPS(den, t, t)) // N/(2-N)
	rec(x86.VANDPS(k("vm_sign"), x, a))
	rec(x86.VXORPS(a, t, t))
	return t
}

// logisticBody computes E = e^-|x| ≤ 1 (never overflows) and returns
// q = 1/(1+E) for x ≥ 0 and q = E/(1+E) for x < 0, one division either
// way.
func logisticBody(x reg.VecVirtual) reg.VecVirtual { return logisticWith(x, expCore) }

// logisticWith is logisticBody with e^-|x| computed by exp.
func logisticWith(x reg.VecVirtual, exp func(reg.VecVirtual) reg.VecVirtual) reg.VecVirtual {
	a := V()
	rec(x86.VORPS(k("vm_sign"), x, a)) // -|x|
	// -|x| ≤ 0 needs only the lower clamp; MAXPS returns a, its second
	// source, if a is NaN.
	lo := V()
	rec(x86.VMOVUPS(k("vm_explo"), lo))
	rec(x86.VMAXPS(a, lo, a))
	return logisticFinish(x, exp(a))
}

// logisticFinish returns logistic(x) given e = e^-|x|.
func logisticFinish(x, e reg.VecVirtual) reg.VecVirtual {
	den, num := V(), V()
	rec(x86.VADDPS(k("vm_one"), e, den))
	rec(x86.VMOVUPS(k("vm_one"), num))
	neg := blendBySign(x, e, num) // by x's sign bit
	rec(x86.VDIVPS(den, num, num))
	// For x < 0, E/(1+E) = E - E·q: the rounding of 1+E (up to half a
	// ULP of q) then enters only through E·q, which is E times the
	// result, so small E (very negative x) get it scaled down.
	fix := V()
	rec(x86.VMOVAPS(e, fix))
	rec(x86.VFNMADD231PS(num, e, fix)) // E - E·q
	blendBySignAgain(neg, x, fix, num)
	return num
}

// blendBySign sets dst's lanes to src's where x's sign bit is set, and
// returns what blendBySignAgain needs to do that again for the same x:
// AVX2 blends by the sign bit itself; AVX-512 has no such blend and
// takes the sign bits into a mask first.
func blendBySign(x, src, dst reg.VecVirtual) reg.Register {
	if !wide {
		rec(x86.VBLENDVPS(x, src, dst, dst))
		return nil
	}
	m := K()
	rec(x86.VPMOVD2M(x, m))
	rec(x86.VBLENDMPS(src, dst, m, dst))
	return m
}

func blendBySignAgain(m reg.Register, x, src, dst reg.VecVirtual) {
	if !wide {
		rec(x86.VBLENDVPS(x, src, dst, dst))
		return
	}
	rec(x86.VBLENDMPS(src, dst, m, dst))
}

// logisticFirst starts logistic's shortcut: e^-|x| by expFirst.
func logisticFirst(x reg.VecVirtual) ([]reg.VecVirtual, reg.VecVirtual) {
	a := V()
	rec(x86.VORPS(k("vm_sign"), x, a)) // -|x|
	st, u := expFirst(a)
	return append(st, a), u
}

// logisticRest finishes it as logisticBody does.
func logisticRest(x reg.VecVirtual, st []reg.VecVirtual) reg.VecVirtual {
	return logisticFinish(x, expRest(st[1], st[:1]))
}

// hsum adds the eight lanes of v into the low lane of the result.
func hsum(v reg.VecVirtual) reg.Register {
	return foldLanes(v, func(hi, lo reg.Register, last bool) {
		if last {
			VADDSS(hi, lo, lo)
		} else {
			VADDPS(hi, lo, lo)
		}
	})
}

// foldLanes folds the eight lanes of v into the low lane of the result,
// halving them three times, fold(hi, lo, last) combining the high half
// into the low (last: only the low lane matters).
func foldLanes(v reg.VecVirtual, fold func(hi, lo reg.Register, last bool)) reg.Register {
	lo, hi := v.AsX(), XMM()
	VEXTRACTF128(Imm(1), v, hi)
	fold(hi, lo, false)
	VMOVHLPS(lo, hi, hi)
	fold(hi, lo, false)
	VMOVSHDUP(lo, hi)
	fold(hi, lo, true)
	return lo
}

// sumKernel sums n floats (a multiple of 8) with four vector
// accumulators; the caller keeps n small (a block) so each lane adds only
// a few hundred terms.
func sumKernel() {
	TEXT("sumAVX", NOSPLIT, "func(x *float32, n int) float32")
	Pragma("noescape")
	Doc("sumAVX returns the sum of x[:n] (n a multiple of 8).")
	src := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	acc := make([]reg.VecVirtual, 4)
	for i := range acc {
		acc[i] = YMM()
		VXORPS(acc[i], acc[i], acc[i])
	}
	alignLoop()
	Label("sum_loop4")
	CMPQ(n, Imm(32))
	JL(LabelRef("sum_loop1"))
	for i := range acc {
		VADDPS(Mem{Base: src, Disp: 32 * i}, acc[i], acc[i])
	}
	ADDQ(U32(128), src)
	SUBQ(Imm(32), n)
	JMP(LabelRef("sum_loop4"))
	alignLoop()
	Label("sum_loop1")
	TESTQ(n, n)
	JZ(LabelRef("sum_done"))
	VADDPS(Mem{Base: src}, acc[0], acc[0])
	ADDQ(Imm(32), src)
	SUBQ(Imm(8), n)
	JMP(LabelRef("sum_loop1"))
	Label("sum_done")
	VADDPS(acc[1], acc[0], acc[0])
	VADDPS(acc[3], acc[2], acc[2])
	VADDPS(acc[2], acc[0], acc[0])
	s := hsum(acc[0])
	Store(s, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// extremeKernel returns the max (or min) of n floats, n ≥ 8 a multiple of
// 8. MAXPS drops a NaN in one of its operands, so NaNs are collected
// separately (x unordered with itself) and win at the end.
func extremeKernel(name, doc string, isMax bool) {
	TEXT(name, NOSPLIT, "func(x *float32, n int) float32")
	Pragma("noescape")
	Doc(doc)
	op := VMINPS
	if isMax {
		op = VMAXPS
	}
	src := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	acc, nan := YMM(), YMM()
	VMOVUPS(Mem{Base: src}, acc)
	VXORPS(nan, nan, nan)
	alignLoop()
	Label(name + "_loop")
	x := YMM()
	VMOVUPS(Mem{Base: src}, x)
	op(x, acc, acc)
	VCMPPS(Imm(3), x, x, x) // unordered: all ones where x is NaN
	VORPS(x, nan, nan)
	ADDQ(Imm(32), src)
	SUBQ(Imm(8), n)
	JNZ(LabelRef(name + "_loop"))
	// Fold 8 lanes to 1; an all-ones lane is a NaN, and OR-ing the NaN
	// mask in makes every lane it touches NaN before the fold.
	VORPS(nan, acc, acc)
	lo := foldLanes(acc, func(hi, lo reg.Register, _ bool) { foldNaN(op, hi, lo) })
	Store(lo, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// foldNaN sets lo = op(lo, hi), NaN if either is (MINPS/MAXPS return hi
// if either is NaN; lo's unordered mask, all ones, keeps lo's NaN).
func foldNaN(op func(...Op), hi, lo reg.Register) {
	m := XMM()
	VCMPPS(Imm(3), lo, lo, m)
	op(hi, lo, lo)
	VORPS(m, lo, lo)
}

// accumulate emits dst[i] = f(dst[i], x[i]) over n floats, two vectors
// per iteration.
func accumulate(name, doc string, f func(d, x reg.VecVirtual)) {
	dst, src, n := unaryText(name, doc)
	alignLoop()
	Label(name + "_loop")
	TESTQ(n, n)
	JZ(LabelRef(name + "_done"))
	d, x := YMM(), YMM()
	VMOVUPS(Mem{Base: dst}, d)
	VMOVUPS(Mem{Base: src}, x)
	f(d, x)
	VMOVUPS(d, Mem{Base: dst})
	ADDQ(Imm(32), src)
	ADDQ(Imm(32), dst)
	SUBQ(Imm(8), n)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// maxNaN sets d = max(d, x), NaN if either is: MAXPS returns x when either
// is NaN (x is its second source), and OR-ing d's unordered mask keeps a
// NaN already in d.
func maxNaN(d, x reg.VecVirtual) {
	m := YMM()
	VCMPPS(Imm(3), d, d, m)
	VMAXPS(x, d, d)
	VORPS(m, d, d)
}

// columnSum emits colSumF32x<8w>: d[j] += src[i*stride+j] for every row i
// in order and j < 8w, with d held in w registers for all the rows. Row
// by row, each column's additions happen in the scalar loop's order, so
// the sums are bit-identical to it; a call per row instead stored and
// reloaded d every row and ran at a quarter of the memory bandwidth.
func columnSum(w int) {
	name := fmt.Sprintf("colSumF32x%d", 8*w)
	TEXT(name, NOSPLIT, "func(d, src *float32, rows, stride int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds each of rows rows of %d float32, stride apart, into d, in row order.", name, 8*w))
	d := Load(Param("d"), GP64())
	src := Load(Param("src"), GP64())
	rows := Load(Param("rows"), GP64())
	stride := Load(Param("stride"), GP64())
	SHLQ(Imm(2), stride)
	acc := make([]reg.VecVirtual, w)
	for k := range acc {
		acc[k] = YMM()
		VMOVUPS(Mem{Base: d, Disp: 32 * k}, acc[k])
	}
	TESTQ(rows, rows)
	JZ(LabelRef(name + "_done"))
	alignLoop()
	Label(name + "_loop")
	for k := range acc {
		VADDPS(Mem{Base: src, Disp: 32 * k}, acc[k], acc[k])
	}
	ADDQ(stride, src)
	DECQ(rows)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_done")
	for k := range acc {
		VMOVUPS(acc[k], Mem{Base: d, Disp: 32 * k})
	}
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

// unaryText starts function name, func(dst, x *float32, n int), and
// loads its arguments.
func unaryText(name, doc string) (dst, src, n reg.Register) {
	TEXT(name, NOSPLIT, "func(dst, x *float32, n int)")
	Pragma("noescape")
	Doc(doc)
	return Load(Param("dst"), GP64()), Load(Param("x"), GP64()), Load(Param("n"), GP64())
}
