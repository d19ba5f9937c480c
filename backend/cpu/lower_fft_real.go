package cpu

import "github.com/axle-ml/axle/backend/cpu/kernels"

// RFFT's and IRFFT's last axis, when its length L is even, run as a
// complex transform of half the length: the real row x packed as
// z_t = x_2t + i·x_2t+1 (t < h = L/2) has Z = FFT_h(z) = E + i·O, where
// E and O are the transforms of the even and odd samples, and
// X_k = E_k + w^k·O_k with w = exp(-2πi/L). Both directions cost half a
// full complex transform of length L.
//
// IRFFT inverts that from the Hermitian spectrum the evaluator builds.
// The evaluator keeps the real part of a complex inverse, in which the
// imaginary parts of X_0 and X_h contribute nothing (they multiply
// sin(0) and sin(πj)); the packing would mix them in, so it drops them.

// packRealPass turns the plain last-axis pass p of an RFFT (forward) or
// IRFFT (inverse) of even length l into its half-length form.
func packRealPass[F float32 | float64](b *fftPlanner[F], p fftPass[F], l int, inverse bool) fftPass[F] {
	h := l / 2
	p.plan = b.plan(h)
	p.wr, p.wi = make([]F, h+1), make([]F, h+1)
	for k := range h + 1 {
		c, s := kernels.UnitRoot(k, l)
		p.wr[k], p.wi[k] = F(c), F(s)
	}
	if inverse {
		p.in, p.out, p.scale = fftHermitianPairs, fftRealPairs, F(1/float64(h))
	} else {
		p.in, p.out = fftRealPairs, fftHalfSpectrum
	}
	p.work /= 2
	return p
}

// gatherPairs packs the real row x (length 2h) as h complex values.
func gatherPairs[F float32 | float64](x []F, h, b, nb int, re, im []F) {
	for t := range h {
		re[t*nb+b], im[t*nb+b] = x[2*t], x[2*t+1]
	}
}

// scatterHalfSpectrum unpacks Z into X_0..X_h, interleaved into y.
func scatterHalfSpectrum[F float32 | float64](p *fftPass[F], y []F, b, nb int, re, im []F) {
	h := len(p.wr) - 1
	for k := range h + 1 {
		i, j := k%h*nb+b, (h-k)%h*nb+b
		zr, zi := re[i], im[i]
		cr, ci := re[j], -im[j] // conj(Z_(h-k))
		er, ei := (zr+cr)/2, (zi+ci)/2
		or, oi := (zi-ci)/2, -(zr-cr)/2 // (Z_k - conj(Z_(h-k)))/2i
		wr, wi := p.wr[k], p.wi[k]
		y[2*k], y[2*k+1] = er+or*wr-oi*wi, ei+or*wi+oi*wr
	}
}

// gatherHermitianPairs builds Z_0..Z_h-1 from the half spectrum x (of
// any length, as gatherHermitian reads it) for the inverse transform.
func gatherHermitianPairs[F float32 | float64](p *fftPass[F], x []F, b, nb int, re, im []F) {
	h := len(p.wr) - 1
	have := len(x) / 2
	// spectrum is X_k for k ≤ h: what the evaluator's extension puts
	// there (x[k], or zero past a short x: its conj(x[L-k]) case only
	// reaches k > h), without the imaginary parts that drop out at 0 and h.
	spectrum := func(k int) (F, F) {
		var xr, xi F
		if k < have {
			xr, xi = x[2*k], x[2*k+1]
		}
		if k == 0 || k == h {
			xi = 0
		}
		return xr, xi
	}
	for k := range h {
		xr, xi := spectrum(k)
		cr, ci := spectrum(h - k)
		ci = -ci
		er, ei := (xr+cr)/2, (xi+ci)/2
		dr, di := (xr-cr)/2, (xi-ci)/2
		wr, wi := p.wr[k], -p.wi[k] // conj(w^k)
		or, oi := dr*wr-di*wi, dr*wi+di*wr
		re[k*nb+b], im[k*nb+b] = er-oi, ei+or // E + i·O
	}
}

// scatterPairs unpacks z back into the real row y (length 2h).
func scatterPairs[F float32 | float64](y []F, scale F, b, nb int, re, im []F) {
	for t := range len(y) / 2 {
		y[2*t], y[2*t+1] = re[t*nb+b]*scale, im[t*nb+b]*scale
	}
}
