package kernels

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sync/atomic"
)

// Winograd's minimal filtering F(m×m, 3×3) (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2015): a 3×3 convolution
// with unit strides computes each m×m tile of its output from the a×a
// patch of the image under it (a = m+2) as
//
//	Y = Aᵀ [ Σ_c (Bᵀ d_c B) ⊙ (G g_c Gᵀ) ] A
//
// a² products a tile and channel pair where the direct form takes 9m²:
// 16 for F(2×2, 3×3)'s 36, 36 for F(4×4, 3×3)'s 144. The sum over input
// channels of the a² element-wise products is a² GEMMs, one per position
// ξ of the transformed tile: [tiles × C] by the transformed kernel's
// [C × K]. F(2×2, 3×3) transforms the image and the products by
// additions alone; F(4×4, 3×3) by small multiples too (up to 8), which
// costs it more rounding (TestConvWinograd bounds both: winoBound).
//
//	F(2×2, 3×3):
//	Bᵀ = 1  0 -1  0    G = 1    0    0    Aᵀ = 1 1  1  0
//	     0  1  1  0        1/2  1/2  1/2       0 1 -1 -1
//	     0 -1  1  0        1/2 -1/2  1/2
//	     0  1  0 -1        0    0    1
//
//	F(4×4, 3×3):
//	Bᵀ = 4  0 -5  0  1  0    G =  1/4     0     0    Aᵀ = 1  1  1  1  1  0
//	     0 -4 -4  1  1  0        -1/6  -1/6  -1/6        0  1 -1  2 -2  0
//	     0  4 -4 -1  1  0        -1/6   1/6  -1/6        0  1  1  4  4  0
//	     0 -2 -1  2  1  0         1/24  1/12  1/6        0  1 -1  8 -8  1
//	     0  2 -1 -2  1  0         1/24 -1/12  1/6
//	     0  4  0 -5  0  1         0     0     1
//
// The image is cut into bands of whole tile rows, each small enough that
// its transformed tiles and products stay in L2: a band's a² transformed
// tiles matrices, its a² products, then its outputs, finished by the
// epilogue while in cache.

// WinogradKernel is a 3×3 kernel transformed for F(m×m, 3×3): the a²
// matrices U_ξ = (G g Gᵀ)_ξ, each [C × K], packed for the GEMM (and kept
// only so: a² matrices of C×K are 16/9 and 4 times the kernel's size).
type WinogradKernel struct {
	m, c, k int // output tile, channels
	packed  []*PackedB
	// safe says every kernel value is finite and under 2⁴⁸ in magnitude
	// (winoSafeBits): the transforms cannot overflow or mix in a NaN.
	safe bool
}

// winoSafeBits bounds the magnitudes, as a value's bits with the sign
// cleared (absMaxBits), of the images and kernels Winograd takes: 2⁴⁸.
// Its transforms mix a tile's values: an infinity or NaN anywhere in a
// patch reaches every output of the tile (the direct sum keeps it to the
// outputs whose windows hold it), and intermediate values up to a few
// hundred times an input's could overflow where the direct sum does not.
// Under 2⁴⁸ both factors, the products summed over up to 4096 channels
// and transformed stay under 2¹²⁸; above, or non-finite, the direct path
// computes the convolution.
const winoSafeBits = (127 + 48) << 23

// winoPoints is the number of points a² of F(m×m, 3×3)'s transformed tile.
func winoPoints(m int) int { return (m + 2) * (m + 2) }

// winograd says whether the 3×3 convolutions Winograd takes run on it,
// and winoF4 whether F(4×4, 3×3) may: AXLE_CONV=direct turns Winograd
// off, AXLE_CONV=winograd2 keeps it to F(2×2, 3×3), for A/B runs.
var (
	winograd = os.Getenv("AXLE_CONV") != "direct"
	winoF4   = os.Getenv("AXLE_CONV") != "winograd2"
)

// winoMinChannels is the fewest input and output channels Winograd takes:
// with fewer, its 16 products are too thin to gain on the direct
// kernels' 9 taps.
const winoMinChannels = 32

// winoBandBytes bounds a band's transformed tiles and products together,
// so that a band's working set stays in L2.
const winoBandBytes = 640 << 10

// winogradTakes reports whether convolution p runs on Winograd's
// F(m×m, 3×3): a 3×3 window over two spatial dimensions, unit strides, no
// dilation, one group, channels innermost in the image, and enough
// channels to gain.
func winogradTakes(p *Conv) bool {
	if !winograd || len(p.InSpatial) != 2 || p.Groups != 1 || p.InChannelStride != 1 {
		return false
	}
	for d := range 2 {
		if p.Kernel[d] != 3 || p.Stride[d] != 1 || p.LhsDil[d] != 1 || p.RhsDil[d] != 1 || p.OutSpatial[d] < 2 {
			return false
		}
	}
	return p.InChannels >= winoMinChannels && p.OutChannels >= winoMinChannels
}

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
	last := 2*p.KernelSpatialStrides[0] + 2*p.KernelSpatialStrides[1] + (c-1)*p.KernelInStride + (k-1)*p.KernelOutStride
	if len(kernel) <= last {
		return nil, fmt.Errorf("kernels: TransformWinograd: a kernel of %d values for %d×%d channels", len(kernel), c, k)
	}
	m := winoTile(p)
	n2 := winoPoints(m)
	w := &WinogradKernel{m: m, c: c, k: k, packed: make([]*PackedB, n2)}
	us := make([]float32, n2*c*k)
	if n2*c*k < winoTransformSplit {
		threads = 1
	}
	threads = max(1, min(threads, c))
	most := make([]uint32, threads)
	parallel(threads, func(t int) {
		most[t] = winoKernelRows(p, kernel, m, us, t*c/threads, (t+1)*c/threads)
	})
	w.safe = slices.Max(most) < winoSafeBits
	errs := make([]error, n2)
	parallel(min(threads, n2), func(t int) {
		for xi := t; xi < n2; xi += min(threads, n2) {
			w.packed[xi], errs[xi] = PackBF32(c, k, Strided[float32]{Data: us[xi*c*k:], Row: k, Col: 1})
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

// winoTransformSplit is the fewest transformed values a kernel transform
// splits over threads for.
const winoTransformSplit = 1 << 16

// winoKernelRows writes U_ξ[ci][co] = (G g Gᵀ)_ξ of kernel (ci, co) into
// us (a² matrices of C×K) for input channels [c0, c1), runs of up to 64
// output channels at a time (what they take stays in L1): the kernels'
// nine rows gathered, G applied down them, Gᵀ along, in float64 (terms
// with a zero coefficient left out), each value rounded once to f32. It
// returns the largest of the kernel values' magnitudes as bits
// (absMaxBits).
func winoKernelRows(p *Conv, kernel []float32, m int, us []float32, c0, c1 int) uint32 {
	var most uint32
	const run = 64
	G := winoG[m]
	a, c, k := len(G), p.InChannels, p.OutChannels
	s0, s1 := p.KernelSpatialStrides[0], p.KernelSpatialStrides[1]
	var g [9][run]float64
	var t [6][3][run]float64 // G g
	for ci := c0; ci < c1; ci++ {
		for co0 := 0; co0 < k; co0 += run {
			n := min(run, k-co0)
			for co := range n {
				base := ci*p.KernelInStride + (co0+co)*p.KernelOutStride
				for i := range 3 {
					for j := range 3 {
						v := kernel[base+i*s0+j*s1]
						most = max(most, math.Float32bits(v)&^(1<<31))
						g[3*i+j][co] = float64(v)
					}
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
					dst := us[(i*a+j)*c*k+ci*k+co0:][:n]
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

// winoTile is the output tile m of the F(m×m, 3×3) that convolution p
// runs on: 4 where that makes 16 tiles or more over the batch and covers
// at most a third more than the output (14×14 and up at batch 1), 2
// otherwise. F(4×4, 3×3) computes a tile in 36 products for F(2×2)'s
// 4·16 and transforms fewer values an output (2.25 against 4 each way),
// but has 36 transformed kernels to F(2×2)'s 16, and few tiles give its
// products few rows. In one process, alternated, two threads, F(4×4)'s
// time over F(2×2)'s, medians of 15: 56²×32 0.68, 56²×64 0.69, 28²×64
// 0.62, 28²×128 0.61, 14²×128 0.78, 14²×256 0.70, batch 8 56²×64 0.70;
// 12²×96 (9 tiles) 1.19, 10²×64 (9 tiles, 1.44 of the output) 1.16,
// 7²×512 (4 tiles) 1.35.
func winoTile(p *Conv) int {
	th, tw := (p.OutSpatial[0]+3)/4, (p.OutSpatial[1]+3)/4
	covered := 16 * th * tw
	if winoF4 && p.Batch*th*tw >= 16 && 3*covered <= 4*p.OutSpatial[0]*p.OutSpatial[1] {
		return 4
	}
	return 2
}

// winogradShape is winogradTakes without the policy and size choices:
// the shapes F(2×2, 3×3) computes.
func winogradShape(p *Conv) bool {
	if len(p.InSpatial) != 2 || p.Groups != 1 || p.InChannelStride != 1 {
		return false
	}
	for d := range 2 {
		if p.Kernel[d] != 3 || p.Stride[d] != 1 || p.LhsDil[d] != 1 || p.RhsDil[d] != 1 {
			return false
		}
	}
	return true
}

// winoG is G of F(m×m, 3×3) for m = 2 and 4, rows of three.
var winoG = map[int][][3]float64{
	2: {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
	4: {{1. / 4, 0, 0}, {-1. / 6, -1. / 6, -1. / 6}, {-1. / 6, 1. / 6, -1. / 6},
		{1. / 24, 1. / 12, 1. / 6}, {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1}},
}

// winoPlan is a Winograd convolution's cut into work: bands of tile
// rows, each over a range of output channels.
type winoPlan struct {
	p                    *Conv
	m, a, n2             int // output tile, input patch, transformed points (a²)
	tilesH, tilesW       int
	rows                 int // tile rows (over the batch)
	bandRows, bands      int // tile rows a band, bands
	splits, cols         int // output channel ranges, channels a range (whole pairs of slivers)
	oh, ow, c, k, pixels int
}

func newWinoPlan(p *Conv, m, threads int) *winoPlan {
	w := &winoPlan{p: p, m: m, a: m + 2, n2: winoPoints(m), c: p.InChannels, k: p.OutChannels, oh: p.OutSpatial[0], ow: p.OutSpatial[1]}
	w.tilesH, w.tilesW = (w.oh+m-1)/m, (w.ow+m-1)/m
	w.rows = p.Batch * w.tilesH
	w.pixels = w.oh * w.ow
	perRow := w.tilesW * w.n2 * (w.c + w.k) * 4
	most := max(1, min(w.rows, winoBandBytes/perRow)) // tile rows a band may have
	w.bandRows, w.splits, w.cols = most, 1, w.k
	if threads > 1 && threads <= 16 && w.rows <= 8*threads*most {
		w.balance(most, threads) // (more threads take many bands in turn)
	}
	w.bands = (w.rows + w.bandRows - 1) / w.bandRows
	return w
}

// balance cuts the plan's tile rows into bands of at most most rows and
// its output channels into ranges so that the threads share the work
// evenly: a layer with a few bands (a small image at batch 1) left a
// thread idle a third of the time. It takes the cut whose last thread
// ends first, the threads taking items in order as they come free, an
// item costing (tiles + 8)·(channels + C/4): its products, its input
// transforms, and a fixed cost that keeps bands from thinning out.
func (w *winoPlan) balance(most, threads int) {
	pair := 2 * sgemmNR
	best := -1
	for splits := 1; splits <= min(threads, winoMaxSplits); splits++ {
		cols := (w.k/splits + pair - 1) / pair * pair
		if splits > 1 && (cols < pair || (w.k+cols-1)/cols != splits) {
			continue
		}
		// Bands of most rows down to a few: thinner ones only add items
		// (the search is bounded: it runs on every call).
		for rows := most; rows >= max(1, most-winoBandChoices+1); rows-- {
			if (w.rows+rows-1)/rows*splits > winoMaxItems*threads {
				break
			}
			span := w.makespan(rows, splits, cols, threads)
			if best < 0 || span < best {
				best, w.bandRows, w.splits, w.cols = span, rows, splits, cols
			}
		}
	}
}

// The bounds of balance's search: output channel ranges, band heights
// tried, and items a thread.
const (
	winoMaxSplits   = 4
	winoBandChoices = 16
	winoMaxItems    = 32
)

// makespan is when the last of threads ends, in balance's cost units,
// with bands of rows tile rows and splits ranges of cols channels.
func (w *winoPlan) makespan(rows, splits, cols, threads int) int {
	free := make([]int, threads)
	for r0 := 0; r0 < w.rows; r0 += rows {
		tiles := min(rows, w.rows-r0) * w.tilesW
		for s := range splits {
			nc := min(cols, w.k-s*cols)
			t := 0
			for i := range free {
				if free[i] < free[t] {
					t = i
				}
			}
			free[t] += (tiles + 8) * (nc + w.c/4)
		}
	}
	return slices.Max(free)
}

// winoInputSafe reports whether every value of convolution p's image in
// (the span it reads, gaps between rows included) is finite and under
// winoSafeBits.
func winoInputSafe(p *Conv, in []float32) bool {
	span := (p.Batch-1)*p.InBatchStride + (p.InSpatial[0]-1)*p.InSpatialStrides[0] + (p.InSpatial[1]-1)*p.InSpatialStrides[1] + p.InChannels
	return absMaxBits(in[:min(span, len(in))]) < winoSafeBits
}

// absMaxBitsGo is absMaxBits in Go: the largest of x's values' bits with
// the sign cleared, as unsigned integers (NaNs above infinities above
// every finite value; 0 for none).
func absMaxBitsGo(x []float32) uint32 {
	var most uint32
	for _, v := range x {
		most = max(most, math.Float32bits(v)&^(1<<31))
	}
	return most
}

// winoThreads is how many of threads convolution p runs on: one below
// the direct path's threshold (the same layers split).
func winoThreads(p *Conv, threads int) int {
	if m, k := convRowsDepth(p); runsAlone(2*m*p.OutChannels*k, directParallelFlops) {
		return 1
	}
	return threads
}

// items is the plan's units of work: bands times channel ranges.
func (w *winoPlan) items() int { return w.bands * w.splits }

// convWinograd computes convolution p (winogradTakes) with its kernel
// transformed, handing the epilogue each band's output rows and channel
// range once final.
func convWinograd(p *Conv, in []float32, wk *WinogradKernel, out []float32, threads int, epi Epilogue) {
	threads = winoThreads(p, threads)
	w := newWinoPlan(p, wk.m, threads)
	var next atomic.Int64
	parallel(min(threads, w.items()), func(int) {
		maxTiles := w.bandRows * w.tilesW
		v := getBuf[float32](w.n2 * winoStride(maxTiles*w.c))
		m := getBuf[float32](w.n2 * winoStride(maxTiles*w.cols))
		patch := getBuf[float32](w.n2 * w.c)
		edge := getBuf[float32](w.m * w.m * w.cols)
		ap := getBuf[float32](gemmMC*gemmKC + edgeTile)
		defer putBuf(ap)
		defer putBuf(v)
		defer putBuf(m)
		defer putBuf(patch)
		defer putBuf(edge)
		for {
			it := int(next.Add(1) - 1)
			if it >= w.items() {
				return
			}
			band, split := it/w.splits, it%w.splits
			w.band(in, wk, out, band, split, v, m, patch, edge, ap, epi)
		}
	})
}

// band computes tile rows [band·bandRows, …) of output channels [split·cols, …).
func (w *winoPlan) band(in []float32, wk *WinogradKernel, out []float32, band, split int, v, m, patch, edge, ap []float32, epi Epilogue) {
	r0, r1 := band*w.bandRows, min(w.rows, (band+1)*w.bandRows)
	j0 := split * w.cols
	nc := min(w.cols, w.k-j0)
	tiles := (r1 - r0) * w.tilesW
	// The transformed tiles: V_ξ is [tiles × C].
	vs := winoStride(tiles * w.c)
	t := 0
	for r := r0; r < r1; r++ {
		b, ty := r/w.tilesH, r%w.tilesH
		for tx := range w.tilesW {
			w.inputTile(in, b, ty, tx, v[t*w.c:], vs, patch)
			t++
		}
	}
	// The a² products M_ξ = V_ξ · U_ξ, each [tiles × nc].
	ms := winoStride(tiles * nc)
	wk.products(tiles, nc, j0, v, vs, m, ms, ap)
	// The outputs.
	t = 0
	for r := r0; r < r1; r++ {
		b, ty := r/w.tilesH, r%w.tilesH
		for tx := range w.tilesW {
			w.outputTile(m[t*nc:], ms, nc, out, b, ty, tx, j0, edge)
			t++
		}
	}
	if epi != nil {
		i0 := w.pixelRow(r0, 0)
		i1 := w.pixelRow(r1-1, w.m)
		epi(i0, j0, i1-i0, nc)
	}
}

// winoStride is the distance apart, in elements, of the a² matrices of
// n elements each that a band's transforms write or read together:
// sixteen or 36 streams a whole number of 4 KiB pages apart share one set of
// L1's ways and evict each other (ResNet's 7×7 layers, 16 tiles of 256
// channels: the input transform took a fifth of the time), so each
// starts a line later in its page than the one before.
func winoStride(n int) int { return (n+1023)&^1023 + 16 }

// pixelRow is the output pixel index where tile row r's output row dy
// (0 to m: m is the row after its last) starts, within the batch.
func (w *winoPlan) pixelRow(r, dy int) int {
	b, ty := r/w.tilesH, r%w.tilesH
	return b*w.pixels + min(w.m*ty+dy, w.oh)*w.ow
}

// inputTile writes the a² transformed values of tile (b, ty, tx) for
// every input channel to v[ξ·vs + c].
func (w *winoPlan) inputTile(in []float32, b, ty, tx int, v []float32, vs int, patch []float32) {
	p, a := w.p, w.a
	y0, x0 := w.m*ty-p.PadLo[0], w.m*tx-p.PadLo[1]
	sy, sx := p.InSpatialStrides[0], p.InSpatialStrides[1]
	base := b * p.InBatchStride
	if y0 >= 0 && x0 >= 0 && y0+a <= p.InSpatial[0] && x0+a <= p.InSpatial[1] {
		winoInput(w.m, in[base+y0*sy+x0*sx:], sy, sx, v, vs, w.c)
		return
	}
	// A tile over the image's border: its patch gathered with zeros.
	for i := range a {
		for j := range a {
			d := patch[(a*i+j)*w.c : (a*i+j+1)*w.c]
			y, x := y0+i, x0+j
			if y < 0 || x < 0 || y >= p.InSpatial[0] || x >= p.InSpatial[1] {
				clear(d)
				continue
			}
			copy(d, in[base+y*sy+x*sx:base+y*sy+x*sx+w.c])
		}
	}
	winoInput(w.m, patch, a*w.c, w.c, v, vs, w.c)
}

// outputTile writes tile (b, ty, tx)'s m×m outputs of channels [j0,
// j0+nc) from its a² products m[ξ·ms + j].
func (w *winoPlan) outputTile(m []float32, ms, nc int, out []float32, b, ty, tx, j0 int, edge []float32) {
	k, t := w.k, w.m
	oy, ox := t*ty, t*tx
	at := (b*w.pixels+oy*w.ow+ox)*k + j0
	if oy+t <= w.oh && ox+t <= w.ow {
		winoOutput(t, m, ms, out[at:], w.ow*k, k, nc)
		return
	}
	// A tile past the output's last row or column: computed aside, its
	// outputs inside copied.
	winoOutput(t, m, ms, edge, t*nc, nc, nc)
	for i := range min(t, w.oh-oy) {
		for j := range min(t, w.ow-ox) {
			copy(out[at+i*w.ow*k+j*k:at+i*w.ow*k+j*k+nc], edge[(t*i+j)*nc:(t*i+j+1)*nc])
		}
	}
}

// products computes a band's a² products M_ξ = V_ξ · U_ξ[:, j0:j0+n],
// V_ξ (m×C) at v[ξ·vs:], M_ξ (m×n) to mm[ξ·ms:], ap the A scratch of
// the GEMM's blocks. Where direct kernels run (AVX-512's pair kernels,
// AVX2's 6×16), it drives them itself, the blocks of all sixteen in one
// loop: through the GEMM's entry, each product paid for its setup
// (closures, buffers, the split of threads) about what a product of
// ResNet's 56×56×32 layer computes. In one process, alternated, the
// product path's time over this loop's on ResNet's 3×3 layers at batch
// 1 (56²×32 … 7²×256) and batch 8 (56²×64): AVX-512 1.15–1.36, AVX2
// (AXLE_KERNELS=avx2) 1.20–1.40. On this Zen 4 host the AVX2 kernels
// were 5–15% slower than the pair kernels here: wide where it can be.
func (wk *WinogradKernel) products(m, n, j0 int, v []float32, vs int, mm []float32, ms int, ap []float32) {
	wide := useAVX512 && pairKernel[float32](sgemmMR, sgemmNR, wideFor(m, n, wk.c)) != nil
	if !directA || !useAsm || useAVX512 && !wide {
		for xi := range len(wk.packed) {
			a := Strided[float32]{Data: v[xi*vs:], Row: wk.c, Col: 1}
			wk.product(xi, m, n, a, j0, mm[xi*ms:], n)
		}
		return
	}
	mc := balancedBlock(m, gemmMC, blockRows[float32](sgemmMR, sgemmNR, wide))
	for xi := range len(wk.packed) {
		a := Strided[float32]{Data: v[xi*vs:], Row: wk.c, Col: 1}
		b := Strided[float32]{Row: wk.k, Col: 1} // (a guide only: B comes packed)
		c := mm[xi*ms:]
		for pc := 0; pc < wk.c; pc += gemmKC {
			kb := min(gemmKC, wk.c-pc)
			bp := wk.packed[xi].panel(pc, j0, kb, n)
			for ic := 0; ic < m; ic += mc {
				if wide {
					macroKernelDirect(a, b, ap, bp, c, n, ic, pc, 0, min(mc, m-ic), n, kb, pc == 0, false, bPrefetch[float32]{}, nil)
				} else {
					macroKernelDirectAVX2(a, ap, bp, c, n, ic, pc, 0, min(mc, m-ic), n, kb, pc == 0, bPrefetch[float32]{}, nil)
				}
			}
		}
	}
}

// product computes M = A · U_ξ[:, j0:j0+n] (A is m×C) into c, on the
// blocked GEMM reading U_ξ's packed panels (b only guides it: the skinny
// kernels, which read B in place, are not asked).
func (wk *WinogradKernel) product(xi, m, n int, a Strided[float32], j0 int, c []float32, ldc int) {
	k := wk.c
	b := Strided[float32]{Row: wk.k, Col: 1}
	pk := wk.packed[xi]
	panel := func(pc, jc, kb, nb int) []float32 { return pk.panel(pc, j0+jc, kb, nb) }
	gemmFrom(m, n, k, a, b, bSource[float32]{panel: panel, peek: panel}, c, ldc, false, 1, sgemmMR, sgemmNR, kernelF32, nil, nil, true)
}

// winoInputGo is winoInput in Go: V = Bᵀ d B for each of c channels,
// d's element (i, j) at d[i·row + j·col + channel], V_ξ at v[ξ·vs +
// channel], for F(m×m, 3×3).
func winoInputGo(m int, d []float32, row, col int, v []float32, vs, c int) {
	if m == 2 {
		winoInput4Go(d, row, col, v, vs, c)
	} else {
		winoInput6Go(d, row, col, v, vs, c)
	}
}

// winoOutputGo is winoOutput in Go: Y = Aᵀ M A for each of n channels,
// M_ξ at mm[ξ·ms + channel], Y's element (i, j) to y[i·row + j·col +
// channel], for F(m×m, 3×3).
func winoOutputGo(m int, mm []float32, ms int, y []float32, row, col, n int) {
	if m == 2 {
		winoOutput4Go(mm, ms, y, row, col, n)
	} else {
		winoOutput6Go(mm, ms, y, row, col, n)
	}
}

// winoB6 applies F(4×4, 3×3)'s Bᵀ to a column of six (the assembly's
// order of operations: products rounded, then added left to right).
func winoB6(x0, x1, x2, x3, x4, x5 float32) (y0, y1, y2, y3, y4, y5 float32) {
	p, q := x4-float32(4*x2), x3-float32(4*x1)
	r, s := x4-x2, 2*(x3-x1)
	y0 = float32(4*x0) - float32(5*x2) + x4
	y5 = float32(4*x1) - float32(5*x3) + x5
	return y0, p + q, p - q, r + s, r - s, y5
}

// winoA6 applies F(4×4, 3×3)'s Aᵀ to a column of six.
func winoA6(x0, x1, x2, x3, x4, x5 float32) (y0, y1, y2, y3 float32) {
	a, b, c, e := x1+x2, x1-x2, x3+x4, x3-x4
	return x0 + a + c, b + float32(2*e), a + float32(4*c), b + float32(8*e) + x5
}

// winoInput6Go is F(4×4, 3×3)'s input transform: Bᵀ down each column of
// the 6×6 patch, then along each row of the result.
func winoInput6Go(d []float32, row, col int, v []float32, vs, c int) {
	for ch := range c {
		var t [6][6]float32
		for j := range 6 {
			o := j*col + ch
			t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j] = winoB6(d[o], d[row+o], d[2*row+o], d[3*row+o], d[4*row+o], d[5*row+o])
		}
		for i := range 6 {
			y0, y1, y2, y3, y4, y5 := winoB6(t[i][0], t[i][1], t[i][2], t[i][3], t[i][4], t[i][5])
			o := 6*i*vs + ch
			v[o], v[o+vs], v[o+2*vs], v[o+3*vs], v[o+4*vs], v[o+5*vs] = y0, y1, y2, y3, y4, y5
		}
	}
}

// winoOutput6Go is F(4×4, 3×3)'s output transform: Aᵀ down each column
// of the 6×6 products, then along each row of the result.
func winoOutput6Go(m []float32, ms int, y []float32, row, col, n int) {
	for ch := range n {
		var s [4][6]float32
		for j := range 6 {
			o := j*ms + ch
			s[0][j], s[1][j], s[2][j], s[3][j] = winoA6(m[o], m[6*ms+o], m[12*ms+o], m[18*ms+o], m[24*ms+o], m[30*ms+o])
		}
		for i := range 4 {
			y0, y1, y2, y3 := winoA6(s[i][0], s[i][1], s[i][2], s[i][3], s[i][4], s[i][5])
			o := i*row + ch
			y[o], y[o+col], y[o+2*col], y[o+3*col] = y0, y1, y2, y3
		}
	}
}

// winoInput4Go is F(2×2, 3×3)'s input transform.
func winoInput4Go(d []float32, row, col int, v []float32, vs, c int) {
	for ch := range c {
		var t [16]float32
		for j := range 4 {
			d0, d1, d2, d3 := d[j*col+ch], d[row+j*col+ch], d[2*row+j*col+ch], d[3*row+j*col+ch]
			t[j] = d0 - d2
			t[4+j] = d1 + d2
			t[8+j] = d2 - d1
			t[12+j] = d1 - d3
		}
		for i := range 4 {
			t0, t1, t2, t3 := t[4*i], t[4*i+1], t[4*i+2], t[4*i+3]
			v[(4*i)*vs+ch] = t0 - t2
			v[(4*i+1)*vs+ch] = t1 + t2
			v[(4*i+2)*vs+ch] = t2 - t1
			v[(4*i+3)*vs+ch] = t1 - t3
		}
	}
}

// winoOutput4Go is F(2×2, 3×3)'s output transform.
func winoOutput4Go(m []float32, ms int, y []float32, row, col, n int) {
	for ch := range n {
		var s [8]float32
		for j := range 4 {
			m0, m1, m2, m3 := m[j*ms+ch], m[(4+j)*ms+ch], m[(8+j)*ms+ch], m[(12+j)*ms+ch]
			s[j] = m0 + m1 + m2
			s[4+j] = m1 - m2 - m3
		}
		for i := range 2 {
			s0, s1, s2, s3 := s[4*i], s[4*i+1], s[4*i+2], s[4*i+3]
			y[i*row+ch] = s0 + s1 + s2
			y[i*row+col+ch] = s1 - s2 - s3
		}
	}
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
