package kernels

//go:generate sh -c "cd _asm && go run ./winograd -out ../conv_winograd_amd64.s -stubs ../conv_winograd_stub_amd64.go -pkg kernels"

import (
	"os"
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
	kp      int // columns packed: k up to whole pairs of slivers, zero past k
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

// winoBandBytes bounds a band's transformed tiles and products together,
// so that a band's working set stays in L2.
const winoBandBytes = 640 << 10

// winogradTakes reports whether convolution p runs on Winograd's
// F(m×m, 3×3): a 3×3 window over two spatial dimensions, unit strides, no
// dilation, one group, channels innermost in the image, enough channels
// and work to gain (winogradPays), and not so many channels that its
// transformed kernel outgrows winoKernelValues.
func winogradTakes(p *Conv) bool {
	return winograd && winogradShape(p) && p.OutSpatial[0] >= 2 && p.OutSpatial[1] >= 2 &&
		winogradPays(p) && 16*p.InChannels*p.OutChannels <= winoKernelValues
}

// winogradPays reports whether a 3×3 convolution has channels and work
// enough for Winograd: its transforms cost per tile in proportion to
// C + K, its products save in proportion to C·K, so C·K/(C+K) ≥ 10 (and
// C ≥ 16, K ≥ 8), and 2²³ flops of the direct form or more (below, the
// setup of bands and buffers outweighs the saving). In one process,
// alternated, two threads, Winograd's time over the direct path's, 56²
// at batch 1 unless said: C→K 16→32 0.69, 32→16 0.80, 24→24 0.86, 48→16
// 0.92, 96→24 at 80² 0.60, 40² 0.51, 20² 0.78, 16→32 at 80² 0.59; 16→24
// 1.02, 24→16 1.07, 16→16 at 80² 1.20, 96→24 at 10² (4 MFLOP) 1.77.
func winogradPays(p *Conv) bool {
	c, k := p.InChannels, p.OutChannels
	m, depth := convRowsDepth(p)
	return c >= 16 && k >= 8 && c*k >= 10*(c+k) && 2*m*k*depth >= winoMinFlops
}

// winoMinFlops is the least work (the direct form's flops) Winograd
// takes; tests lower it to run small shapes through it.
var winoMinFlops = 1 << 23

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
//
// Each keeps its transformed kernel: a² matrices of C×K, 4 and 16/9 times
// the kernel's nine taps. In ResNet-50 halfwidth they were 22 MB against
// 8.5 and slowed the layers after them 4–20% (their weights pushed out of
// cache); a transformed kernel is held to winoKernelValues: F(4×4) up to
// about 240 channels each way, F(2×2) up to 512, the direct path past
// that.
func winoTile(p *Conv) int {
	th, tw := (p.OutSpatial[0]+3)/4, (p.OutSpatial[1]+3)/4
	covered := 16 * th * tw
	if winoF4 && p.Batch*th*tw >= 16 && 3*covered <= 4*p.OutSpatial[0]*p.OutSpatial[1] &&
		36*p.InChannels*p.OutChannels <= winoKernelValues/2 {
		return 4
	}
	return 2
}

// winoKernelValues bounds a transformed kernel's values (16 MiB of them
// for F(2×2, 3×3), half that for F(4×4, 3×3)).
const winoKernelValues = 1 << 22

// winogradShape is winogradTakes without the policy and size choices:
// the shapes F(m×m, 3×3) computes.
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

// winoInputSafe reports whether every value of convolution p's image in
// (the span it reads, gaps between rows included) is finite and under
// winoSafeBits.
func winoInputSafe(p *Conv, in []float32) bool {
	if p.Batch == 0 {
		return true
	}
	span := (p.Batch-1)*p.InBatchStride + (p.InSpatial[0]-1)*p.InSpatialStrides[0] + (p.InSpatial[1]-1)*p.InSpatialStrides[1] + p.InChannels
	return absMaxBits(in[:max(0, min(span, len(in)))]) < winoSafeBits
}

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
		m := getBuf[float32](w.n2 * winoStride(maxTiles*winoPaddedK(w.cols)))
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
	// The a² products M_ξ = V_ξ · U_ξ, each [tiles × np].
	np := productWidth(nc, j0, wk.kp)
	ms := winoStride(tiles * np)
	wk.products(tiles, np, j0, v, vs, m, ms, ap)
	// The outputs.
	t = 0
	for r := r0; r < r1; r++ {
		b, ty := r/w.tilesH, r%w.tilesH
		for tx := range w.tilesW {
			w.outputTile(m[t*np:], ms, nc, out, b, ty, tx, j0, edge)
			t++
		}
	}
	if epi != nil {
		i0 := w.pixelRow(r0, 0)
		i1 := w.pixelRow(r1-1, w.m)
		epi(i0, j0, i1-i0, nc)
	}
}

// productWidth is the columns the products of a range of nc output
// channels from j0 compute: nc, or nc up to a whole pair of slivers over
// the transformed kernel's zero columns where that adds at most a third:
// the direct kernels then take every column, where those past the last
// whole pair went through 6×16 tiles over packed A (the whole block's).
// In one process, alternated, padded against not: PP-OCR det's 96→24 at
// 80² 0.61 and at 40² 0.84, 64→48 at 28² 0.92; 32→16 at 56² (twice the
// columns) 1.16.
func productWidth(nc, j0, kp int) int {
	pair := 2 * sgemmNR
	r := nc % pair
	if r == 0 || 3*(pair-r) > nc {
		return nc
	}
	return min(nc-r+pair, kp-j0)
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
