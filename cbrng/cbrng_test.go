package cbrng

import (
	"math/rand/v2"
	"testing"
)

// The first Random123 known answers (zero counter, zero key); the
// evaluator's tests check the rest through rng-bit-generator.
func TestKnownAnswers(t *testing.T) {
	if a, b := Threefry2x32(0, 0, 0, 0); a != 0x6b200159 || b != 0x99ba4efe {
		t.Errorf("Threefry2x32(0, 0) = %x %x", a, b)
	}
	if w := Philox4x32([4]uint32{}, 0, 0); w != [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8} {
		t.Errorf("Philox4x32(0, 0) = %x", w)
	}
}

// TestPairs: the two-block forms are two single blocks.
func TestPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		a0, a1, b0, b1, k0, k1 := rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32()
		x0, x1, y0, y1 := Threefry2x32x2(a0, a1, b0, b1, k0, k1)
		if p0, p1 := Threefry2x32(a0, a1, k0, k1); p0 != x0 || p1 != x1 {
			t.Fatalf("Threefry2x32x2's first block differs")
		}
		if q0, q1 := Threefry2x32(b0, b1, k0, k1); q0 != y0 || q1 != y1 {
			t.Fatalf("Threefry2x32x2's second block differs")
		}
		c, d := [4]uint32{a0, a1, b0, b1}, [4]uint32{b1, a0, k0, a1}
		u, v := Philox4x32x2(c, d, k0, k1)
		if u != Philox4x32(c, k0, k1) || v != Philox4x32(d, k0, k1) {
			t.Fatalf("Philox4x32x2 differs from two blocks")
		}
	}
}

func TestU128(t *testing.T) {
	c := U128{Lo: ^uint64(0), Hi: 7}.Add(2)
	if c != (U128{Lo: 1, Hi: 8}) {
		t.Fatalf("carry: got %+v", c)
	}
	if w := (U128{Lo: 0x0000000200000001, Hi: 0x0000000400000003}).Words(); w != [4]uint32{1, 2, 3, 4} {
		t.Fatalf("words %v", w)
	}
}

// XLA splits at the first even dimension, else at the first of the
// largest (hand-worked).
func TestThreefrySplitDim(t *testing.T) {
	for _, c := range []struct {
		dims []int64
		want int
	}{{[]int64{3, 5, 4, 6}, 2}, {[]int64{3, 7, 5, 7}, 1}, {[]int64{9}, 0}, {nil, 0}} {
		if got := ThreefrySplitDim(c.dims); got != c.want {
			t.Errorf("ThreefrySplitDim(%v) = %d, want %d", c.dims, got, c.want)
		}
	}
}
