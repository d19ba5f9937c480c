package kernels

// bluestein is a DFT of any length n as a cyclic convolution of length
// M (a power of two ≥ 2n-1): with the chirp c_t = exp(-πi·t²/n),
// X_k = c_k · Σ_t (x_t·c_t)·conj(c_(k-t)), since t·k = (t²+k²-(k-t)²)/2.
// The convolution kernel's transform is computed once, in float64, with
// the 1/M of the inverse transform folded in.
type bluestein[F float32 | float64] struct {
	n, m   int
	sub    *FFTPlan[F]
	cr, ci []F // chirp c_t, t < n
	hr, hi []F // FFT_M of conj(c) wrapped cyclically, divided by M
}

func newBluestein[F float32 | float64](n int) *bluestein[F] {
	m := 1
	for m < 2*n-1 {
		m *= 2
	}
	b := &bluestein[F]{n: n, m: m, sub: NewFFTPlan[F](m), cr: make([]F, n), ci: make([]F, n)}
	kr, ki := make([]float64, m), make([]float64, m)
	for t := range n {
		// t² mod 2n keeps the angle exact for any n.
		c, s := UnitRoot(t*t%(2*n), 2*n)
		b.cr[t], b.ci[t] = F(c), F(s)
		kr[t], ki[t] = c, -s
		if t > 0 {
			kr[m-t], ki[m-t] = c, -s
		}
	}
	NewFFTPlan[float64](m).Transform(kr, ki, 1, make([]float64, 2*m))
	b.hr, b.hi = make([]F, m), make([]F, m)
	for i := range m {
		b.hr[i], b.hi[i] = F(kr[i]/float64(m)), F(ki[i]/float64(m))
	}
	return b
}

func (b *bluestein[F]) scratchLen(batch int) int {
	return 2*b.m*batch + b.sub.ScratchLen(batch)
}

func (b *bluestein[F]) transform(re, im []F, batch int, scratch []F) {
	mb, nb := b.m*batch, b.n*batch
	ar, ai := scratch[:mb], scratch[mb:2*mb]
	rest := scratch[2*mb:]
	chirp := func(dr, di, xr, xi []F) {
		for t := range b.n {
			cr, ci := b.cr[t], b.ci[t]
			o := t * batch
			for q := o; q < o+batch; q++ {
				dr[q], di[q] = twiddle(xr[q], xi[q], cr, ci)
			}
		}
	}
	chirp(ar, ai, re, im)
	clear(ar[nb:])
	clear(ai[nb:])
	b.sub.Transform(ar, ai, batch, rest)
	for t := range b.m {
		hr, hi := b.hr[t], b.hi[t]
		o := t * batch
		for q := o; q < o+batch; q++ {
			ar[q], ai[q] = twiddle(ar[q], ai[q], hr, hi)
		}
	}
	b.sub.Transform(ai, ar, batch, rest) // the inverse, by swapping parts
	chirp(re, im, ar, ai)
}
