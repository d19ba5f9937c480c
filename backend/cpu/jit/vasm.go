//go:build linux && amd64 && !purego

package jit

// Code is generated in two steps. The program's values and the math
// expansions are first written as instructions on virtual registers
// (vasm), one list per vector the loop computes at a time; the lists are
// interleaved, so the long dependency chains of two vectors (exp's and
// tanh's run for dozens of cycles) overlap instead of each filling the
// out-of-order window on its own; then the allocator (regalloc.go) maps
// the virtual registers onto the 16 YMM registers (the 32 ZMM ones in
// wide code), spilling to the argument block's scratch area when more
// are live.

type ikind uint8

const (
	kPS        ikind = iota // dst = src1 op src2 (packed single: 0F map)
	kPD                     // the same in the 66 0F map (integer ops)
	kFMA                    // dst = fma(dst, src1, src2) by form
	kCmp                    // dst = src1 pred src2, a mask
	kBlend                  // dst = mask ? src2 : src1
	kShift                  // dst = src1 shifted by imm
	kSqrt                   // dst = √src2
	kRound                  // dst = src2 rounded as imm says
	kLoad                   // dst = [m]
	kStore                  // [m] = src1 (op 1: non-temporal)
	kMov                    // dst = src1
	kLoadWords              // dst = eight words at m, zero-extended
	kExtract                // dst (xmm) = src1's upper 128 bits
	kPack                   // dst (xmm) = src1 and mask packed narrower, as op says
	kCvt                    // dst = src2 converted, as op says
	kStore64                // [m] = src1's lower 64 bits
	kStore128               // [m] = src1's lower 128 bits
	kTestJump               // jump (to the full block) unless src1 AND src2 is zero
	kMaskLoad               // dst = [m] in the lanes of mask, zero in the others
	kMaskStore              // [m] = src1 in the lanes of mask
	kCmpBlend               // dst = (x pred src2) ? mask : src1 (wide code only)
	kFromF16                // dst = the f16 values of src2's lower half, widened
	kToF16                  // dst's lower half = src1 rounded to f16
	kStoreF16               // [m] = src1 rounded to f16
)

// vinst is one instruction on virtual registers; src2 is a virtual
// register (isMem false) or memory.
type vinst struct {
	kind            ikind
	op              byte // opcode, FMA form, predicate or shift extension
	imm             byte // shift count, rounding mode
	dst, src1, mask int
	x               int // kCmpBlend: the compare's first operand
	src2            rm
	m               mem // kLoad, kStore, kMaskLoad, kMaskStore
}

// vasm records instructions with the encoder's signatures, so the
// generators read like the assembly they produce.
type vasm struct {
	ins   []vinst
	nregs *int // the virtual register counter, shared by the streams
}

func (a *vasm) reg() int { r := *a.nregs; *a.nregs++; return r }

func (a *vasm) add(i vinst) { a.ins = append(a.ins, i) }

func (a *vasm) ps(op byte, dst, src1 int, src2 rm) {
	a.add(vinst{kind: kPS, op: op, dst: dst, src1: src1, src2: src2})
}
func (a *vasm) pd(op byte, dst, src1 int, src2 rm) {
	a.add(vinst{kind: kPD, op: op, dst: dst, src1: src1, src2: src2})
}
func (a *vasm) fma(op byte, dst, src1 int, src2 rm) {
	a.add(vinst{kind: kFMA, op: op, dst: dst, src1: src1, src2: src2})
}
func (a *vasm) cmp(pred byte, dst, src1 int, src2 rm) {
	a.add(vinst{kind: kCmp, op: pred, dst: dst, src1: src1, src2: src2})
}
func (a *vasm) blendv(dst, src1 int, src2 rm, mask int) {
	a.add(vinst{kind: kBlend, dst: dst, src1: src1, src2: src2, mask: mask})
}

// cmpBlend is dst = (x pred y) ? src2 : src1 in wide code: the compare
// into k1 and the blend by it as one instruction of the streams, so no
// other stream's compare comes between them (see asm.cmpBlend).
func (a *vasm) cmpBlend(pred byte, dst, src1, src2, x int, y rm) {
	a.add(vinst{kind: kCmpBlend, op: pred, dst: dst, src1: src1, mask: src2, x: x, src2: y})
}
func (a *vasm) shift(ext int, dst, src int, n byte) {
	a.add(vinst{kind: kShift, op: byte(ext), imm: n, dst: dst, src1: src})
}
func (a *vasm) sqrt(dst int, src rm) { a.add(vinst{kind: kSqrt, dst: dst, src2: src}) }
func (a *vasm) round(dst int, src rm, imm byte) {
	a.add(vinst{kind: kRound, imm: imm, dst: dst, src2: src})
}
func (a *vasm) load(dst int, m mem) { a.add(vinst{kind: kLoad, dst: dst, m: m}) }
func (a *vasm) mov(dst, src int)    { a.add(vinst{kind: kMov, dst: dst, src1: src}) }
func (a *vasm) loadWords(dst int, m mem) {
	a.add(vinst{kind: kLoadWords, dst: dst, m: m})
}
func (a *vasm) extractHigh(dst, src int) { a.add(vinst{kind: kExtract, dst: dst, src1: src}) }
func (a *vasm) pack(op byte, dst, src1, src2 int) {
	a.add(vinst{kind: kPack, op: op, dst: dst, src1: src1, mask: src2})
}
func (a *vasm) cvt(op byte, dst int, src rm) { a.add(vinst{kind: kCvt, op: op, dst: dst, src2: src}) }
func (a *vasm) store64(m mem, src int)       { a.add(vinst{kind: kStore64, src1: src, m: m}) }
func (a *vasm) cvtPH2PS(dst int, src rm)     { a.add(vinst{kind: kFromF16, dst: dst, src2: src}) }
func (a *vasm) cvtPS2PH(dst, src int)        { a.add(vinst{kind: kToF16, dst: dst, src1: src}) }
func (a *vasm) storeF16(m mem, src int)      { a.add(vinst{kind: kStoreF16, src1: src, m: m}) }
func (a *vasm) store128(m mem, src int) {
	a.add(vinst{kind: kStore128, src1: src, m: m})
}
func (a *vasm) maskLoad(dst, mask int, m mem) {
	a.add(vinst{kind: kMaskLoad, dst: dst, src1: mask, m: m})
}
func (a *vasm) maskStore(m mem, mask, src int) {
	a.add(vinst{kind: kMaskStore, src1: src, mask: mask, m: m})
}
func (a *vasm) testJump(x int, m rm) { a.add(vinst{kind: kTestJump, src1: x, src2: m}) }
func (a *vasm) store(m mem, src int, nt bool) {
	a.add(vinst{kind: kStore, op: byte(bit(nt)), src1: src, m: m})
}

// operands is what one instruction reads: up to two variables it needs
// in registers, and the one it reads as src2, which may stay in memory
// (-1: none). A fixed array, so the allocator's walk allocates nothing.
type operands struct {
	regs [3]int
	n    int
	src2 int
}

func (o *operands) list() []int { return o.regs[:o.n] }

// reads returns the variables i reads.
func (i *vinst) reads() operands {
	o := operands{src2: -1}
	if (i.kind == kPS || i.kind == kPD || i.kind == kFMA || i.kind == kCmp || i.kind == kBlend || i.kind == kSqrt || i.kind == kRound || i.kind == kCvt || i.kind == kTestJump || i.kind == kCmpBlend || i.kind == kFromF16) && !i.src2.isMem {
		o.src2 = i.src2.reg
	}
	switch i.kind {
	case kPS, kPD, kCmp, kShift, kStore, kMov, kExtract, kStore128, kStore64, kTestJump, kMaskLoad, kToF16, kStoreF16:
		o.regs[0], o.n = i.src1, 1
	case kPack, kBlend, kMaskStore:
		o.regs, o.n = [3]int{i.src1, i.mask}, 2
	case kFMA:
		o.regs, o.n = [3]int{i.dst, i.src1}, 2
	case kCmpBlend:
		o.regs, o.n = [3]int{i.src1, i.mask, i.x}, 3
	}
	return o
}

// writes is the virtual register i writes, or -1.
func (i *vinst) writes() int {
	if i.kind == kStore || i.kind == kStore128 || i.kind == kStore64 || i.kind == kTestJump || i.kind == kMaskStore || i.kind == kStoreF16 {
		return -1
	}
	return i.dst
}

// interleave merges the streams' lists one instruction from each in
// turn.
func interleave(lists [][]vinst) []vinst {
	var out []vinst
	for k := 0; ; k++ {
		done := true
		for _, l := range lists {
			if k < len(l) {
				out = append(out, l[k])
				done = false
			}
		}
		if done {
			return out
		}
	}
}
