package kernels

// The Stockham passes. A pass over sequences of length n = p·m at stride s
// reads group j's p inputs at x[s·(j+r·m)+q] and writes its p outputs,
// twiddled by w^(j·k) with w = exp(-2πi/n), to y[s·(p·j+k)+q]; the next
// pass sees sequences of length m at stride s·p. q runs over the batch
// (and, after the first pass, over the groups already split off), so
// every inner loop is a unit-stride run of length s.

// twiddle returns (xr + i·xi)·(wr + i·wi).
func twiddle[F float32 | float64](xr, xi, wr, wi F) (F, F) {
	return xr*wr - xi*wi, xr*wi + xi*wr
}

func radix2[F float32 | float64](st *fftStage[F], s int, xr, xi, yr, yi []F) {
	m := st.m
	for j := range m {
		wr, wi := st.twr[j], st.twi[j]
		a, b, c, d := s*j, s*(j+m), s*2*j, s*(2*j+1)
		ar, ai := xr[a:a+s], xi[a:a+s]
		br, bi := xr[b:b+s], xi[b:b+s]
		cr, ci := yr[c:c+s], yi[c:c+s]
		dr, di := yr[d:d+s], yi[d:d+s]
		for q := range ar {
			ur, ui := ar[q], ai[q]
			vr, vi := br[q], bi[q]
			cr[q], ci[q] = ur+vr, ui+vi
			dr[q], di[q] = twiddle(ur-vr, ui-vi, wr, wi)
		}
	}
}

func radix4[F float32 | float64](st *fftStage[F], s int, xr, xi, yr, yi []F) {
	if s == 1 {
		radix4Unit(st, xr, xi, yr, yi)
		return
	}
	m := st.m
	for j := range m {
		tw := 3 * j
		w1r, w1i := st.twr[tw], st.twi[tw]
		w2r, w2i := st.twr[tw+1], st.twi[tw+1]
		w3r, w3i := st.twr[tw+2], st.twi[tw+2]
		i0, i1, i2, i3 := s*j, s*(j+m), s*(j+2*m), s*(j+3*m)
		a0r, a0i := xr[i0:i0+s], xi[i0:i0+s]
		a1r, a1i := xr[i1:i1+s], xi[i1:i1+s]
		a2r, a2i := xr[i2:i2+s], xi[i2:i2+s]
		a3r, a3i := xr[i3:i3+s], xi[i3:i3+s]
		o := s * 4 * j
		b0r, b0i := yr[o:o+s], yi[o:o+s]
		b1r, b1i := yr[o+s:o+2*s], yi[o+s:o+2*s]
		b2r, b2i := yr[o+2*s:o+3*s], yi[o+2*s:o+3*s]
		b3r, b3i := yr[o+3*s:o+4*s], yi[o+3*s:o+4*s]
		for q := range a0r {
			t0r, t0i := a0r[q]+a2r[q], a0i[q]+a2i[q]
			t1r, t1i := a0r[q]-a2r[q], a0i[q]-a2i[q]
			t2r, t2i := a1r[q]+a3r[q], a1i[q]+a3i[q]
			t3r, t3i := a1r[q]-a3r[q], a1i[q]-a3i[q]
			b0r[q], b0i[q] = t0r+t2r, t0i+t2i
			// b1 = t1 - i·t3, b3 = t1 + i·t3 (exp(-2πi/4) = -i).
			b1r[q], b1i[q] = twiddle(t1r+t3i, t1i-t3r, w1r, w1i)
			b2r[q], b2i[q] = twiddle(t0r-t2r, t0i-t2i, w2r, w2i)
			b3r[q], b3i[q] = twiddle(t1r-t3i, t1i+t3r, w3r, w3i)
		}
	}
}

// radix4Unit is radix4 at stride 1 (the first pass of a lone sequence),
// where re-slicing the eight runs for every one-element group would cost
// more than the butterfly.
func radix4Unit[F float32 | float64](st *fftStage[F], xr, xi, yr, yi []F) {
	m := st.m
	x0r, x0i := xr[:m], xi[:m]
	x1r, x1i := xr[m:2*m], xi[m:2*m]
	x2r, x2i := xr[2*m:3*m], xi[2*m:3*m]
	x3r, x3i := xr[3*m:4*m], xi[3*m:4*m]
	twr, twi := st.twr[:3*m], st.twi[:3*m]
	yr, yi = yr[:4*m], yi[:4*m]
	for j := range x0r {
		t0r, t0i := x0r[j]+x2r[j], x0i[j]+x2i[j]
		t1r, t1i := x0r[j]-x2r[j], x0i[j]-x2i[j]
		t2r, t2i := x1r[j]+x3r[j], x1i[j]+x3i[j]
		t3r, t3i := x1r[j]-x3r[j], x1i[j]-x3i[j]
		o, w := 4*j, 3*j
		yr[o], yi[o] = t0r+t2r, t0i+t2i
		yr[o+1], yi[o+1] = twiddle(t1r+t3i, t1i-t3r, twr[w], twi[w])
		yr[o+2], yi[o+2] = twiddle(t0r-t2r, t0i-t2i, twr[w+1], twi[w+1])
		yr[o+3], yi[o+3] = twiddle(t1r-t3i, t1i+t3r, twr[w+2], twi[w+2])
	}
}

// sqrt3Half is √3/2, the imaginary part of exp(∓2πi/3) up to sign.
const sqrt3Half = 0.86602540378443864676372317075293618

func radix3[F float32 | float64](st *fftStage[F], s int, xr, xi, yr, yi []F) {
	m := st.m
	h := F(sqrt3Half)
	for j := range m {
		tw := 2 * j
		w1r, w1i := st.twr[tw], st.twi[tw]
		w2r, w2i := st.twr[tw+1], st.twi[tw+1]
		i0, i1, i2 := s*j, s*(j+m), s*(j+2*m)
		a0r, a0i := xr[i0:i0+s], xi[i0:i0+s]
		a1r, a1i := xr[i1:i1+s], xi[i1:i1+s]
		a2r, a2i := xr[i2:i2+s], xi[i2:i2+s]
		o := s * 3 * j
		b0r, b0i := yr[o:o+s], yi[o:o+s]
		b1r, b1i := yr[o+s:o+2*s], yi[o+s:o+2*s]
		b2r, b2i := yr[o+2*s:o+3*s], yi[o+2*s:o+3*s]
		for q := range a0r {
			sr, si := a1r[q]+a2r[q], a1i[q]+a2i[q]
			dr, di := h*(a1r[q]-a2r[q]), h*(a1i[q]-a2i[q])
			cr, ci := a0r[q]-sr/2, a0i[q]-si/2
			b0r[q], b0i[q] = a0r[q]+sr, a0i[q]+si
			// b1 = c - i·(√3/2)·d, b2 = c + i·(√3/2)·d.
			b1r[q], b1i[q] = twiddle(cr+di, ci-dr, w1r, w1i)
			b2r[q], b2i[q] = twiddle(cr-di, ci+dr, w2r, w2i)
		}
	}
}

// radixP is the direct p-point DFT butterfly for the other primes.
func radixP[F float32 | float64](st *fftStage[F], s int, xr, xi, yr, yi []F) {
	p, m := st.p, st.m
	var ar, ai [maxDirectRadix]F
	for j := range m {
		for q := range s {
			for r := range p {
				ar[r], ai[r] = xr[s*(j+r*m)+q], xi[s*(j+r*m)+q]
			}
			for k := range p {
				var sr, si F
				w := 0 // (r·k) mod p, stepped without a division
				for r := range p {
					vr, vi := twiddle(ar[r], ai[r], st.wr[w], st.wi[w])
					sr += vr
					si += vi
					if w += k; w >= p {
						w -= p
					}
				}
				if k > 0 {
					sr, si = twiddle(sr, si, st.twr[j*(p-1)+k-1], st.twi[j*(p-1)+k-1])
				}
				yr[s*(p*j+k)+q], yi[s*(p*j+k)+q] = sr, si
			}
		}
	}
}
