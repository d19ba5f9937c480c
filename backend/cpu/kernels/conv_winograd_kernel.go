package kernels

import (
	"fmt"
	"math"
	"slices"
)

// The kernel side of Winograd convolutions (conv_winograd.go): G g Gᵀ
// for every pair of channels, packed for the GEMM, kept per constant.

// TransformWinograd transforms convolution p's 3×3 kernel (read through
// p's kernel strides) for the F(m×m, 3×3) that p runs on (winoTile) and
// packs it.
func TransformWinograd(p *Conv, kernel []float32) (*WinogradKernel, error) {
	return transformWinograd(p, kernel, 1)
}

// transformWinograd is TransformWinograd on threads: the input channels'
// transforms, then the matrices' packing, split between them. A model's
// first call transforms every 3×3 kernel it has (ResNet-50 at half
// width: 230 thousand 3×3 kernels, 2.25 million transformed values).
func transformWinograd(p *Conv, kernel []float32, threads int) (*WinogradKernel, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if !winogradShape(p) {
		return nil, fmt.Errorf("kernels: TransformWinograd: not a 3×3 convolution of one group")
	}
	c, k := p.InChannels, p.OutChannels
	if len(kernel) <= kernelTapOffset(p, 8)+(c-1)*p.KernelInStride+(k-1)*p.KernelOutStride {
		return nil, fmt.Errorf("kernels: TransformWinograd: a kernel of %d values for %d×%d channels", len(kernel), c, k)
	}
	m := winoTile(p)
	n2 := winoPoints(m)
	w := &WinogradKernel{m: m, c: c, k: k, packed: make([]*PackedB, n2)}
	kp := winoPaddedK(k)
	w.kp = kp
	us := make([]float32, n2*c*kp) // (the padding columns zero)
	if n2*c*k < winoTransformSplit {
		threads = 1
	}
	threads = max(1, min(threads, c))
	most := make([]uint32, threads)
	parallel(threads, func(t int) {
		most[t] = winoKernelRows(p, kernel, m, us, kp, t*c/threads, (t+1)*c/threads)
	})
	w.safe = slices.Max(most) < winoSafeBits
	errs := make([]error, n2)
	packers := min(threads, n2)
	parallel(packers, func(t int) {
		for xi := t; xi < n2; xi += packers {
			w.packed[xi], errs[xi] = PackBF32(c, kp, Strided[float32]{Data: us[xi*c*kp:], Row: kp, Col: 1})
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

// winoPaddedK is the columns of a transformed kernel of k output channels:
// whole pairs of B slivers, the direct kernels' width, so that a last
// range of channels short of a pair may run on them over zero columns
// (productWidth).
func winoPaddedK(k int) int { return (k + 2*sgemmNR - 1) / (2 * sgemmNR) * (2 * sgemmNR) }

// winoTransformSplit is the fewest transformed values a kernel transform
// splits over threads for.
const winoTransformSplit = 1 << 16

// winoKernelRows writes U_ξ[ci][co] = (G g Gᵀ)_ξ of kernel (ci, co) into
// us (a² matrices of C×kp, kp ≥ K) for input channels [c0, c1), runs of up to 64
// output channels at a time (what they take stays in L1): the kernels'
// nine rows gathered, G applied down them, Gᵀ along, in float64 (terms
// with a zero coefficient left out), each value rounded once to f32. It
// returns the largest of the kernel values' magnitudes as bits
// (absMaxBits).
func winoKernelRows(p *Conv, kernel []float32, m int, us []float32, kp, c0, c1 int) uint32 {
	var most uint32
	const run = 64
	G := winoG[m]
	a, c, k := len(G), p.InChannels, p.OutChannels
	taps := kernelTapOffsets(p, 9)
	var g [9][run]float64
	var t [6][3][run]float64 // G g
	for ci := c0; ci < c1; ci++ {
		for co0 := 0; co0 < k; co0 += run {
			n := min(run, k-co0)
			for co := range n {
				base := ci*p.KernelInStride + (co0+co)*p.KernelOutStride
				for tap, off := range taps {
					v := kernel[base+off]
					most = max(most, math.Float32bits(v)&^(1<<31))
					g[tap][co] = float64(v)
				}
			}
			for i := range a {
				for j := range 3 {
					winoCombine(t[i][j][:n], G[i], g[j][:n], g[3+j][:n], g[6+j][:n])
				}
			}
			var row [run]float64
			for i := range a {
				for j := range a {
					winoCombine(row[:n], G[j], t[i][0][:n], t[i][1][:n], t[i][2][:n])
					dst := us[(i*a+j)*c*kp+ci*kp+co0:][:n]
					for co, v := range row[:n] {
						dst[co] = float32(v)
					}
				}
			}
		}
	}
	return most
}

// winoCombine sets dst = h0·r0 + h1·r1 + h2·r2, leaving out the terms
// whose coefficient is zero (a third of G's).
func winoCombine(dst []float64, h [3]float64, r0, r1, r2 []float64) {
	r0, r1, r2 = r0[:len(dst)], r1[:len(dst)], r2[:len(dst)]
	switch {
	case h[1] == 0 && h[2] == 0:
		for i := range dst {
			dst[i] = h[0] * r0[i]
		}
	case h[0] == 0 && h[1] == 0:
		for i := range dst {
			dst[i] = h[2] * r2[i]
		}
	default:
		for i := range dst {
			dst[i] = h[0]*r0[i] + h[1]*r1[i] + h[2]*r2[i]
		}
	}
}

// winoG is G of F(m×m, 3×3) for m = 2 and 4, rows of three.
var winoG = map[int][][3]float64{
	2: {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
	4: {{1. / 4, 0, 0}, {-1. / 6, -1. / 6, -1. / 6}, {-1. / 6, 1. / 6, -1. / 6},
		{1. / 24, 1. / 12, 1. / 6}, {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1}},
}

// winogradFor returns convolution p's transformed kernel: cache's, made
// on its first call, or made for this call where the kernel may change.
func (c *ConvKernelCache) winogradFor(p *Conv, kernel []float32, threads int) (*WinogradKernel, error) {
	if !c.keepsPanels() {
		return transformWinograd(p, kernel, threads)
	}
	c.mu.RLock()
	wk := c.wino
	c.mu.RUnlock()
	if wk != nil && wk.c == p.InChannels && wk.k == p.OutChannels {
		return wk, nil
	}
	if wk != nil { // the same array read as another convolution's kernel
		return transformWinograd(p, kernel, threads)
	}
	wk, err := transformWinograd(p, kernel, threads)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wino == nil {
		c.wino = wk
	}
	return c.wino, nil
}
