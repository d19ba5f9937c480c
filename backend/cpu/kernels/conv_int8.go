package kernels

import (
	"encoding/binary"
	"fmt"
)

// ConvInt8 describes a quantized 2-D convolution of channels-first 8-bit
// images by an s8 kernel to s32, as ONNX's ConvInteger and QLinearConv
// write it: zero points subtracted from both operands before the
// products,
//
//	out[b, o, y, x] = Σ over c, i, j of (in[b, c, y·sh+i·dh−ph, x·sw+j·dw−pw] − XZero) ·
//	                  (kernel[o, c, i, j] − WZero[o])
//
// with padding reading XZero (so it adds nothing), input
// [Batch, InChannels, InH, InW] of u8 (XUnsigned) or s8, kernel
// [OutChannels, InChannels/Groups, KH, KW] (ONNX's and HLO's OIHW), output
// [Batch, OutChannels, OutH, OutW], all dense row-major. Sums wrap modulo
// 2^32 as s32 arithmetic does, so the result is the evaluator's bit for
// bit.
type ConvInt8 struct {
	Batch, InChannels, OutChannels, Groups int
	InH, InW, OutH, OutW, KH, KW           int
	StrideH, StrideW, PadH, PadW           int // PadH, PadW: the low side's
	DilH, DilW                             int
	XUnsigned                              bool
	XZero                                  int32
	WZero                                  []int32 // per output channel; nil: none
	// KernelSums, where set, are ConvInt8KernelSums of the kernel the
	// call is given (a constant kernel's, made once): each call otherwise
	// sums every output channel's row of the kernel again, a fifth of a
	// small quantized ResNet's time.
	KernelSums []int32
}

func (p *ConvInt8) check(nx, nw, nout int) error {
	for _, v := range []int{p.Batch, p.InChannels, p.OutChannels, p.InH, p.InW, p.OutH, p.OutW, p.KH, p.KW, p.PadH, p.PadW} {
		if v < 0 || v >= 1<<31 {
			return fmt.Errorf("%w: convolution size %d", ErrGemmArgs, v)
		}
	}
	if p.Groups < 1 || p.InChannels%p.Groups != 0 || p.OutChannels%p.Groups != 0 ||
		min(p.StrideH, p.StrideW, p.DilH, p.DilW) < 1 {
		return fmt.Errorf("%w: convolution groups %d, strides %d,%d, dilations %d,%d", ErrGemmArgs, p.Groups, p.StrideH, p.StrideW, p.DilH, p.DilW)
	}
	lo, hi := int32(-128), int32(127)
	if p.XUnsigned {
		lo, hi = 0, 255
	}
	if p.XZero < lo || p.XZero > hi || (p.WZero != nil && len(p.WZero) != p.OutChannels) {
		return fmt.Errorf("%w: zero points %d and %d values for %d channels", ErrGemmArgs, p.XZero, len(p.WZero), p.OutChannels)
	}
	if p.KernelSums != nil && len(p.KernelSums) != p.OutChannels {
		return fmt.Errorf("%w: %d kernel sums for %d channels", ErrGemmArgs, len(p.KernelSums), p.OutChannels)
	}
	wantX := int64(p.Batch) * int64(p.InChannels) * int64(p.InH) * int64(p.InW)
	wantW := int64(p.OutChannels) * int64(p.InChannels/p.Groups) * int64(p.KH) * int64(p.KW)
	wantO := int64(p.Batch) * int64(p.OutChannels) * int64(p.OutH) * int64(p.OutW)
	if int64(nx) < wantX || int64(nw) < wantW || int64(nout) < wantO {
		return fmt.Errorf("%w: convolution operands of %d, %d and %d elements for %d, %d and %d", ErrGemmArgs, nx, nw, nout, wantX, wantW, wantO)
	}
	return nil
}

// im2colBytes bounds the im2col block a call builds (rows of the kernel's
// taps × channels, columns of output pixels): 4 MiB, a share of L3. (A
// variable so tests can make blocks of a few columns.)
var im2colBytes = 4 << 20

// ConvInt8NCHW computes p into out on the 8-bit GEMM: per example and
// group, the output plane [channels, pixels] is the kernel matrix
// [channels, taps·inputs] times an im2col block of the image (as s8: a u8
// image is shifted by −128, which the per-channel correction gives
// back), and the zero points become per-channel and per-pixel terms
// added to the product. It returns an error wrapping ErrGemmArgs,
// touching nothing, when the description or a slice does not fit.
func ConvInt8NCHW(p *ConvInt8, in []byte, kernel []int8, out []int32, threads int) error {
	if err := p.check(len(in), len(kernel), len(out)); err != nil {
		return err
	}
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	k, pixels, plane := cin*p.KH*p.KW, p.OutH*p.OutW, p.InH*p.InW
	if pixels == 0 || cout == 0 || p.Batch == 0 {
		return nil
	}
	rows := convInt8RowTerms(p, kernel, k, p.XUnsigned)
	item := func(it, threads int) {
		b, g := it/p.Groups, it%p.Groups
		src := in[(b*p.InChannels+g*cin)*plane : (b*p.InChannels+(g+1)*cin)*plane]
		a := Strided[int8]{Data: kernel[g*cout*k : (g+1)*cout*k], Row: k, Col: 1}
		c := out[(b*p.OutChannels+g*cout)*pixels : (b*p.OutChannels+(g+1)*cout)*pixels]
		if p.StrideW == 1 {
			p.planeWide(src, a, c, rows[g*cout:(g+1)*cout], g*cout, cin, threads)
		} else {
			p.planeExact(src, a, c, rows[g*cout:(g+1)*cout], g*cout, cin, threads)
		}
	}
	// Several examples or groups: a thread each, whole (the padding,
	// im2col and the terms are serial within one, and an image's GEMM has
	// only its few output channels as rows to split: a batch of 8 ResNet
	// layers ran 185 GOP/s on two threads split within, 243 on one).
	items := p.Batch * p.Groups
	if t := min(threads, items); t > 1 && 2*items*cout*pixels*k >= gemmParallelFlops {
		parallel(t, func(i int) {
			for it := i * items / t; it < (i+1)*items/t; it++ {
				item(it, 1)
			}
		})
		return nil
	}
	for it := range items {
		item(it, threads)
	}
	return nil
}

// planeExact computes one example and group: src its channels of the
// image, a its kernel matrix, c its output channels, rows their terms
// (channels from o0), through im2col blocks of whole output pixels.
func (p *ConvInt8) planeExact(src []byte, a Strided[int8], c, rows []int32, o0, cin, threads int) {
	k, pixels, cout := a.Row, p.OutH*p.OutW, len(rows)
	chunk := min(pixels, max(q8Tile, im2colBytes/max(k, 1)/q8Tile*q8Tile))
	buf := bytePool.get(k * chunk)
	defer bytePool.put(buf)
	var cols []int32
	if p.WZero != nil {
		cols = make([]int32, chunk)
	}
	for j0 := 0; j0 < pixels; j0 += chunk {
		nb := min(chunk, pixels-j0)
		blk := buf[:k*nb]
		p.im2col(blk, src, cin, j0, nb, threads)
		gemmS8(cout, nb, k, a, Strided[int8]{Data: int8sOf(blk), Row: nb, Col: 1}, c[j0:], pixels, false, threads)
		if cols != nil {
			p.columnSums(cols[:nb], blk, k, nb)
		}
		addConvTerms(c[j0:], pixels, nb, rows, cols, p.WZero, o0)
	}
}

// planeWide is planeExact for a unit horizontal stride, through a padded
// copy of the image instead: with its rows Wp = OutW + (KW−1)·DilW wide,
// output pixel (y, x) of tap (i, j) reads the copy at
// (y·StrideH + i·DilH)·Wp + j·DilW + x, so an im2col row of whole
// output rows is one run of the copy per output row (per block when
// StrideH is 1). The GEMM computes Wp columns an output row, the last
// (KW−1)·DilW of them past the output and dropped, which costs a few
// percent of the products and saves cutting every run at the padding.
func (p *ConvInt8) planeWide(src []byte, a Strided[int8], c, rows []int32, o0, cin, threads int) {
	k, cout := a.Row, len(rows)
	wp := p.OutW + (p.KW-1)*p.DilW
	hp := (p.OutH-1)*p.StrideH + (p.KH-1)*p.DilH + 1
	padded := bytePool.get(cin*hp*wp + wp) // a run may read a row's width past the last plane
	defer bytePool.put(padded)
	p.padPlanes(padded[:cin*hp*wp], src, cin, hp, wp)
	ny := max(1, min(p.OutH, im2colBytes/max(k*wp, 1)))
	buf := bytePool.get(k * ny * wp)
	defer bytePool.put(buf)
	tmp := s32Pool.get(cout * ny * wp)
	defer s32Pool.put(tmp)
	var cols []int32
	if p.WZero != nil {
		cols = make([]int32, ny*wp)
	}
	for y0 := 0; y0 < p.OutH; y0 += ny {
		n := min(ny, p.OutH-y0)
		nb := n * wp
		blk := buf[:k*nb]
		parallelRows(k, nb, threads, func(r int) {
			c, tap := r/(p.KH*p.KW), r%(p.KH*p.KW)
			plane := padded[c*hp*wp:]
			d := blk[r*nb : (r+1)*nb]
			at := (y0*p.StrideH+tap/p.KW*p.DilH)*wp + tap%p.KW*p.DilW
			if p.StrideH == 1 {
				copy(d, plane[at:at+nb])
				return
			}
			for y := range n {
				copy(d[y*wp:(y+1)*wp], plane[at+y*p.StrideH*wp:])
			}
		})
		gemmS8(cout, nb, k, a, Strided[int8]{Data: int8sOf(blk), Row: nb, Col: 1}, tmp, nb, false, threads)
		if cols != nil {
			p.columnSums(cols[:nb], blk, k, nb)
		}
		for y := range n {
			// Output row y0+y of every channel: the first OutW of its Wp columns.
			addConvTerms(tmp[y*wp:], nb, p.OutW, rows, offsetCols(cols, y*wp), p.WZero, o0)
			for o := range cout {
				copy(c[o*p.OutH*p.OutW+(y0+y)*p.OutW:][:p.OutW], tmp[o*nb+y*wp:][:p.OutW])
			}
		}
	}
}

func offsetCols(cols []int32, at int) []int32 {
	if cols == nil {
		return nil
	}
	return cols[at:]
}

// padPlanes writes the group's cin channel planes of the image into dst
// as hp×wp planes: the image at row PadH and column PadW, XZero around
// it, each byte as s8 (a u8 image minus 128).
func (p *ConvInt8) padPlanes(dst, src []byte, cin, hp, wp int) {
	pad := byte(p.XZero)
	for c := range cin {
		for yy := range hp {
			row := dst[(c*hp+yy)*wp : (c*hp+yy+1)*wp]
			y := yy - p.PadH
			if y < 0 || y >= p.InH {
				fillBytes(row, pad)
				continue
			}
			line := src[(c*p.InH+y)*p.InW : (c*p.InH+y+1)*p.InW]
			lo := min(wp, p.PadW)
			hi := max(lo, min(wp, p.PadW+p.InW))
			fillBytes(row[:lo], pad)
			copy(row[lo:hi], line)
			fillBytes(row[hi:], pad)
		}
	}
	if p.XUnsigned {
		flipBytes(dst)
	}
}

// parallelRows runs f on rows [0, k) of an im2col block nb wide, the rows
// shared by threads where the block is big enough to pay for them.
func parallelRows(k, nb, threads int, f func(r int)) {
	if 2*k*nb < gemmParallelFlops {
		threads = 1
	}
	threads = max(1, min(threads, k))
	parallel(threads, func(t int) {
		for r := t * k / threads; r < (t+1)*k/threads; r++ {
			f(r)
		}
	})
}

// convInt8RowTerms is, per output channel o, what the zero points and a
// u8 image's shift (when shifted) add to every pixel of o:
//
//	(128·[shifted] − XZero)·Σₖ w[o,k] + K·XZero·WZero[o]
//
// (the product the GEMM forms is Σₖ w·(x − 128·[shifted]); expanding
// Σₖ (x − zx)(w − zw) leaves these terms and −zw·Σₖ x per pixel).
func convInt8RowTerms(p *ConvInt8, kernel []int8, k int, shifted bool) []int32 {
	shift := int32(0)
	if shifted {
		shift = 128
	}
	sums := p.KernelSums
	if sums == nil {
		sums = kernelRowSums(kernel, p.OutChannels, k)
	}
	rows := make([]int32, p.OutChannels)
	for o, s := range sums {
		rows[o] = (shift - p.XZero) * s
		if p.WZero != nil {
			rows[o] += int32(k) * p.XZero * p.WZero[o]
		}
	}
	return rows
}

// ConvInt8KernelSums are the sums of each output channel's row of
// kernel (its taps × group channels) for convolution p, wrapping as s32
// does: ConvInt8.KernelSums, for a kernel that does not change between
// calls.
func ConvInt8KernelSums(p *ConvInt8, kernel []int8) ([]int32, error) {
	k := p.InChannels / max(p.Groups, 1) * p.KH * p.KW
	if p.OutChannels < 0 || k < 0 || len(kernel) < p.OutChannels*k {
		return nil, fmt.Errorf("%w: a kernel of %d values for %d channels of %d", ErrGemmArgs, len(kernel), p.OutChannels, k)
	}
	return kernelRowSums(kernel, p.OutChannels, k), nil
}

// kernelRowSums sums rows rows of k values of kernel, in s32.
func kernelRowSums(kernel []int8, rows, k int) []int32 {
	sums := make([]int32, rows)
	for o := range sums {
		var s int32
		for _, v := range kernel[o*k : (o+1)*k] {
			s += int32(v)
		}
		sums[o] = s
	}
	return sums
}

// addConvTerms adds the channel terms rows and, with zero points of the
// kernel, −WZero[o]·cols[j] to the first nb values of each channel row
// of c (rows ldc apart).
func addConvTerms(c []int32, ldc, nb int, rows, cols, wzero []int32, o0 int) {
	for o, r := range rows {
		row := c[o*ldc : o*ldc+nb]
		if cols == nil {
			for j := range row {
				row[j] += r
			}
			continue
		}
		z := wzero[o0+o]
		for j := range row {
			row[j] += r - z*cols[j]
		}
	}
}

// columnSums sets cols[j] to Σₖ of pixel j's image values (padding
// reading XZero) from the im2col block (s8 bits, a u8 image shifted).
func (p *ConvInt8) columnSums(cols []int32, blk []byte, k, nb int) {
	clear(cols)
	for r := range k {
		for j, v := range blk[r*nb : (r+1)*nb] {
			cols[j] += int32(int8(v))
		}
	}
	if p.XUnsigned {
		for j := range cols {
			cols[j] += 128 * int32(k)
		}
	}
}

// im2col writes pixels [j0, j0+nb) of the group's im2col matrix into dst:
// row (c, i, j) (channel slowest, as the kernel's OIHW), nb bytes a row,
// the image's values and XZero in the padding, each as s8 (a u8 value
// minus 128). Threads share the rows.
func (p *ConvInt8) im2col(dst, src []byte, cin, j0, nb, threads int) {
	plane := p.InH * p.InW
	parallelRows(cin*p.KH*p.KW, nb, threads, func(r int) {
		c, tap := r/(p.KH*p.KW), r%(p.KH*p.KW)
		p.im2colRow(dst[r*nb:(r+1)*nb], src[c*plane:(c+1)*plane], tap/p.KW, tap%p.KW, j0)
	})
}

// im2colRow fills one im2col row: kernel tap (i, j) of one channel plane
// over the output pixels from j0.
func (p *ConvInt8) im2colRow(d, plane []byte, i, j, j0 int) {
	pad := byte(p.XZero)
	for n := 0; n < len(d); {
		oy, ox := (j0+n)/p.OutW, (j0+n)%p.OutW
		run := min(len(d)-n, p.OutW-ox) // the rest of this output row
		seg := d[n : n+run]
		n += run
		y := oy*p.StrideH + i*p.DilH - p.PadH
		if y < 0 || y >= p.InH {
			fillBytes(seg, pad)
			continue
		}
		line := plane[y*p.InW : (y+1)*p.InW]
		x0 := ox*p.StrideW + j*p.DilW - p.PadW
		if p.StrideW == 1 {
			// Columns before the image, inside it, past it.
			lo := min(run, max(0, -x0))
			hi := max(lo, min(run, p.InW-x0))
			fillBytes(seg[:lo], pad)
			copy(seg[lo:hi], line[x0+lo:x0+hi])
			fillBytes(seg[hi:], pad)
			continue
		}
		for q := range seg {
			if x := x0 + q*p.StrideW; x >= 0 && x < p.InW {
				seg[q] = line[x]
			} else {
				seg[q] = pad
			}
		}
	}
	if p.XUnsigned {
		flipBytes(d)
	}
}

// fillBytes sets every byte of d to v, by doubling copies (memmove's
// speed, not a byte loop's).
func fillBytes(d []byte, v byte) {
	if len(d) == 0 {
		return
	}
	d[0] = v
	for n := 1; n < len(d); n *= 2 {
		copy(d[n:], d[:n])
	}
}

// flipBytes xors every byte with 0x80 (u8 to s8 minus 128), eight at a
// time.
func flipBytes(d []byte) {
	n := len(d) / 8 * 8
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(d[i:], binary.LittleEndian.Uint64(d[i:])^0x8080808080808080)
	}
	for i := n; i < len(d); i++ {
		d[i] ^= 0x80
	}
}
