package kernels

// Transposed convolutions: a convolution over a dilated input (LhsDil >
// 1: the gradient of a strided convolution, ONNX's ConvTranspose, JAX's
// conv_transpose) computed as one matrix product and a gather. The
// product Y = x·W holds each input pixel's contribution to every tap of
// the output window it reaches, [pixels, taps·OutChannels]; each output
// pixel is then the sum of the contributions that land on it (col2im,
// as ONNX Runtime computes ConvTranspose). The convolution over the
// dilated input multiplies Π LhsDil zeros for every value it reads:
// HiFi-GAN's 8× upsamplings (kernel 16) ran at an eighth of the rate.

// transposedMaxY bounds the product's elements (a scratch buffer, 64 MB
// of f32) a call may hold; bigger ones keep the direct convolution.
const transposedMaxY = 16 << 20

// transposedPanels is the first column key of the product's panels in
// a ConvKernelCache: below any the other paths use.
const transposedPanels = -1 << 40

// transposedBlock is the output pixels the gather finishes at a time:
// their epilogue runs while they are in cache.
const transposedBlock = 64

// canConvTransposed reports whether p takes the product-and-gather path:
// a dilated input, unit strides (a kernel dilation is only a farther
// tap: ONNX ConvTranspose's dilations), its input pixels one strided row
// each (any layout whose spatial dimensions nest as one), and a product
// of bounded size. Groups take a product each, gathered into their own
// output channels.
func canConvTransposed(p *Conv) bool {
	if p.Groups < 1 || p.InChannels%p.Groups != 0 || p.OutChannels%p.Groups != 0 {
		return false
	}
	dil, pixels, taps := 1, 1, 1
	for d := range p.InSpatial {
		if p.Stride[d] != 1 {
			return false
		}
		dil *= p.LhsDil[d]
		pixels *= p.InSpatial[d]
		taps *= p.Kernel[d]
	}
	_, ok := inputRowStride(p)
	return dil > 1 && ok && pixels*taps*p.OutChannels <= transposedMaxY && pixels > 0 && taps > 0
}

// inputRowStride is the stride between consecutive input pixels of one
// example when its spatial dimensions nest as one row-major index.
func inputRowStride(p *Conv) (int, bool) {
	n := len(p.InSpatial)
	if n == 0 {
		return 0, false
	}
	s := p.InSpatialStrides[n-1]
	for d := n - 2; d >= 0; d-- {
		if p.InSpatial[d+1] > 1 && p.InSpatialStrides[d] != p.InSpatialStrides[d+1]*p.InSpatial[d+1] {
			return 0, false
		}
	}
	return s, true
}

// kernelTaps is the kernel's positions: the product of its sizes.
func kernelTaps(p *Conv) int {
	taps := 1
	for _, k := range p.Kernel {
		taps *= k
	}
	return taps
}

// transposedCols is a group's product's columns: taps·(OutChannels/Groups).
func transposedCols(p *Conv) int { return kernelTaps(p) * (p.OutChannels / p.Groups) }

// transposedWeights is p's kernel as the groups' dense product matrices,
// one after the other, group g's [InChannels/Groups, taps·OutChannels/Groups]
// (its input channels by its output channels' taps, tap-major within a
// row).
func transposedWeights(p *Conv, kernel []float32) []float32 {
	taps := kernelTaps(p)
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	n := taps * cout
	w := make([]float32, p.InChannels*n)
	tap := make([]int, len(p.Kernel))
	for t := range taps {
		off := 0
		for d, k := range tap {
			off += k * p.KernelSpatialStrides[d]
		}
		for g := range p.Groups {
			for c := range cin {
				row := w[(g*cin+c)*n+t*cout : (g*cin+c)*n+(t+1)*cout]
				base := off + c*p.KernelInStride + g*cout*p.KernelOutStride
				for j := range row {
					row[j] = kernel[base+j*p.KernelOutStride]
				}
			}
		}
		for d := len(tap) - 1; d >= 0; d-- { // the next tap, last dimension fastest
			if tap[d]++; tap[d] < p.Kernel[d] {
				break
			}
			tap[d] = 0
		}
	}
	return w
}

// transposedFor returns the kernel's product matrix: from the cache, or
// built (and kept where the cache keeps panels).
func (c *ConvKernelCache) transposedFor(p *Conv, kernel []float32) []float32 {
	if !c.keepsPanels() {
		return transposedWeights(p, kernel)
	}
	c.mu.RLock()
	w := c.transposed
	c.mu.RUnlock()
	if w != nil && len(w) == p.InChannels*transposedCols(p) {
		return w
	}
	w = transposedWeights(p, kernel)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.transposed = w
	return w
}

// convTransposed computes p (canConvTransposed) into out, handing each
// block of output pixels to epi.
func convTransposed(p *Conv, in, kernel, out []float32, threads int, epi Epilogue, cache *ConvKernelCache) {
	pixels, outPixels := 1, 1
	for d := range p.InSpatial {
		pixels *= p.InSpatial[d]
		outPixels *= p.OutSpatial[d]
	}
	taps := kernelTaps(p)
	cols := transposedCols(p)
	cin := p.InChannels / p.Groups
	kc := cache.forKernel(kernel)
	w := kc.transposedFor(p, kernel)
	y := getBuf[float32](p.Groups * pixels * cols) // the groups' products, one after the other
	defer putBuf(y)
	row, _ := inputRowStride(p)
	// Output rows (positions of the first spatial dimension) a block.
	rowPixels := outPixels / p.OutSpatial[0]
	block := max(1, transposedBlock/max(rowPixels, 1))
	for b := range p.Batch {
		for g := range p.Groups {
			// B's panels packed once and kept with the kernel, as the
			// pointwise path keeps its own (keys below every column of
			// those, a group's 2³² apart).
			bm := Strided[float32]{Data: w[g*cin*cols:], Row: cols, Col: 1}
			pack := func(dst []float32, pc, jc, kb, nb, from, to int) { packB(dst, bm, pc, jc, kb, nb, sgemmNR, from, to) }
			key := transposedPanels + g<<32
			src := bSource[float32]{pack: pack, panel: kc.reader(key, pack), peek: kc.peeker(key)}
			a := Strided[float32]{Data: in[b*p.InBatchStride+g*cin*p.InChannelStride:], Row: row, Col: p.InChannelStride}
			pa := func(dst []float32, ic, pc, mb, kb int) { packA(dst, a, ic, pc, mb, kb, sgemmMR) }
			blk := directBlock(a, bm, sgemmMR, sgemmNR, false, wideFor(pixels, cols, cin))
			if blk.run == nil {
				blk = packedBlock(pa, sgemmMR, sgemmNR, kernelF32, wideFor(pixels, cols, cin))
			}
			blk.packsB = false
			gemmCoreFrom(pixels, cols, cin, blk, src, y[g*pixels*cols:], cols, false, threads, sgemmMR, sgemmNR, nil)
		}
		gt := &col2im{p: p, y: y, taps: taps, out: out[b*outPixels*p.OutChannels:], groupY: pixels * cols}
		parts := threads
		if 2*outPixels*taps*p.OutChannels < gemmParallelFlops {
			parts = 1
		}
		rows := p.OutSpatial[0]
		parallel(parts, func(t int) {
			lo, hi := rows*t/parts, rows*(t+1)/parts
			for r0 := lo; r0 < hi; r0 += block {
				r1 := min(r0+block, hi)
				gt.rows(r0, r1, rowPixels)
				if epi != nil {
					epi(b*outPixels+r0*rowPixels, 0, (r1-r0)*rowPixels, p.OutChannels)
				}
			}
		})
	}
}

// col2im sums the product's contributions into output pixels: output
// position o_d takes input position w_d through tap k_d where
// o_d = w_d·LhsDil_d + PadLo_d - k_d·RhsDil_d.
type col2im struct {
	p      *Conv
	y      []float32 // the groups' products, groupY apart
	groupY int
	taps   int
	out    []float32 // this example's output pixels
	group  int       // the group dim gathers
}

// rows sets the output pixels of first-dimension positions [r0, r1),
// rowPixels pixels each: cleared, then every group's contributions added,
// tap by tap, as strided runs along the last dimension.
func (g *col2im) rows(r0, r1, rowPixels int) {
	m := g.p.OutChannels
	clear(g.out[r0*rowPixels*m : r1*rowPixels*m])
	for grp := range g.p.Groups {
		h := *g
		h.group = grp
		h.dim(0, r0, r1, 0, 0, 0)
	}
}

// dim adds the contributions to output positions [lo, hi) of dimension
// d (the whole extent below the first), the output pixel, input pixel
// and tap of the dimensions before being oOff, wOff and tOff.
func (g *col2im) dim(d, lo, hi, oOff, wOff, tOff int) {
	p := g.p
	l, pad, in, rd := p.LhsDil[d], p.PadLo[d], p.InSpatial[d], p.RhsDil[d]
	for k := range p.Kernel[d] {
		// w with lo ≤ w·l + pad - k·rd < hi
		wlo := max(0, ceilDivInt(lo-pad+k*rd, l))
		whi := min(in, ceilDivInt(hi-pad+k*rd, l))
		if wlo >= whi {
			continue
		}
		o := wlo*l + pad - k*rd
		if d == len(p.InSpatial)-1 {
			m, gm := p.OutChannels, p.OutChannels/p.Groups // a pixel's channels, and a group's
			dst := g.out[(oOff*p.OutSpatial[d]+o)*m+g.group*gm:]
			src := g.y[g.group*g.groupY+((wOff*in+wlo)*g.taps+tOff*p.Kernel[d]+k)*gm:]
			addRuns(dst, l*m, src, g.taps*gm, whi-wlo, gm)
			continue
		}
		next := p.OutSpatial[d+1]
		for w := wlo; w < whi; w, o = w+1, o+l {
			g.dim(d+1, 0, next, oOff*p.OutSpatial[d]+o, wOff*in+w, tOff*p.Kernel[d]+k)
		}
	}
}

// ceilDivInt is ⌈a/b⌉ for b > 0 and any a.
func ceilDivInt(a, b int) int {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

// addRuns adds rows runs of cols values, src's ss apart, into dst's, ds
// apart: by the vector kernel from a vector's length on (a Go loop over
// runs of 32 took three times the whole product: U-Net's 56²×64 → 112²×32
// upsampling 5.6 → 1.8 ms), in Go below.
func addRuns(dst []float32, ds int, src []float32, ss, rows, cols int) {
	if cols >= 8 {
		for r := range rows {
			d := dst[r*ds : r*ds+cols]
			AddF32(d, d, src[r*ss:r*ss+cols])
		}
		return
	}
	for r := range rows {
		d, s := dst[r*ds:r*ds+cols], src[r*ss:r*ss+cols]
		for j := range d {
			d[j] += s[j]
		}
	}
}
