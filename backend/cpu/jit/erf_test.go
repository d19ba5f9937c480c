//go:build linux && amd64 && !purego

package jit

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// TestErfMatchesKernel runs erf's generated code (both branches and their
// blend) over every 2^11-th float32 bit pattern, a dense walk across the
// branch point 1 and the cap 4, and the specials, against kernels.ErfF32:
// the same bits everywhere.
func TestErfMatchesKernel(t *testing.T) { bothWidths(t, testErfMatchesKernel) }

func testErfMatchesKernel(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	var x []float32
	for i := uint64(0); i < 1<<32; i += 1 << 11 {
		x = append(x, math.Float32frombits(uint32(i)|uint32(i>>13)&0x7ff))
	}
	for _, c := range []float32{1, 4, -1, -4} {
		b := math.Float32bits(c)
		for d := uint32(0); d < 64; d++ {
			x = append(x, math.Float32frombits(b-d), math.Float32frombits(b+d))
		}
	}
	x = append(x, specials...)
	p := &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: Erf}}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, len(x))
	kernels.ErfF32(want, x)
	got := make([]float32, len(x))
	f.Run(f32s(got), f32s(x), nil, false)
	sameBits(t, "erf", got, want)
	// A few values against package math's, rounded to float32.
	for _, v := range []float32{1, -1, 0.5, 3, 1e-3} {
		x, y := []float32{v}, []float32{0}
		f.Run(f32s(y), f32s(x), nil, false)
		if w := float32(math.Erf(float64(v))); y[0] != w {
			t.Errorf("erf(%v) = %v, want %v", v, y[0], w)
		}
	}
}
