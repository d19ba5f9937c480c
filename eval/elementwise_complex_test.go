package eval_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/eval"
)

// A bitcast moves bits, never values: a c64 holding a signaling NaN
// (0x7F800001, which a float32 → float64 conversion would quiet) and a
// negative zero comes back from c128 unchanged.
func TestBitcastComplexKeepsBits(t *testing.T) {
	snan := math.Float32frombits(0x7F800001)
	in := laLit(t, []complex64{complex(snan, float32(math.Copysign(0, -1))), complex(1, 2)}, 2)
	got := laRunHLO(t, ewModule(`  a = c64[2] parameter(0)
  b = c128[] bitcast-convert(a)
  ROOT c = c64[2] bitcast-convert(b)`), in)
	for i, w := range [][2]uint32{{0x7F800001, 0x80000000}, {0x3F800000, 0x40000000}} {
		z := got.Data().([]complex64)[i]
		if math.Float32bits(real(z)) != w[0] || math.Float32bits(imag(z)) != w[1] {
			t.Errorf("element %d: bits %#x, %#x, want %#x, %#x", i, math.Float32bits(real(z)), math.Float32bits(imag(z)), w[0], w[1])
		}
	}
}

// On the real axis the spec's complex atan2 is the real one: for y = -3,
// x = -4, (x + iy)/5 = e^(i·atan2(-3, -4)), whose log is i times the angle.
func TestComplexAtan2OnRealsIsAtan2(t *testing.T) {
	for _, c := range [][2]float64{{-3, -4}, {1, 1}, {2, -0.5}, {-1, 3}} {
		got := eval.ComplexAtan2(complex(c[0], 0), complex(c[1], 0))
		if want := math.Atan2(c[0], c[1]); math.Abs(real(got)-want) > 1e-15 || math.Abs(imag(got)) > 1e-15 {
			t.Errorf("ComplexAtan2(%v, %v) = %v, want %v", c[0], c[1], got, want)
		}
	}
}
