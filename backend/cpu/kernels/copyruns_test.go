package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// CopyRuns against an element loop for elements of 1 to 16 bytes, runs of
// every length up to 80 elements (each width of the kernel's moves, and
// the lengths between, where the last move overlaps the one before),
// strides past the run and equal to it, one row and many: every run's
// bytes land, and nothing between or after the runs is written.
func TestCopyRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	testCopyRuns[uint8](t, rng)
	testCopyRuns[uint16](t, rng)
	testCopyRuns[uint32](t, rng)
	testCopyRuns[uint64](t, rng)
	testCopyRuns[[2]uint64](t, rng)
}

func testCopyRuns[W comparable](t *testing.T, rng *rand.Rand) {
	size := int(unsafe.Sizeof(*new(W)))
	fill := func(w []W) { // random bytes
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*size)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
	}
	for n := 1; n <= 80; n++ {
		for _, rows := range []int{1, 2, 7} {
			for _, gap := range []int{0, 1, 5} {
				ds, ss := n+gap, n+2*gap+rng.IntN(3)
				name := fmt.Sprintf("%d-byte elements, runs of %d, %d rows, strides %d, %d", size, n, rows, ds, ss)
				d, s := 3, 2
				src := make([]W, s+(rows-1)*ss+n+4)
				dst := make([]W, d+(rows-1)*ds+n+4)
				fill(src)
				fill(dst)
				want := append([]W(nil), dst...)
				for r := range rows {
					copy(want[d+r*ds:][:n], src[s+r*ss:][:n])
				}
				ok := CopyRuns(dst, src, d, s, rows, n, ds, ss)
				if wantOK := useAsm && n*size >= 4; ok != wantOK {
					t.Fatalf("%s: CopyRuns reports %v", name, ok)
				}
				if !ok {
					continue
				}
				for i := range dst {
					if dst[i] != want[i] {
						t.Fatalf("%s: element %d is %v, want %v", name, i, dst[i], want[i])
					}
				}
			}
		}
	}
}
