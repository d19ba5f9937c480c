package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/cbrng"
)

// PhiloxWords against cbrng.Philox4x32 block by block: random keys and
// counters, lengths that end inside a group and inside a block, and
// counters whose first word wraps inside the run (the vector kernel steps
// only that word), with the assembly and without.
func TestPhiloxWords(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(41, 42))
		for trial := range 200 {
			k0, k1 := rng.Uint32(), rng.Uint32()
			ctr := cbrng.U128{Lo: rng.Uint64(), Hi: rng.Uint64()}
			switch trial % 4 {
			case 1: // the first word wraps within the run
				ctr.Lo = ctr.Lo&^0xffffffff | uint64(0xffffffff-uint32(rng.IntN(40)))
			case 2: // the whole low half wraps, carrying into the high one
				ctr.Lo = ^uint64(rng.IntN(40))
			}
			n := rng.IntN(400)
			w := make([]uint32, n+1)
			w[n] = 0xdeadbeef
			PhiloxWords(k0, k1, ctr, w[:n])
			for i := range n {
				want := cbrng.Philox4x32(ctr.Add(uint64(i/4)).Words(), k0, k1)[i%4]
				if w[i] != want {
					t.Fatalf("trial %d (n %d, counter %#x): word %d = %#x, want %#x", trial, n, ctr, i, w[i], want)
				}
			}
			if w[n] != 0xdeadbeef {
				t.Fatalf("trial %d: wrote past the end", trial)
			}
		}
	})
}

func BenchmarkPhiloxWords(b *testing.B) {
	w := make([]uint32, 1<<16)
	b.SetBytes(4 << 16)
	for b.Loop() {
		PhiloxWords(1, 2, cbrng.U128{Lo: 3}, w)
	}
}
