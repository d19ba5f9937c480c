package kernels

import "math"

// FFTPlan is a complex discrete Fourier transform of one length, planned
// once: a Stockham autosort FFT (natural order in and out, no
// bit-reversal pass) of radix-4, 2 and 3 stages plus a direct radix-p
// stage for the other small primes, or Bluestein's chirp-z algorithm over
// a power-of-two FFT when the length has a prime factor too large for a
// direct stage. Twiddles are computed in float64 (with exact integer
// angle reduction) and rounded once to F, as accurate libraries do, so
// F=float32 loses only the rounding of its own arithmetic.
//
// Data is split (real and imaginary parts in separate slices) so the
// butterflies are plain float arithmetic, and batched: Transform runs B
// independent transforms whose element t of sequence b sits at t*B+b.
// That layout is Stockham's own stride, so a batch costs no more
// bookkeeping than one sequence and inner loops run over b.
//
// Only the forward transform is planned: the inverse of (re, im) is the
// forward transform of (im, re) (swapping parts conjugates and multiplies
// by i, which the transform carries through), without the 1/n.
type FFTPlan[F float32 | float64] struct {
	n      int
	stages []fftStage[F]
	blue   *bluestein[F]
}

// fftStage is one Stockham pass: p-point butterflies over m groups, each
// output k of group j multiplied by w^(j*k) (tw holds j-major, k=1..p-1).
type fftStage[F float32 | float64] struct {
	p, m     int
	twr, twi []F
	// wr, wi are the p-th roots of unity for a direct radix-p butterfly.
	wr, wi []F
}

// maxDirectRadix is the largest prime factor done by a direct O(p²)
// butterfly; beyond it Bluestein (three FFTs of a power of two ≥ 2n-1)
// costs less.
const maxDirectRadix = 61

// NewFFTPlan plans the length-n transform (n ≥ 0).
func NewFFTPlan[F float32 | float64](n int) *FFTPlan[F] {
	pl := &FFTPlan[F]{n: n}
	if n <= 1 {
		return pl
	}
	radices, ok := fftFactors(n)
	if !ok {
		pl.blue = newBluestein[F](n)
		return pl
	}
	rest := n // the length each stage's sequences have
	for _, p := range radices {
		pl.stages = append(pl.stages, newFFTStage[F](p, rest))
		rest /= p
	}
	return pl
}

// Len is the transform length.
func (pl *FFTPlan[F]) Len() int { return pl.n }

// fftFactors splits n into stage radices (4s first, then at most one 2,
// then odd primes), or reports false when a prime factor exceeds
// maxDirectRadix.
func fftFactors(n int) ([]int, bool) {
	var r []int
	for n%4 == 0 {
		r = append(r, 4)
		n /= 4
	}
	if n%2 == 0 {
		r = append(r, 2)
		n /= 2
	}
	for p := 3; p <= maxDirectRadix && n > 1; p += 2 {
		for n%p == 0 {
			r = append(r, p)
			n /= p
		}
	}
	return r, n == 1
}

// newFFTStage plans a radix-p pass over sequences of length n.
func newFFTStage[F float32 | float64](p, n int) fftStage[F] {
	m := n / p
	st := fftStage[F]{p: p, m: m, twr: make([]F, m*(p-1)), twi: make([]F, m*(p-1))}
	for j := range m {
		for k := 1; k < p; k++ {
			c, s := UnitRoot(j*k, n)
			st.twr[j*(p-1)+k-1], st.twi[j*(p-1)+k-1] = F(c), F(s)
		}
	}
	if p != 2 && p != 3 && p != 4 {
		st.wr, st.wi = make([]F, p), make([]F, p)
		for k := range p {
			c, s := UnitRoot(k, p)
			st.wr[k], st.wi[k] = F(c), F(s)
		}
	}
	return st
}

// UnitRoot is exp(-2πi·t/n) in float64. The angle is reduced exactly in
// integers to the nearest quarter turn plus a remainder of at most π/4,
// so large t/n lose nothing to a rounded 2π·t/n.
func UnitRoot(t, n int) (c, s float64) {
	t %= n
	if t < 0 {
		t += n
	}
	q := (4*t + n/2) / n // nearest quarter turn
	r := 4*t - q*n       // remainder, in units of a quarter turn / n
	sx, cx := math.Sincos(math.Pi / 2 * float64(r) / float64(n))
	switch q & 3 {
	case 0:
		c, s = cx, sx
	case 1:
		c, s = -sx, cx
	case 2:
		c, s = -cx, -sx
	default:
		c, s = sx, -cx
	}
	return c, -s
}

// ScratchLen is how many F values Transform needs as scratch for a batch.
func (pl *FFTPlan[F]) ScratchLen(batch int) int {
	if pl.blue != nil {
		return pl.blue.scratchLen(batch)
	}
	return 2 * pl.n * batch
}

// Transform replaces the batch sequences in (re, im), each of length
// Len() at stride batch, by their forward DFTs X_k = Σ_t x_t·exp(-2πi·tk/n).
// scratch must hold ScratchLen(batch) values.
func (pl *FFTPlan[F]) Transform(re, im []F, batch int, scratch []F) {
	if pl.blue != nil {
		pl.blue.transform(re, im, batch, scratch)
		return
	}
	if len(pl.stages) == 0 {
		return
	}
	size := pl.n * batch
	xr, xi := re[:size], im[:size]
	yr, yi := scratch[:size], scratch[size:2*size]
	s := batch
	for i := range pl.stages {
		st := &pl.stages[i]
		switch st.p {
		case 4:
			radix4(st, s, xr, xi, yr, yi)
		case 2:
			radix2(st, s, xr, xi, yr, yi)
		case 3:
			radix3(st, s, xr, xi, yr, yi)
		default:
			radixP(st, s, xr, xi, yr, yi)
		}
		xr, xi, yr, yi = yr, yi, xr, xi
		s *= st.p
	}
	if len(pl.stages)%2 == 1 {
		copy(re[:size], xr)
		copy(im[:size], xi)
	}
}
