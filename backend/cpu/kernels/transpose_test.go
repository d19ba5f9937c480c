package kernels

import (
	"fmt"
	"testing"
	"unsafe"
)

// Every block shape of 1–19 rows and columns, with strides past the
// block (a tile of a larger transpose) and odd ones, for each word
// width, on the vector kernels and on the Go loop: each element lands
// where the definition puts it, and nothing outside the block is
// written.
func TestTranspose(t *testing.T) {
	modes := []bool{false}
	if useAsmVar != nil && *useAsmVar {
		modes = append(modes, true)
	}
	for _, asm := range modes {
		if useAsmVar != nil {
			defer func(v bool) { *useAsmVar = v }(*useAsmVar)
			*useAsmVar = asm
		}
		t.Run(fmt.Sprintf("asm=%v", asm), func(t *testing.T) {
			checkTranspose[uint8](t)
			checkTranspose[uint16](t)
			checkTranspose[float32](t)
			checkTranspose[uint64](t)
			checkTranspose[[2]uint64](t)
		})
	}
}

func checkTranspose[W any](t *testing.T) {
	mark := func(k int) W {
		// Distinct bit patterns per index in any width: k's bytes.
		var w W
		b := unsafe.Slice((*byte)(unsafe.Pointer(&w)), unsafe.Sizeof(w))
		for i := range b {
			b[i] = byte(k >> (8 * (i % 4)))
		}
		return w
	}
	for rows := 1; rows <= 19; rows++ {
		for cols := 1; cols <= 19; cols++ {
			for _, pad := range []int{0, 3, 8} {
				dr, sc := cols+pad, rows+2*pad+1
				src := make([]W, rows+(cols-1)*sc+pad)
				for k := range src {
					src[k] = mark(k + 1)
				}
				dst := make([]W, (rows-1)*dr+cols+pad)
				Transpose(dst, src, rows, cols, dr, sc)
				var zero W
				want := make([]W, len(dst))
				for i := range rows {
					for j := range cols {
						want[i*dr+j] = src[i+j*sc]
					}
				}
				for k := range dst {
					if any(dst[k]) != any(want[k]) {
						t.Fatalf("%T rows %d cols %d dr %d sc %d: dst[%d] = %v, want %v (zero %v)", zero, rows, cols, dr, sc, k, dst[k], want[k], zero)
					}
				}
			}
		}
	}
}
