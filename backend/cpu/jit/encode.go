//go:build linux && amd64 && !purego

package jit

import "encoding/binary"

// An x86-64 encoder for the few instructions the generated loops use:
// AVX2/FMA on YMM registers with VEX prefixes, their AVX-512 twins on
// ZMM registers with EVEX prefixes (asm.wide), and the scalar moves,
// adds, compares and jumps of the loop around them. Operands follow
// Intel's order (destination first) throughout. Wide code keeps to the
// first 16 vector registers, as the allocator hands out 16, and uses k1
// as its one mask register, set and read by the same instruction pair.

// General-purpose registers, by their encoding numbers.
const (
	rax = 0
	rcx = 1
	rdx = 2
	rbx = 3
	rsi = 6
	rdi = 7
	r8  = 8
	r9  = 9
	r10 = 10
	r11 = 11
	r12 = 12
	r13 = 13
)

// mem is the address base + index·scale + disp (index < 0: none; a
// zero scale is 1).
type mem struct {
	base, index int
	scale       int
	disp        int32
	// via, where not 0, is the offset in the argument block of the
	// address the base register (R13) must be loaded with right before
	// the instruction: an input read through R13 (regInputs).
	via int32
}

// scaleBits is the SIB encoding of m's scale.
func (m mem) scaleBits() byte {
	switch m.scale {
	case 2:
		return 1
	case 4:
		return 2
	case 8:
		return 3
	}
	return 0
}

// rm is an instruction's ModRM operand: a register, or memory.
type rm struct {
	reg   int
	m     mem
	isMem bool
}

func ymm(r int) rm { return rm{reg: r} }
func at(m mem) rm  { return rm{m: m, isMem: true} }
func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

type asm struct {
	b []byte
	// wide selects the EVEX (512-bit) forms of the vector instructions.
	wide bool
	// jumps are the displacements of the shortcut tests' JNZs, for the
	// generator to point at the full block.
	jumps []int
}

func (a *asm) byte(bs ...byte) { a.b = append(a.b, bs...) }

// modrm appends the ModRM byte (and SIB and displacement for memory)
// for the register field reg and operand o. The displacement is the
// shortest that holds it: none when zero (except from RBP or R13, whose
// no-displacement encoding means something else), a byte, or 32 bits.
// With the two-byte VEX form (vexL) this makes chain10's loops a fifth
// shorter: less to fetch and to hold in the instruction caches.
func (a *asm) modrm(reg int, o rm) { a.modrmN(reg, o, 1) }

// modrmN is modrm with EVEX's compressed displacement: a one-byte
// displacement counts units of n bytes (the memory operand's size), so
// it is used only for a multiple of n that fits.
func (a *asm) modrmN(reg int, o rm, n int32) {
	if !o.isMem {
		a.byte(0xC0 | byte(reg&7)<<3 | byte(o.reg&7))
		return
	}
	m := o.m
	mod := byte(0x80)
	switch {
	case m.disp == 0 && m.base&7 != 5:
		mod = 0
	case m.disp%n == 0 && m.disp/n >= -128 && m.disp/n <= 127:
		mod = 0x40
	}
	if m.index < 0 && m.base&7 != 4 {
		a.byte(mod | byte(reg&7)<<3 | byte(m.base&7))
	} else {
		idx := 4 // none
		if m.index >= 0 {
			idx = m.index & 7
		}
		a.byte(mod|byte(reg&7)<<3|4, m.scaleBits()<<6|byte(idx)<<3|byte(m.base&7))
	}
	switch mod {
	case 0x40:
		a.byte(byte(int8(m.disp / n)))
	case 0x80:
		a.b = binary.LittleEndian.AppendUint32(a.b, uint32(m.disp))
	}
}

// Opcode maps and mandatory prefixes of the VEX encoding.
const (
	map0F   = 1
	map0F38 = 2
	map0F3A = 3
	ppNone  = 0
	pp66    = 1
	ppF3    = 2
)

// vex appends a 256-bit VEX instruction (three-byte form): reg is the
// ModRM reg field, v the VEX.vvvv source (0 when unused, encoded 1111),
// o the ModRM r/m operand.
func (a *asm) vex(mapSel, pp byte, w bool, op byte, reg, v int, o rm) {
	a.vexL(mapSel, pp, w, true, op, reg, v, o)
}

// vexL is vex with the vector length chosen: 256 bits, or 128.
func (a *asm) vexL(mapSel, pp byte, w, l256 bool, op byte, reg, v int, o rm) {
	x, b := 0, o.reg>>3
	if o.isMem {
		b = o.m.base >> 3
		if o.m.index >= 0 {
			x = o.m.index >> 3
		}
	}
	if mapSel == map0F && !w && x == 0 && b == 0 {
		// The two-byte form, a byte shorter, has no X, B, W or map.
		a.byte(0xC5, byte(1-reg>>3)<<7|byte(^v&15)<<3|byte(bit(l256))<<2|pp, op)
	} else {
		a.byte(0xC4,
			byte(1-reg>>3)<<7|byte(1-x)<<6|byte(1-b)<<5|mapSel,
			byte(bit(w))<<7|byte(^v&15)<<3|byte(bit(l256))<<2|pp,
			op)
	}
	a.modrm(reg, o)
}

// evex appends a 512-bit EVEX instruction: the fields as vex's, with k
// the opmask register that masks the result (0: none), and n the size
// in bytes of a memory operand, the unit of a one-byte displacement.
func (a *asm) evex(mapSel, pp byte, w bool, op byte, reg, v int, o rm, k int, n int32) {
	x, b := 0, o.reg>>3&1
	if o.isMem {
		b = o.m.base >> 3 & 1
		if o.m.index >= 0 {
			x = o.m.index >> 3 & 1
		}
	} else {
		x = o.reg >> 4 & 1 // a register operand's fifth bit
	}
	a.byte(0x62,
		byte(1-reg>>3&1)<<7|byte(1-x)<<6|byte(1-b)<<5|byte(1-reg>>4&1)<<4|mapSel,
		byte(bit(w))<<7|byte(^v&15)<<3|1<<2|pp,
		2<<5|byte(1-v>>4&1)<<3|byte(k&7), // L'L = 10: 512 bits
		op)
	a.modrmN(reg, o, n)
}

// vec appends a vector instruction on whole registers: VEX on YMM, or
// EVEX on ZMM when wide (the same map, prefix and opcode).
func (a *asm) vec(mapSel, pp byte, op byte, reg, v int, o rm) {
	if a.wide {
		a.evex(mapSel, pp, false, op, reg, v, o, 0, 64)
		return
	}
	a.vex(mapSel, pp, false, op, reg, v, o)
}

// kScratch is the mask register wide code uses: compares write it,
// blends and tests read it, each right after it was written.
const kScratch = 1

// Packed single-precision arithmetic: dst = src1 op src2.
const (
	opSqrt  = 0x51
	opAnd   = 0x54
	opAndN  = 0x55
	opOr    = 0x56
	opXor   = 0x57
	opAdd   = 0x58
	opMul   = 0x59
	opSub   = 0x5C
	opMin   = 0x5D
	opDiv   = 0x5E
	opMax   = 0x5F
	opPSubD = 0xFA // 66 0F
	opPAddD = 0xFE // 66 0F
	opPAnd  = 0xDB // 66 0F
)

func (a *asm) ps(op byte, dst, src1 int, src2 rm) { a.vec(map0F, ppNone, op, dst, src1, src2) }

// pd is a packed-integer op of the 66 0F map (VPSUBD, VPADDD).
func (a *asm) pd(op byte, dst, src1 int, src2 rm) { a.vec(map0F, pp66, op, dst, src1, src2) }

func (a *asm) sqrt(dst int, src rm) { a.vec(map0F, ppNone, opSqrt, dst, 0, src) }

// round is VROUNDPS (VEX) or VRNDSCALEPS (EVEX, scale 0: to integers),
// one opcode: dst = src rounded by mode imm.
func (a *asm) round(dst int, src rm, imm byte) {
	a.vec(map0F3A, pp66, 0x08, dst, 0, src)
	a.byte(imm)
}

// roundNearest is round's mode for to nearest, ties to even.
const roundNearest = 0

func (a *asm) load(dst int, m mem)  { a.vec(map0F, ppNone, 0x10, dst, 0, at(m)) }
func (a *asm) store(m mem, src int) { a.vec(map0F, ppNone, 0x11, src, 0, at(m)) }

// storeNT is VMOVNTPS: m must be aligned to the vector's size.
func (a *asm) storeNT(m mem, src int) { a.vec(map0F, ppNone, 0x2B, src, 0, at(m)) }

func (a *asm) mov(dst, src int) { a.vec(map0F, ppNone, 0x28, dst, 0, ymm(src)) } // VMOVAPS

// cmp is VCMPPS with predicate pred: dst = src1 pred src2, as a mask
// (all ones or zero in each lane). Wide, VCMPPS writes k1, and
// VPMOVM2D spreads it into dst's lanes.
func (a *asm) cmp(pred byte, dst, src1 int, src2 rm) {
	if a.wide {
		a.evex(map0F, ppNone, false, 0xC2, kScratch, src1, src2, 0, 64)
		a.byte(pred)
		a.evex(map0F38, ppF3, false, 0x38, dst, 0, ymm(kScratch), 0, 64)
		return
	}
	a.vex(map0F, ppNone, false, 0xC2, dst, src1, src2)
	a.byte(pred)
}

// cmpBlend is dst = (x pred y) ? src2 : src1 in wide code: VCMPPS into
// k1 and VBLENDMPS by it, two instructions where cmp and blendv take
// four (the mask moved to a vector register and back): XLA's maximum
// seven instructions → three, erf's two blends four instructions fewer.
func (a *asm) cmpBlend(pred byte, dst, src1, src2, x int, y rm) {
	a.evex(map0F, ppNone, false, 0xC2, kScratch, x, y, 0, 64)
	a.byte(pred)
	a.evex(map0F38, pp66, false, 0x65, dst, src1, ymm(src2), kScratch, 64)
}

// blendv is VBLENDVPS: dst = mask's sign bit ? src2 : src1. Wide, the
// sign bits go into k1 (VPMOVD2M) and VBLENDMPS blends by it.
func (a *asm) blendv(dst, src1 int, src2 rm, mask int) {
	if a.wide {
		a.evex(map0F38, ppF3, false, 0x39, kScratch, 0, ymm(mask), 0, 64)
		a.evex(map0F38, pp66, false, 0x65, dst, src1, src2, kScratch, 64)
		return
	}
	a.vex(map0F3A, pp66, false, 0x4A, dst, src1, src2)
	a.byte(byte(mask) << 4)
}

// loadWords is VPMOVZXWD: eight 16-bit words at m, zero-extended to
// the eight lanes of dst.
func (a *asm) loadWords(dst int, m mem) { a.vex(map0F38, pp66, false, 0x33, dst, 0, at(m)) }

// extractHigh is VEXTRACTI128 dst(xmm), src(ymm), 1: src's upper half.
func (a *asm) extractHigh(dst, src int) {
	a.vex(map0F3A, pp66, false, 0x39, src, 0, ymm(dst))
	a.byte(1)
}

// pack is a saturating pack on xmm registers (VEX.128.66): dst's low
// half from src1's lanes, its high half from src2's, each half as wide.
func (a *asm) pack(op byte, dst, src1, src2 int) {
	m := byte(map0F)
	if op == packUSDW {
		m = map0F38
	}
	a.vexL(m, pp66, false, false, op, dst, src1, ymm(src2))
}

// The packs: dwords to words and words to bytes, unsigned or signed
// saturation (VPACKUSDW is in the 0F38 map, the others in 0F).
const (
	packUSDW = 0x2B
	packSSDW = 0x6B
	packUSWB = 0x67
	packSSWB = 0x63
)

// cvt is VCVTDQ2PS (s32 to f32, rounded as MXCSR says: to nearest even)
// or VCVTTPS2DQ (f32 to s32 toward zero), on whole registers.
func (a *asm) cvt(op byte, dst int, src rm) {
	pp := byte(ppNone)
	if op == cvtTPS2DQ {
		pp = ppF3
	}
	a.vec(map0F, pp, 0x5B, dst, 0, src)
}

// The conversions cvt does (both opcode 5B; the prefix tells them apart).
const (
	cvtDQ2PS  = 0
	cvtTPS2DQ = 1
)

// cvtPH2PS is VCVTPH2PS: the f16 values of src's lower half (an xmm, or
// 16 bytes at m; wide, a ymm or 32 bytes) widened exactly to dst's f32
// lanes (a NaN quieted, its payload kept).
func (a *asm) cvtPH2PS(dst int, src rm) {
	if a.wide {
		a.evex(map0F38, pp66, false, 0x13, dst, 0, src, 0, 32)
		return
	}
	a.vex(map0F38, pp66, false, 0x13, dst, 0, src)
}

// cvtPS2PH is VCVTPS2PH dst, src, 0: src's f32 lanes rounded to f16,
// nearest even (imm 0, whatever MXCSR says), into dst's lower half (an
// xmm, its upper half zeroed; wide, a ymm) or 16 (32) bytes at m. The
// source is ModRM's reg field here and the destination its r/m operand,
// the other way round from the widening.
func (a *asm) cvtPS2PH(dst rm, src int) {
	if a.wide {
		a.evex(map0F3A, pp66, false, 0x1D, src, 0, dst, 0, 32)
	} else {
		a.vex(map0F3A, pp66, false, 0x1D, src, 0, dst)
	}
	a.byte(roundNearest)
}

// store64 is VMOVQ [m], xmm src: eight bytes.
func (a *asm) store64(m mem, src int) { a.vexL(map0F, pp66, false, false, 0xD6, src, 0, at(m)) }

// maskLoad is VMASKMOVPS dst, mask, [m]: the lanes whose mask has its
// sign bit set are read from m, the others are zero and their memory is
// not touched (no fault past an array's end). YMM only: a row's last
// partial vector runs in the 8-lane code.
func (a *asm) maskLoad(dst, mask int, m mem) { a.vex(map0F38, pp66, false, 0x2C, dst, mask, at(m)) }

// maskStore is VMASKMOVPS [m], mask, src: only the lanes whose mask has
// its sign bit set are written.
func (a *asm) maskStore(m mem, mask, src int) { a.vex(map0F38, pp66, false, 0x2E, src, mask, at(m)) }

// store128 is VMOVDQU [m], xmm src: sixteen bytes.
func (a *asm) store128(m mem, src int) { a.vexL(map0F, ppF3, false, false, 0x7F, src, 0, at(m)) }

// FMA forms (VEX.66.0F38.W0): 213 is dst = src1·dst + src2, 231 is
// dst = src1·src2 + dst; the N forms negate the product.
const (
	fmadd213  = 0xA8
	fmadd231  = 0xB8
	fnmadd213 = 0xAC
	fnmadd231 = 0xBC
)

func (a *asm) fma(op byte, dst, src1 int, src2 rm) { a.vec(map0F38, pp66, op, dst, src1, src2) }

// shift is VPSRAD (ext 4) or VPSLLD (ext 6) by an immediate: dst = src
// shifted, dst in VEX.vvvv.
func (a *asm) shift(ext int, dst, src int, n byte) {
	a.vec(map0F, pp66, 0x72, ext, dst, ymm(src))
	a.byte(n)
}

const (
	shiftRightLogical = 2
	shiftRightArith   = 4
	shiftLeft         = 6
)

// rex appends a REX prefix with W set for reg and rm register numbers.
func (a *asm) rex(w bool, reg, index, base int) {
	a.byte(0x40 | byte(bit(w))<<3 | byte(reg>>3)<<2 | byte(index>>3&1)<<1 | byte(base>>3))
}

// loadGP is MOV dst, QWORD [m] (m without index).
func (a *asm) loadGP(dst int, m mem) {
	a.rex(true, dst, 0, m.base)
	a.byte(0x8B)
	a.modrm(dst, at(m))
}

// storeGP is MOV [m], src (64 bits).
func (a *asm) storeGP(m mem, src int) {
	a.rex(true, src, 0, m.base)
	a.byte(0x89)
	a.modrm(src, at(m))
}

// cmpGPMem is CMP x, [m] (flags of x - [m], 64 bits).
func (a *asm) cmpGPMem(x int, m mem) {
	a.rex(true, x, 0, m.base)
	a.byte(0x3B)
	a.modrm(x, at(m))
}

// addImm is ADD dst, imm32.
func (a *asm) addImm(dst int, imm int32) {
	a.rex(true, 0, 0, dst)
	a.byte(0x81, 0xC0|byte(dst&7))
	a.b = binary.LittleEndian.AppendUint32(a.b, uint32(imm))
}

// addGPMem is ADD dst, QWORD [m] (m without index).
func (a *asm) addGPMem(dst int, m mem) {
	a.rex(true, dst, 0, m.base)
	a.byte(0x03)
	a.modrm(dst, at(m))
}

// cmpGP is CMP x, y (flags of x - y).
func (a *asm) cmpGP(x, y int) {
	a.rex(true, y, 0, x)
	a.byte(0x39, 0xC0|byte(y&7)<<3|byte(x&7))
}

// subGP is SUB dst, src.
func (a *asm) subGP(dst, src int) {
	a.rex(true, src, 0, dst)
	a.byte(0x29, 0xC0|byte(src&7)<<3|byte(dst&7))
}

// movGP is MOV dst, src.
func (a *asm) movGP(dst, src int) {
	a.rex(true, src, 0, dst)
	a.byte(0x89, 0xC0|byte(src&7)<<3|byte(dst&7))
}

// zero is XOR r32, r32 (clearing the whole register).
func (a *asm) zero(r int) {
	if r >= 8 {
		a.rex(false, r, 0, r)
	}
	a.byte(0x31, 0xC0|byte(r&7)<<3|byte(r&7))
}

// jae and jmp append a jump with a 32-bit displacement to be patched
// and return the displacement's offset.
func (a *asm) jae() int { a.byte(0x0F, 0x83, 0, 0, 0, 0); return len(a.b) - 4 }
func (a *asm) jge() int { a.byte(0x0F, 0x8D, 0, 0, 0, 0); return len(a.b) - 4 }
func (a *asm) je() int  { a.byte(0x0F, 0x84, 0, 0, 0, 0); return len(a.b) - 4 }

// cmpMemZero is CMP QWORD [m], 0.
func (a *asm) cmpMemZero(m mem) {
	a.rex(true, 0, 0, m.base)
	a.byte(0x83)
	a.modrm(7, at(m))
	a.byte(0)
}

// addMem is ADD QWORD [m], imm8.
func (a *asm) addMem(m mem, imm int8) {
	a.rex(true, 0, 0, m.base)
	a.byte(0x83)
	a.modrm(0, at(m))
	a.byte(byte(imm))
}

// addMem32 is ADD QWORD [m], imm32.
func (a *asm) addMem32(m mem, imm int32) {
	a.rex(true, 0, 0, m.base)
	a.byte(0x81)
	a.modrm(0, at(m))
	a.byte(byte(imm), byte(imm>>8), byte(imm>>16), byte(imm>>24))
}

// decMem is DEC QWORD [m].
func (a *asm) decMem(m mem) {
	a.rex(true, 0, 0, m.base)
	a.byte(0xFF)
	a.modrm(1, at(m))
}

// broadcast is VBROADCASTSS dst, DWORD [m].
func (a *asm) broadcast(dst int, m mem) {
	if a.wide {
		a.evex(map0F38, pp66, false, 0x18, dst, 0, at(m), 0, 4)
		return
	}
	a.vex(map0F38, pp66, false, 0x18, dst, 0, at(m))
}
func (a *asm) jmp() int { a.byte(0xE9, 0, 0, 0, 0); return len(a.b) - 4 }
func (a *asm) jnz() int { a.byte(0x0F, 0x85, 0, 0, 0, 0); return len(a.b) - 4 }

// ptest sets ZF when x AND o is all zeros (VPTEST). Wide, VPTESTMD
// sets k1's bits for the lanes that are not, and KORTESTW sets ZF if
// none is.
func (a *asm) ptest(x int, o rm) {
	if a.wide {
		a.evex(map0F38, pp66, false, 0x27, kScratch, x, o, 0, 64)
		a.byte(0xC5, 0xF8, 0x98, 0xC0|kScratch<<3|kScratch) // KORTESTW k1, k1
		return
	}
	a.vex(map0F38, pp66, false, 0x17, x, 0, o)
}

// patch points the jump whose displacement is at off to target.
func (a *asm) patch(off, target int) {
	binary.LittleEndian.PutUint32(a.b[off:], uint32(int32(target-(off+4))))
}

// prefetch is PREFETCHT0 (hint 1) or PREFETCHT1 (2) [m].
func (a *asm) prefetch(m mem, hint int) {
	if m.base >= 8 || m.index >= 8 {
		a.rex(false, 0, max(m.index, 0), m.base)
	}
	a.byte(0x0F, 0x18)
	a.modrm(hint, at(m))
}

func (a *asm) ret()        { a.byte(0xC3) }
func (a *asm) vzeroupper() { a.byte(0xC5, 0xF8, 0x77) }
func (a *asm) sfence()     { a.byte(0x0F, 0xAE, 0xF8) }
