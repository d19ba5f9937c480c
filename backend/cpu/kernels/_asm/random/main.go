// Command random generates the AVX2 counter-based random bit kernel of
// package kernels (random_amd64.s): Philox-4x32-10, eight blocks at a
// time, one block per 32-bit lane.
//
// Each round multiplies two of a block's words by a constant and keeps
// both halves of the 64-bit products. VPMULUDQ forms the products of the
// even lanes only, so the odd lanes are shifted down and multiplied
// again, and the halves are blended back into lane order. The eight
// blocks' four words are then turned around (4×8 to 8×4) so that each
// block's words are stored together, as the scalar generator stores them.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Philox-4x32's multipliers and Weyl key increments (cbrng).
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9
	philoxW1 = 0xBB67AE85
	rounds   = 10
)

func main() {
	ConstraintExpr("amd64,!purego")
	philox8()
	Generate()
}

// vec declares a 32-byte constant of the eight given words.
func vec(name string, words [8]uint32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i, w := range words {
		DATA(4*i, U32(w))
	}
	return m
}

func splat(name string, w uint32) Mem {
	return vec(name, [8]uint32{w, w, w, w, w, w, w, w})
}

func philox8() {
	m0, m1 := splat("philoxM0", philoxM0), splat("philoxM1", philoxM1)
	lanes := vec("philoxLanes", [8]uint32{0, 1, 2, 3, 4, 5, 6, 7})
	eight := splat("philoxEight", 8)

	TEXT("philox8", NOSPLIT, "func(n int, c *[4]uint32, k0, k1 uint32, dst *uint32)")
	Pragma("noescape")
	Doc("philox8 writes n groups of eight Philox-4x32-10 blocks under key (k0, k1): block i has",
		"counter words (c[0]+i, c[1], c[2], c[3]) (the caller keeps c[0]+i from wrapping), and its",
		"four words go to dst[4i:4i+4] (AVX2).")
	n := Load(Param("n"), GP64())
	cp := Load(Param("c"), GP64())
	dst := Load(Param("dst"), GP64())

	// The round keys, each broadcast to a vector, on the stack.
	keys := AllocLocal(2 * rounds * 32)
	for w, name := range []string{"k0", "k1"} {
		k := Load(Param(name), GP32())
		inc := uint32(philoxW0)
		if w == 1 {
			inc = philoxW1
		}
		for r := range rounds {
			x, y := XMM(), YMM()
			MOVD(k, x)
			VPBROADCASTD(x, y)
			VMOVDQU(y, keys.Offset((2*r+w)*32))
			if r < rounds-1 {
				ADDL(U32(inc), k)
			}
		}
	}
	// The groups' first words, c[0] + lane, stepped by 8 a group, on the
	// stack with the keys: registers hold two groups' state.
	base := AllocLocal(32)
	{
		b := YMM()
		VPBROADCASTD(Mem{Base: cp}, b)
		VPADDD(lanes, b, b)
		VMOVDQU(b, base)
	}
	// Two groups a round: each block is a chain of dependent multiplies
	// (about 10 cycles a round), so one group alone leaves the vector
	// ports idle half the time.
	Label("philox8_pair")
	CMPQ(n, Imm(2))
	JL(LabelRef("philox8_loop"))
	groups(2, cp, base, keys, m0, m1, eight, dst)
	SUBQ(Imm(2), n)
	JMP(LabelRef("philox8_pair"))

	Label("philox8_loop")
	TESTQ(n, n)
	JZ(LabelRef("philox8_done"))
	groups(1, cp, base, keys, m0, m1, eight, dst)
	DECQ(n)
	JMP(LabelRef("philox8_loop"))

	Label("philox8_done")
	VZEROUPPER()
	RET()
}

// groups computes and stores g groups of eight blocks, the first with
// the first words at base, and steps base and dst past them.
func groups(g int, cp reg.Register, base, keys, m0, m1, eight Mem, dst reg.Register) {
	x := make([][]reg.VecVirtual, g)
	for i := range x {
		x[i] = []reg.VecVirtual{YMM(), YMM(), YMM(), YMM()}
		VMOVDQU(base, x[i][0])
		if i > 0 {
			VPADDD(eight, x[i-1][0], x[i][0])
		}
		for w := 1; w < 4; w++ {
			VPBROADCASTD(Mem{Base: cp, Disp: 4 * w}, x[i][w])
		}
	}
	next := YMM()
	VPADDD(eight, x[g-1][0], next)
	VMOVDQU(next, base)
	for r := range rounds {
		for _, x := range x {
			lo0, hi0 := mulHiLo(x[0], m0)
			lo1, hi1 := mulHiLo(x[2], m1)
			// (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)
			VPXOR(x[1], hi1, hi1)
			VPXOR(keys.Offset(2*r*32), hi1, x[0])
			VMOVDQA(lo1, x[1])
			VPXOR(x[3], hi0, hi0)
			VPXOR(keys.Offset((2*r+1)*32), hi0, x[2])
			VMOVDQA(lo0, x[3])
		}
	}
	for i, x := range x {
		store8(x, dst, 128*i)
	}
	ADDQ(U32(128*g), dst)
}

// mulHiLo returns the low and high words of the eight lanes' 64-bit
// products x·m.
func mulHiLo(x reg.VecVirtual, m Mem) (lo, hi reg.VecVirtual) {
	even, odd, t := YMM(), YMM(), YMM()
	VPMULUDQ(m, x, even) // lanes 0, 2, ...: low word, then high word
	VPSRLQ(U8(32), x, t)
	VPMULUDQ(m, t, odd) // lanes 1, 3, ... moved down
	lo, hi = YMM(), YMM()
	VPSLLQ(U8(32), odd, t)
	VPBLENDD(U8(0xAA), t, even, lo) // odd lanes from the shifted odd products
	VPSRLQ(U8(32), even, t)
	VPBLENDD(U8(0xAA), odd, t, hi)
	return lo, hi
}

// store8 turns the four words of eight blocks (one vector per word, one
// lane per block) into the blocks' words in order, 128 bytes at dst+off.
func store8(x []reg.VecVirtual, dst reg.Register, off int) {
	t0, t1, t2, t3 := YMM(), YMM(), YMM(), YMM()
	VPUNPCKLDQ(x[1], x[0], t0) // blocks 0, 1 | 4, 5: words 0 and 1
	VPUNPCKLDQ(x[3], x[2], t1) // words 2 and 3
	VPUNPCKHDQ(x[1], x[0], t2) // blocks 2, 3 | 6, 7
	VPUNPCKHDQ(x[3], x[2], t3)
	u0, u1, u2, u3 := YMM(), YMM(), YMM(), YMM()
	VPUNPCKLQDQ(t1, t0, u0) // block 0 | 4
	VPUNPCKHQDQ(t1, t0, u1) // block 1 | 5
	VPUNPCKLQDQ(t3, t2, u2) // block 2 | 6
	VPUNPCKHQDQ(t3, t2, u3) // block 3 | 7
	for i, pair := range [][2]reg.VecVirtual{{u0, u1}, {u2, u3}, {u0, u1}, {u2, u3}} {
		sel := uint8(0x20) // the low halves: blocks 0, 1 (2, 3)
		if i >= 2 {
			sel = 0x31 // the high halves: blocks 4, 5 (6, 7)
		}
		o := YMM()
		VPERM2I128(U8(sel), pair[1], pair[0], o)
		VMOVDQU(o, Mem{Base: dst, Disp: off + 32*i})
	}
}
