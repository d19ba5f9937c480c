// Package cbrng holds the counter-based random bit generators XLA's
// rng-bit-generator uses: Threefry-2x32-20 and Philox-4x32-10 (Salmon et
// al., "Parallel random numbers: as easy as 1, 2, 3", SC'11). A block is
// a pure function of its counter and key, so any range of a stream can be
// computed on its own, in parallel. The evaluator and the CPU backend
// both call these, so they agree bit for bit; the tests check the
// Random123 known answers.
//
// The rounds are written out so that the rotation counts and key
// injections are constants, and the x2 forms run two independent blocks
// side by side: one block is a chain of dependent adds (three-fry) or
// multiplies (philox), so two chains keep the ALUs busy.
package cbrng

import "math/bits"

// threefryParity is Threefry's key-schedule constant.
const threefryParity = 0x1BD11BDA

// threefry4a and threefry4b are four rounds with the first and second
// halves of the rotation schedule.
func threefry4a(x0, x1 uint32) (uint32, uint32) {
	x0 += x1
	x1 = bits.RotateLeft32(x1, 13) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 15) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 26) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 6) ^ x0
	return x0, x1
}

func threefry4b(x0, x1 uint32) (uint32, uint32) {
	x0 += x1
	x1 = bits.RotateLeft32(x1, 17) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 29) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 16) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 24) ^ x0
	return x0, x1
}

// Threefry2x32 is one block: counter words (x0, x1), key words (k0, k1);
// a key injection follows every four rounds.
func Threefry2x32(x0, x1, k0, k1 uint32) (uint32, uint32) {
	k2 := k0 ^ k1 ^ threefryParity
	x0, x1 = x0+k0, x1+k1
	x0, x1 = threefry4a(x0, x1)
	x0, x1 = x0+k1, x1+k2+1
	x0, x1 = threefry4b(x0, x1)
	x0, x1 = x0+k2, x1+k0+2
	x0, x1 = threefry4a(x0, x1)
	x0, x1 = x0+k0, x1+k1+3
	x0, x1 = threefry4b(x0, x1)
	x0, x1 = x0+k1, x1+k2+4
	x0, x1 = threefry4a(x0, x1)
	return x0 + k2, x1 + k0 + 5
}

// Threefry2x32x2 is two blocks (a0, a1) and (b0, b1) under one key.
func Threefry2x32x2(a0, a1, b0, b1, k0, k1 uint32) (uint32, uint32, uint32, uint32) {
	k2 := k0 ^ k1 ^ threefryParity
	a0, a1, b0, b1 = a0+k0, a1+k1, b0+k0, b1+k1
	a0, a1 = threefry4a(a0, a1)
	b0, b1 = threefry4a(b0, b1)
	a0, a1, b0, b1 = a0+k1, a1+k2+1, b0+k1, b1+k2+1
	a0, a1 = threefry4b(a0, a1)
	b0, b1 = threefry4b(b0, b1)
	a0, a1, b0, b1 = a0+k2, a1+k0+2, b0+k2, b1+k0+2
	a0, a1 = threefry4a(a0, a1)
	b0, b1 = threefry4a(b0, b1)
	a0, a1, b0, b1 = a0+k0, a1+k1+3, b0+k0, b1+k1+3
	a0, a1 = threefry4b(a0, a1)
	b0, b1 = threefry4b(b0, b1)
	a0, a1, b0, b1 = a0+k1, a1+k2+4, b0+k1, b1+k2+4
	a0, a1 = threefry4a(a0, a1)
	b0, b1 = threefry4a(b0, b1)
	return a0 + k2, a1 + k0 + 5, b0 + k2, b1 + k0 + 5
}

// Philox-4x32's multipliers and Weyl key increments.
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9
	philoxW1 = 0xBB67AE85
)

// Philox4x32 is one block of counter words c under key (k0, k1).
func Philox4x32(c [4]uint32, k0, k1 uint32) [4]uint32 {
	c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
	for range 10 {
		p0 := uint64(philoxM0) * uint64(c0)
		p1 := uint64(philoxM1) * uint64(c2)
		c0, c1, c2, c3 = uint32(p1>>32)^c1^k0, uint32(p1), uint32(p0>>32)^c3^k1, uint32(p0)
		k0 += philoxW0
		k1 += philoxW1
	}
	return [4]uint32{c0, c1, c2, c3}
}

// Philox4x32x2 is two blocks under one key. Words in locals, not arrays,
// stay in registers.
func Philox4x32x2(a, b [4]uint32, k0, k1 uint32) ([4]uint32, [4]uint32) {
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
	for range 10 {
		pa0 := uint64(philoxM0) * uint64(a0)
		pb0 := uint64(philoxM0) * uint64(b0)
		pa1 := uint64(philoxM1) * uint64(a2)
		pb1 := uint64(philoxM1) * uint64(b2)
		a0, a1, a2, a3 = uint32(pa1>>32)^a1^k0, uint32(pa1), uint32(pa0>>32)^a3^k1, uint32(pa0)
		b0, b1, b2, b3 = uint32(pb1>>32)^b1^k0, uint32(pb1), uint32(pb0>>32)^b3^k1, uint32(pb0)
		k0 += philoxW0
		k1 += philoxW1
	}
	return [4]uint32{a0, a1, a2, a3}, [4]uint32{b0, b1, b2, b3}
}

// U128 is Philox's 128-bit counter.
type U128 struct{ Lo, Hi uint64 }

// Add is c + n, with the carry into the high half.
func (c U128) Add(n uint64) U128 {
	lo, carry := bits.Add64(c.Lo, n, 0)
	return U128{lo, c.Hi + carry}
}

// Words are the counter's 32-bit words, lowest first.
func (c U128) Words() [4]uint32 {
	return [4]uint32{uint32(c.Lo), uint32(c.Lo >> 32), uint32(c.Hi), uint32(c.Hi >> 32)}
}

// ThreefrySplitDim is the dimension XLA's Threefry bit generator splits a
// shape at (its SplitShapeIntoHalves choice): the first even dimension,
// else the first of the largest. Each half's elements take one of a
// counter pair's two output words.
func ThreefrySplitDim(dims []int64) int {
	best := 0
	for d, n := range dims {
		if n%2 == 0 {
			return d
		}
		if n > dims[best] {
			best = d
		}
	}
	return best
}
