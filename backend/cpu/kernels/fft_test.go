package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveDFT is the O(n²) definition in float64, with exactly reduced
// angles, for batch sequences at stride batch.
func naiveDFT(xr, xi []float64, n, batch int) (yr, yi []float64) {
	yr, yi = make([]float64, n*batch), make([]float64, n*batch)
	for b := range batch {
		for k := range n {
			var sr, si float64
			for t := range n {
				c, s := UnitRoot(t*k%n, n)
				sr += xr[t*batch+b]*c - xi[t*batch+b]*s
				si += xr[t*batch+b]*s + xi[t*batch+b]*c
			}
			yr[k*batch+b], yi[k*batch+b] = sr, si
		}
	}
	return yr, yi
}

// fftTolerance is the error allowed relative to the largest output
// magnitude: an FFT's rounding error grows like log2(n)·eps, and
// Bluestein's three transforms of length M < 4n add a few more.
func fftTolerance(n int, eps float64) float64 {
	return 4 * (math.Log2(float64(max(n, 2))) + 2) * eps
}

func checkPlan[F float32 | float64](t *testing.T, n, batch int, eps float64, rng *rand.Rand) {
	t.Helper()
	xr, xi := make([]float64, n*batch), make([]float64, n*batch)
	fr, fi := make([]F, n*batch), make([]F, n*batch)
	for i := range xr {
		fr[i], fi[i] = F(rng.NormFloat64()), F(rng.NormFloat64())
		xr[i], xi[i] = float64(fr[i]), float64(fi[i])
	}
	wr, wi := naiveDFT(xr, xi, n, batch)
	pl := NewFFTPlan[F](n)
	pl.Transform(fr, fi, batch, make([]F, pl.ScratchLen(batch)))
	scale := 0.0
	for i := range wr {
		scale = math.Max(scale, math.Hypot(wr[i], wi[i]))
	}
	tol := fftTolerance(n, eps) * scale
	for i := range wr {
		if d := math.Hypot(float64(fr[i])-wr[i], float64(fi[i])-wi[i]); !(d <= tol) {
			t.Fatalf("n=%d batch=%d %T: element %d is (%v,%v), want (%v,%v) (error %.3g, tolerance %.3g)",
				n, batch, fr[0], i, fr[i], fi[i], wr[i], wi[i], d, tol)
		}
	}
	// The inverse (by swapping parts) brings n times the input back, with
	// the error of two transforms relative to the largest input.
	pl.Transform(fi, fr, batch, make([]F, pl.ScratchLen(batch)))
	inScale := 0.0
	for i := range xr {
		inScale = math.Max(inScale, math.Hypot(xr[i], xi[i]))
	}
	for i := range xr {
		gr, gi := float64(fr[i])/float64(n), float64(fi[i])/float64(n)
		if d := math.Hypot(gr-xr[i], gi-xi[i]); !(d <= 2*fftTolerance(n, eps)*inScale) {
			t.Fatalf("n=%d %T: inverse element %d is (%v,%v), want (%v,%v)", n, fr[0], i, gr, gi, xr[i], xi[i])
		}
	}
}

// TestFFTPlanLengths checks every plan kind (radix 4/2/3, direct primes,
// Bluestein) against the definition, in both precisions and batched.
func TestFFTPlanLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lengths := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 30, 32, 45, 49, 59, 61, 64,
		67, 100, 127, 128, 134, 210, 243, 256, 343, 500, 512, 1000, 1009, 1024}
	for _, n := range lengths {
		for _, batch := range []int{1, 3} {
			checkPlan[float64](t, n, batch, 0x1p-53, rng)
			checkPlan[float32](t, n, batch, 0x1p-24, rng)
		}
	}
}

// TestFFTPlanPicksAlgorithm pins which lengths go to Bluestein.
func TestFFTPlanPicksAlgorithm(t *testing.T) {
	for n, blue := range map[int]bool{1024: false, 61 * 4: false, 67: true, 2 * 1009: true, 0: false, 1: false} {
		if got := NewFFTPlan[float32](n).blue != nil; got != blue {
			t.Errorf("n=%d: bluestein %v, want %v", n, got, blue)
		}
	}
}

func TestUnitRoot(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 12, 1000, 1 << 20} {
		for _, tt := range []int{0, 1, n / 8, n / 4, n / 3, n / 2, n - 1, 3 * n / 4, n + 1, -1} {
			c, s := UnitRoot(tt, n)
			a := -2 * math.Pi * float64(tt) / float64(n)
			if math.Abs(c-math.Cos(a)) > 1e-15 || math.Abs(s-math.Sin(a)) > 1e-15 {
				t.Errorf("UnitRoot(%d,%d) = (%v,%v), want (%v,%v)", tt, n, c, s, math.Cos(a), math.Sin(a))
			}
		}
	}
}

func BenchmarkFFTPlan1024(b *testing.B) {
	pl := NewFFTPlan[float32](1024)
	re, im := make([]float32, 1024), make([]float32, 1024)
	scratch := make([]float32, pl.ScratchLen(1))
	for i := range re {
		re[i] = float32(i % 7)
	}
	b.SetBytes(1024 * 8)
	for b.Loop() {
		pl.Transform(re, im, 1, scratch)
	}
}

func BenchmarkFFTPlanBatch(b *testing.B) {
	for _, batch := range []int{1, 4, 16} {
		b.Run(fmt.Sprint(batch), func(b *testing.B) {
			pl := NewFFTPlan[float32](1024)
			re, im := make([]float32, 1024*batch), make([]float32, 1024*batch)
			scratch := make([]float32, pl.ScratchLen(batch))
			b.SetBytes(int64(1024 * 8 * batch))
			for b.Loop() {
				pl.Transform(re, im, batch, scratch)
			}
		})
	}
}
