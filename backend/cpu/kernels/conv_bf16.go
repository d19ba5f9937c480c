package kernels

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// ConvBF16 computes convolution p of a bf16 image and a bf16 kernel into
// f32 out (row-major [Batch, OutSpatial..., OutChannels]) on the bf16 GEMM
// (gemm_bf16.go: VDPBF16PS, f32 sums), for one feature group: M output
// pixels, N output channels, K taps × input channels in pairs. A is
// gathered from the image as the kernel's words while packing (implicit
// im2col, zero where a tap falls in padding), B is the kernel copied to
// [K, N] bf16 and packed as the GEMM packs it. The result is within
// GemmNarrowF32's bound for the VDPBF16PS path, k being K (it is that
// GEMM's product of the im2col matrix and the kernel matrix).
//
// Every block of the output, seen as the matrix [Batch·pixels,
// OutChannels], goes to epi (nil: none) as soon as it is final (a bf16
// result is rounded while the block is in cache).
//
// Where the CPU has no AVX512_BF16 it runs the kernels' Go twin: callers
// take it where BF16Direct holds.
//
// packed, where not nil, is the kernel packed ahead by PackConvBF16 (a
// model's constant weights): the product reads it in place, kernel is
// then not read.
func ConvBF16(p *Conv, in, kernel []uint16, packed *PackedBF16, out []float32, threads int, epi Epilogue) error {
	if err := p.check(); err != nil {
		return err
	}
	if p.Groups != 1 {
		return errors.New("conv: the bf16 convolution takes one feature group")
	}
	m, k := convRowsDepth(p)
	cin, cout := p.InChannels, p.OutChannels
	kernelLen := len(kernel)
	if packed != nil {
		if packed.k != k || packed.n != cout {
			return fmt.Errorf("conv: a kernel packed for %d×%d, not this convolution's %d×%d", packed.k, packed.n, k, cout)
		}
		kernelLen = math.MaxInt // not read
	}
	if err := p.checkLengths(len(in), kernelLen, len(out)); err != nil {
		return err
	}
	if m == 0 || cout == 0 {
		return nil
	}
	if k == 0 {
		clear(out[:m*cout])
		if epi != nil {
			epi(0, 0, m, cout)
		}
		return nil
	}
	im := &im2col{p: p, cin: cin, pixels: m / p.Batch, taps: k / cin}
	blk := aBlock[float32]{kc: bf16KC, run: func(ap, bp, c []float32, ldc, ic, pc, jc, mb, nb, kb int, overwrite, _ bool, _ bPrefetch[float32], _ *TileOps) int {
		packConvABF16(words(ap), im, in, k, ic, pc, mb, kb)
		macroKernelBF16(words(ap), words(bp), c, ldc, ic, jc, mb, nb, kb, overwrite)
		return 0
	}}
	src := bSource[float32]{}
	if packed != nil {
		src.panel = packed.panel
	} else {
		b, release := kernelMatrix(p, kernel, k)
		defer release()
		src.pack = func(dst []float32, pc, jc, kb, nb, from, to int) {
			packBBF16(words(dst), b, k, pc, jc, kb, nb, from, to)
		}
	}
	gemmCoreFrom(m, cout, (k+1)/2, blk, src, out, cout, false, threads, bf16MR, bf16NR, epi)
	return nil
}

// PackConvBF16 packs the kernel of convolution p (one feature group) for
// ConvBF16 once, as its [K, OutChannels] matrix for the bf16 GEMM: a
// model's constant weights, which ConvBF16 otherwise copies and packs on
// every call.
func PackConvBF16(p *Conv, kernel []uint16) (*PackedBF16, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if p.Groups != 1 {
		return nil, errors.New("conv: the bf16 convolution takes one feature group")
	}
	if err := p.checkLengths(math.MaxInt, len(kernel), math.MaxInt); err != nil {
		return nil, err
	}
	_, k := convRowsDepth(p)
	b, release := kernelMatrix(p, kernel, k)
	defer release()
	return PackBF16(k, p.OutChannels, b)
}

// kernelMatrix is p's kernel as the [K, OutChannels] bf16 matrix the GEMM
// takes (row tap·cin + c): the kernel itself where it is laid out so
// (HWIO, dense: a ResNet layer's 2.4 M values of 512 → 512 channels took
// three times its product's time to copy), else a copy in a pooled buffer;
// release hands that back.
func kernelMatrix(p *Conv, kernel []uint16, k int) (Narrow, func()) {
	cin, cout := p.InChannels, p.OutChannels
	dense := p.KernelOutStride == 1 && p.KernelInStride == cout
	stride := cin * cout
	for d := len(p.Kernel) - 1; d >= 0 && dense; d-- {
		dense = p.Kernel[d] == 1 || p.KernelSpatialStrides[d] == stride
		stride *= p.Kernel[d]
	}
	if dense {
		return Narrow{Data: kernel[:k*cout], Row: cout, Col: 1, Format: minifloat.BF16}, func() {}
	}
	w := kernelMatrixBF16(p, kernel, k)
	return Narrow{Data: unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(w))), 2*len(w))[:k*cout], Row: cout, Col: 1, Format: minifloat.BF16}, func() { putBuf(w) }
}

// ConvBF16Takes reports whether ConvBF16 runs p at speed: one feature
// group, contiguous channels of an even count (each pair of the kernel's
// words then within one tap, read as a word of the image); it computes
// any other single-group convolution too, a value at a time.
func ConvBF16Takes(p *Conv) bool {
	return p.Groups == 1 && pairsAreWords(p)
}

// pairsAreWords says each pair of an image's channels (2c, 2c+1) lies in
// memory as one 32-bit word's two halves, within one tap: contiguous
// channels of an even count.
func pairsAreWords(p *Conv) bool {
	return p.InChannelStride == 1 && p.InChannels%2 == 0
}

// checkLengths reports an image, kernel or output shorter than p reads or
// writes.
func (p *Conv) checkLengths(in, kernel, out int) error {
	m, _ := convRowsDepth(p)
	last, lastK := (p.Batch-1)*p.InBatchStride+(p.InChannels-1)*p.InChannelStride, (p.InChannels/p.Groups-1)*p.KernelInStride+(p.OutChannels-1)*p.KernelOutStride
	for d := range p.InSpatial {
		last += (p.InSpatial[d] - 1) * p.InSpatialStrides[d]
		lastK += (p.Kernel[d] - 1) * p.KernelSpatialStrides[d]
	}
	switch {
	case m > 0 && p.InChannels > 0 && last >= in:
		return errors.New("conv: the image is shorter than its strides say")
	case p.InChannels > 0 && p.OutChannels > 0 && lastK >= kernel:
		return errors.New("conv: the kernel is shorter than its strides say")
	case m*p.OutChannels > out:
		return errors.New("conv: the output is shorter than its shape")
	}
	return nil
}

// kernelMatrixBF16 copies the kernel to a [K, OutChannels] row-major
// matrix of bf16 (row tap·cin + c), two values a float32 of a pooled
// buffer (putBuf it back).
func kernelMatrixBF16(p *Conv, kernel []uint16, k int) []float32 {
	cin, cout := p.InChannels, p.OutChannels
	buf := getBuf[float32]((k*cout + 1) / 2)
	w := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(buf))), 2*len(buf))
	for tap := range k / cin {
		off := kernelTapOffset(p, tap)
		for c := range cin {
			row := w[(tap*cin+c)*cout:][:cout]
			src := off + c*p.KernelInStride
			for j := range row {
				row[j] = kernel[src+j*p.KernelOutStride]
			}
		}
	}
	return buf
}

// packConvABF16 packs output rows [ic, ic+mb), pair steps [pc, pc+kb) of
// the im2col matrix (row: an output pixel; column tap·cin + c: the
// image's value under the tap at channel c, zero in padding) as
// packABF16 packs A: MR-row slivers, MR words a pair step. With an even
// channel count and contiguous channels, a pair never straddles two taps
// and each tap's run of pairs is a run of words in the image.
func packConvABF16(dst []uint32, im *im2col, in []uint16, k, ic, pc, mb, kb int) {
	p := im.p
	ns := len(p.InSpatial)
	var org [bf16MR][8]int
	var base [bf16MR]int
	var at [8]int
	b, rem := ic/im.pixels, ic%im.pixels
	for d := ns - 1; d >= 0; d-- {
		at[d] = rem % p.OutSpatial[d]
		rem /= p.OutSpatial[d]
	}
	fast := pairsAreWords(p)
	for s := 0; s < mb; s += bf16MR {
		sliver := dst[s*kb : (s+bf16MR)*kb]
		rows := min(bf16MR, mb-s)
		for r := range rows {
			for d := range ns {
				org[r][d] = at[d]*p.Stride[d] - p.PadLo[d]
			}
			base[r] = b * p.InBatchStride
			b += nextPixel(at[:ns], p.OutSpatial)
		}
		if fast {
			im.packPairRuns(sliver, in, rows, &base, &org, pc, kb)
			continue
		}
		for q := range kb {
			for r := range bf16MR {
				lo := im.valueBF16(in, r < rows, base[r], &org[r], 2*(pc+q), k)
				hi := im.valueBF16(in, r < rows, base[r], &org[r], 2*(pc+q)+1, k)
				sliver[q*bf16MR+r] = uint32(lo) | uint32(hi)<<16
			}
		}
	}
}

// packPairRuns is packConvABF16's sliver for an even channel count and
// contiguous channels: tap by tap, each row's run of pairs read as words
// (zeros in padding), the six runs interleaved word by word into the
// sliver (written front to back: a row at a time wrote it six words
// apart, and packing took as long as the products).
func (im *im2col) packPairRuns(sliver []uint32, in []uint16, rows int, base *[bf16MR]int, org *[bf16MR][8]int, pc, kb int) {
	p := im.p
	half := im.cin / 2 // pairs a tap
	var kpos [8]int
	var src [bf16MR][]uint32
	var joined [bf16MR][]uint32 // where a row's pairs are not words in memory
	for q := 0; q < kb; {
		tap, c := (pc+q)/half, (pc+q)%half
		run := min(half-c, kb-q)
		tapPosition(p, tap, &kpos)
		// ld: the rows' distance in words where all six are words of the
		// image equally far apart (0 otherwise).
		ld, off0 := 0, 0
		for r := range bf16MR {
			off, ok := im.tapOffset(r < rows, base[r], &org[r], &kpos)
			switch {
			case !ok:
				ld = -1
			case r == 0:
				off0 = off
			case r == 1 && ld == 0 && (off-off0)%2 == 0 && off > off0:
				ld = (off - off0) / 2
			case ld > 0 && off-off0 != 2*r*ld:
				ld = -1
			}
			if !ok {
				src[r] = zeroWords[:run]
				continue
			}
			h := in[off+2*c : off+2*(c+run)]
			if w, ok := wordsOf(h); ok {
				src[r] = w
				continue
			}
			ld = -1
			if cap(joined[r]) < run {
				joined[r] = make([]uint32, run, max(run, 64))
			}
			w := joined[r][:run]
			for x := range w {
				w[x] = uint32(h[2*x]) | uint32(h[2*x+1])<<16
			}
			src[r] = w
		}
		interleaveWords6(sliver[q*bf16MR:(q+run)*bf16MR], &src, max(ld, 0))
		q += run
	}
}

// zeroWords stands in for the image where a tap falls in padding (a run
// is at most one K slice of pairs).
var zeroWords [bf16KC]uint32

// interleaveWords6 writes the runs src (each len(dst)/6 words) into dst
// word by word: dst[6x+r] = src[r][x]. Where the caller knows the runs
// lie ld words apart in one array (ld > 0: six rows of a matrix, six
// neighbouring pixels of an image row), they go through the f32 A
// packer's 8×8 transposes eight words at a time (packA6F32: the words are
// moved, never read as floats).
func interleaveWords6(dst []uint32, src *[bf16MR][]uint32, ld int) {
	n := len(dst) / bf16MR
	x0 := 0
	if chunks := n / 8; ld > 0 && chunks > 0 {
		rows := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(src[0]))), 5*ld+8*chunks)
		if packA6F32(chunks, rows, ld, unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst))) {
			x0 = 8 * chunks
		}
	}
	w0, w1, w2, w3, w4, w5 := src[0][:n], src[1][:n], src[2][:n], src[3][:n], src[4][:n], src[5][:n]
	for x := x0; x < len(w0); x++ {
		o := dst[bf16MR*x : bf16MR*x+bf16MR : bf16MR*x+bf16MR]
		o[0], o[1], o[2], o[3], o[4], o[5] = w0[x], w1[x], w2[x], w3[x], w4[x], w5[x]
	}
}

// wordsOf is s's pairs as the 32-bit words they are in memory, where s
// starts on a 4-byte boundary (on a little-endian machine, each word's
// low half the pair's first value).
func wordsOf(s []uint16) ([]uint32, bool) {
	if !littleEndian || len(s) < 2 || uintptr(unsafe.Pointer(unsafe.SliceData(s)))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), len(s)/2), true
}

// valueBF16 is the im2col matrix's value at column col of a row (zero
// past k, in padding, or for a row past the block's end).
func (im *im2col) valueBF16(in []uint16, row bool, base int, org *[8]int, col, k int) uint16 {
	if !row || col >= k {
		return 0
	}
	p := im.p
	tap, c := col/im.cin, col%im.cin
	var kpos [8]int
	tapPosition(p, tap, &kpos)
	off, ok := im.tapOffset(true, base, org, &kpos)
	if !ok {
		return 0
	}
	return in[off+c*p.InChannelStride]
}
