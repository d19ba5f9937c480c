package cpu

import "github.com/axle-ml/axle/backend/cpu/kernels"

// The run time of an fft pass: chunks of lines gathered into the plan's
// split, batched layout, transformed, scattered back. src and dst may be
// the same buffer: a chunk reads and writes only its own lines.

func (p *fftPass[F]) run(src, dst []F, threads int) {
	chunks := (p.lines + p.batch - 1) / p.batch
	workers := 1
	if threads > 1 && p.work >= kernels.MinParallelWork {
		workers = min(threads, chunks)
	}
	if workers <= 1 {
		p.chunks(src, dst, 0, chunks)
		return
	}
	kernels.Parallel(workers, func(t int) {
		p.chunks(src, dst, t*chunks/workers, (t+1)*chunks/workers)
	})
}

// chunks transforms chunks [c0, c1), with scratch of its own (workers
// run concurrently, and so may calls of one executable).
func (p *fftPass[F]) chunks(src, dst []F, c0, c1 int) {
	n := p.plan.Len()
	re, im := make([]F, n*p.batch), make([]F, n*p.batch)
	scratch := make([]F, p.plan.ScratchLen(p.batch))
	for c := c0; c < c1; c++ {
		l0 := c * p.batch
		nb := min(p.batch, p.lines-l0)
		r, i := re[:n*nb], im[:n*nb]
		p.gather(src, l0, nb, r, i)
		if p.inverse {
			p.plan.Transform(i, r, nb, scratch) // parts swapped: the inverse
		} else {
			p.plan.Transform(r, i, nb, scratch)
		}
		p.scatter(dst, l0, nb, r, i)
	}
}

// base is where line l starts, in elements, in a buffer whose lines
// along the axis are length long.
func (p *fftPass[F]) base(l, length int) int {
	return l/p.inner*length*p.inner + l%p.inner
}

func (p *fftPass[F]) gather(src []F, l0, nb int, re, im []F) {
	n, st := p.plan.Len(), p.inner
	for b := range nb {
		base := p.base(l0+b, p.srcN)
		switch p.in {
		case fftComplex:
			for t := range n {
				e := 2 * (base + t*st)
				re[t*nb+b], im[t*nb+b] = src[e], src[e+1]
			}
		case fftReal:
			for t := range n {
				re[t*nb+b], im[t*nb+b] = src[base+t*st], 0
			}
		case fftHermitian:
			p.gatherHermitian(src[2*base:2*(base+p.srcN)], n, b, nb, re, im)
		case fftRealPairs:
			gatherPairs(src[base:base+p.srcN], n, b, nb, re, im)
		case fftHermitianPairs:
			gatherHermitianPairs(p, src[2*base:2*(base+p.srcN)], b, nb, re, im)
		}
	}
}

// gatherHermitian extends a half spectrum x (interleaved, of any length)
// to n elements as the evaluator does: x[k] for k ≤ n/2 it has,
// conj(x[n-k]) above, zero where x is too short.
func (p *fftPass[F]) gatherHermitian(x []F, n, b, nb int, re, im []F) {
	have := len(x) / 2
	for k := range n {
		var xr, xi F
		switch {
		case k < have && 2*k <= n:
			xr, xi = x[2*k], x[2*k+1]
		case n-k < have:
			xr, xi = x[2*(n-k)], -x[2*(n-k)+1]
		}
		re[k*nb+b], im[k*nb+b] = xr, xi
	}
}

func (p *fftPass[F]) scatter(dst []F, l0, nb int, re, im []F) {
	st, s := p.inner, p.scale
	for b := range nb {
		base := p.base(l0+b, p.dstN)
		switch p.out {
		case fftComplex:
			for t := range p.dstN {
				e := 2 * (base + t*st)
				dst[e], dst[e+1] = re[t*nb+b]*s, im[t*nb+b]*s
			}
		case fftReal:
			for t := range p.dstN {
				dst[base+t*st] = re[t*nb+b] * s
			}
		case fftHalfSpectrum:
			scatterHalfSpectrum(p, dst[2*base:2*(base+p.dstN)], b, nb, re, im)
		case fftRealPairs:
			scatterPairs(dst[base:base+p.dstN], s, b, nb, re, im)
		}
	}
}
