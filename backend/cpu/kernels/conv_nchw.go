package kernels

// Convolution of channels-first images (ONNX's NCHW, with the kernel's
// output channels outermost): each example and group is one GEMM whose
// C is the output's [channels, pixels] plane as it lies, with no copy of
// the image or the result to channels-last and back:
//
//	out[o, pixel] = Σ over (tap, c) of kernel[o, tap, c] · image[c, pixel + tap]
//
// M is the output channels, N the output pixels, K the kernel taps times
// the input channels. The B packer gathers the implicit im2col matrix
// straight from the image: for a sliver of sixteen pixels of one output
// row at stride 1, a tap's rows for a run of channels are sixteen
// contiguous values each, a plane apart, which the vector row copy moves
// in one call. A 1×1 convolution at stride 1 is the plain product of
// the kernel with the image matrix [channels, pixels].

// ConvNCHW describes a 2-D convolution of channels-first images: input
// [Batch, InChannels, InH, InW], kernel [OutChannels, KH, KW,
// InChannels/Groups] (input channels innermost, so a K block's rows run
// through the channels of one tap), output [Batch, OutChannels, OutH,
// OutW], all dense row-major. A 1-D convolution is one with InH = OutH =
// KH = 1.
type ConvNCHW struct {
	Batch, InChannels, OutChannels, Groups int
	InH, InW, OutH, OutW, KH, KW           int
	StrideH, StrideW, PadH, PadW           int // PadH, PadW: the low side's
	DilH, DilW                             int // kernel (rhs) dilation
	// LhsH, LhsW are the input dilation (a transposed convolution's
	// stride), 0 or 1 for none; with it the strides must be 1.
	LhsH, LhsW int
}

// ConvNCHWF32 computes convolution p; threads split each product.
func ConvNCHWF32(p *ConvNCHW, in, kernel, out []float32, threads int) {
	ConvNCHWEpilogueF32(p, in, kernel, out, threads, nil)
}

// ConvNCHWEpilogueF32 computes convolution p like ConvNCHWF32 and hands
// every block of out to epi (nil: none) as soon as it is final, out
// seen as the matrix [Batch·OutChannels, OutH·OutW]: a channel of an
// image is a row, so a per-channel bias is a per-row value. A transposed
// convolution (input dilation) hands over all of out at the end.
func ConvNCHWEpilogueF32(p *ConvNCHW, in, kernel, out []float32, threads int, epi Epilogue) {
	if max(p.LhsH, 1) > 1 || max(p.LhsW, 1) > 1 {
		convPhases(p, in, kernel, out, threads)
		if epi != nil && p.OutH*p.OutW > 0 {
			epi(0, 0, p.Batch*p.OutChannels, p.OutH*p.OutW)
		}
		return
	}
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	taps := p.KH * p.KW
	k := taps * cin
	pixels := p.OutH * p.OutW
	plane := p.InH * p.InW
	if pixels == 0 || cout == 0 {
		return
	}
	pointwise := taps == 1 && p.StrideH == 1 && p.StrideW == 1 && p.PadH == 0 && p.PadW == 0 &&
		p.OutH == p.InH && p.OutW == p.InW
	items := p.Batch * p.Groups
	if items > 1 && threads > 1 && GemmRunsInline(cout, pixels, k, false) && 2*items*cout*pixels*k >= gemmParallelFlops {
		// Products each too small to split, several of them (a batch of
		// two images): one thread each.
		t := min(threads, items)
		parallel(t, func(i int) {
			q := *p
			for it := i * items / t; it < (i+1)*items/t; it++ {
				b, g := it/p.Groups, it%p.Groups
				q.Batch, q.Groups, q.InChannels, q.OutChannels = 1, 1, cin, cout
				lo := (b*p.InChannels + g*cin) * plane
				olo := (b*p.OutChannels + g*cout) * pixels
				ConvNCHWEpilogueF32(&q, in[lo:lo+cin*plane], kernel[g*cout*k:(g+1)*cout*k], out[olo:olo+cout*pixels], 1,
					shiftEpilogue(epi, b*p.OutChannels+g*cout))
			}
		})
		return
	}
	for b := range p.Batch {
		for g := range p.Groups {
			c := out[(b*p.OutChannels+g*cout)*pixels:]
			c = c[:cout*pixels]
			e := shiftEpilogue(epi, b*p.OutChannels+g*cout)
			if k == 0 {
				clear(c)
				if e != nil {
					e(0, 0, cout, pixels)
				}
				continue
			}
			a := Strided[float32]{Data: kernel[g*cout*k : (g+1)*cout*k], Row: k, Col: 1}
			src := in[(b*p.InChannels+g*cin)*plane : (b*p.InChannels+(g+1)*cin)*plane]
			if pointwise {
				gemmF32(cout, pixels, cin, a, Strided[float32]{Data: src, Row: plane, Col: 1}, c, pixels, false, threads, e, false)
				continue
			}
			pa := func(dst []float32, ic, pc, mb, kb int) { packA(dst, a, ic, pc, mb, kb, sgemmMR) }
			pb := func(dst []float32, pc, jc, kb, nb, from, to int) {
				p.packB(dst, src, cin, pc, jc, kb, nb, from, to)
			}
			blk := packedBlock(pa, sgemmMR, sgemmNR, kernelF32, wideFor(cout, pixels, k))
			// As gemm splits: by columns where B is wide (each thread packs
			// its own slivers of the image), else by rows.
			if t := splitThreads(cout, pixels, k, threads, sgemmMR); t > 1 && columnSplit && (pixels+sgemmNR-1)/sgemmNR >= 4*t {
				gemmColumns(cout, pixels, k, blk, pb, c, pixels, false, t, sgemmMR, sgemmNR, e)
				continue
			}
			gemmCore(cout, pixels, k, blk, pb, c, pixels, false, threads, sgemmMR, sgemmNR, e)
		}
	}
}

// ConvNCHWRunsInline reports whether ConvNCHWF32 runs p on one
// goroutine.
func ConvNCHWRunsInline(p *ConvNCHW) bool {
	cin, cout := p.InChannels/max(p.Groups, 1), p.OutChannels/max(p.Groups, 1)
	k, pixels := p.KH*p.KW*cin, p.OutH*p.OutW
	return 2*p.Batch*p.Groups*cout*pixels*k < gemmParallelFlops
}

// shiftEpilogue makes the epilogue of rows [r0, ...) of epi's matrix.
func shiftEpilogue(epi Epilogue, r0 int) Epilogue {
	if epi == nil || r0 == 0 {
		return epi
	}
	return func(i, j, rows, cols int) { epi(r0+i, j, rows, cols) }
}

// packB packs rows [pc, pc+kb) (tap, channel; channel fastest) and
// sixteen-pixel slivers [from, to) of pixels [jc, jc+nb) of one group's
// implicit im2col matrix, src being the group's channels of one example.
func (p *ConvNCHW) packB(dst, src []float32, cin, pc, jc, kb, nb, from, to int) {
	const nr = sgemmNR
	to = min(to, (nb+nr-1)/nr)
	plane := p.InH * p.InW
	var offs [nr]int
	var ihb, iwb [nr]int
	for sl := from; sl < to; sl++ {
		d := dst[sl*kb*nr : (sl+1)*kb*nr]
		p0 := jc + sl*nr
		cols := min(nr, nb-sl*nr)
		oh, ow := p0/p.OutW, p0%p.OutW
		oneRow := cols == nr && ow+nr <= p.OutW && p.StrideW == 1
		if !oneRow {
			p.sliverOrigins(&ihb, &iwb, oh, ow, cols)
		}
		tap, c := pc/cin, pc%cin
		for r := 0; r < kb; {
			run := min(kb-r, cin-c)
			kh, kw := tap/p.KW, tap%p.KW
			rows := d[r*nr : (r+run)*nr]
			if oneRow {
				ih := oh*p.StrideH - p.PadH + kh*p.DilH
				iw := ow - p.PadW + kw*p.DilW
				switch {
				case ih < 0 || ih >= p.InH:
					clear(rows)
				case iw >= 0 && iw+nr <= p.InW:
					off := c*plane + ih*p.InW + iw
					if !packRows16F32(run, src[off:], plane, rows) {
						for q := range run {
							copy(rows[q*nr:(q+1)*nr], src[off+q*plane:off+q*plane+nr])
						}
					}
				default: // the row's ends fall in the padding
					p.packRowEnds(rows, src[c*plane+ih*p.InW:], run, iw)
				}
			} else {
				for j := range nr {
					ih, iw := ihb[j]+kh*p.DilH, iwb[j]+kw*p.DilW
					offs[j] = -1
					if ih >= 0 && ih < p.InH && iw >= 0 && iw < p.InW {
						offs[j] = c*plane + ih*p.InW + iw
					}
				}
				for q := range run {
					row := (*[nr]float32)(rows[q*nr:])
					base := q * plane
					for j, o := range offs {
						if o >= 0 {
							row[j] = src[base+o]
						} else {
							row[j] = 0
						}
					}
				}
			}
			r += run
			if c += run; c == cin {
				c, tap = 0, tap+1
			}
		}
	}
}

// sliverOrigins sets the input position under kernel tap (0, 0) of each
// pixel of a sliver not within one output row, from output pixel
// (oh, ow) on: its cols pixels, then past them a row that no tap reaches
// (they pack as zeros).
func (p *ConvNCHW) sliverOrigins(ihb, iwb *[sgemmNR]int, oh, ow, cols int) {
	h, w := oh, ow
	for j := range sgemmNR {
		ihb[j], iwb[j] = h*p.StrideH-p.PadH, w*p.StrideW-p.PadW
		if j >= cols {
			ihb[j] = -1 << 40
		}
		if w++; w == p.OutW {
			w, h = 0, h+1
		}
	}
}

// packRowEnds packs run channels of sixteen pixels of one input row from
// column iw on, src starting at that row of the first channel, where the
// row's ends fall in the padding: zeros there.
func (p *ConvNCHW) packRowEnds(rows, src []float32, run, iw int) {
	const nr = sgemmNR
	plane := p.InH * p.InW
	lo, hi := max(0, -iw), min(nr, p.InW-iw)
	for q := range run {
		row := rows[q*nr : (q+1)*nr]
		clear(row)
		if lo < hi {
			o := iw + q*plane
			copy(row[lo:hi], src[o+lo:o+hi])
		}
	}
}

// convPhases computes a convolution with input dilation (ONNX's
// ConvTranspose) phase by phase: the output pixels of one residue
// (a, b) modulo the dilation see the image through a fixed subset of
// the kernel's taps, evenly spaced, so they form an ordinary convolution
// of the undilated image with that sub-kernel, computed into scratch and
// dealt into place. The holes the dilation inserts are never multiplied:
// a 2×2 transposed convolution of stride 2 is four 1×1 products.
func convPhases(p *ConvNCHW, in, kernel, out []float32, threads int) {
	lh, lw := max(p.LhsH, 1), max(p.LhsW, 1)
	cin := p.InChannels / p.Groups
	pixels := p.OutH * p.OutW
	for a := range min(lh, p.OutH) {
		th, sh := phaseTaps(a, p.PadH, p.KH, p.DilH, lh)
		for b := range min(lw, p.OutW) {
			tw, sw := phaseTaps(b, p.PadW, p.KW, p.DilW, lw)
			q := *p
			q.LhsH, q.LhsW = 1, 1
			q.OutH, q.OutW = (p.OutH-a+lh-1)/lh, (p.OutW-b+lw-1)/lw
			q.KH, q.KW = len(th), len(tw)
			q.PadH, q.PadW, q.DilH, q.DilW = -sh.first, -sw.first, sh.step, sw.step
			// Pooled scratch: fresh memory costs a page fault per 4 KiB
			// (a detection head's 160×160 phases: 600 KB each).
			sub := getBuf[float32](p.Batch * p.OutChannels * q.OutH * q.OutW)
			if q.KH == 0 || q.KW == 0 {
				clear(sub)
			} else {
				w := getBuf[float32](p.OutChannels * q.KH * q.KW * cin)
				for o := range p.OutChannels {
					for i, kh := range th {
						for j, kw := range tw {
							src := ((o*p.KH+kh)*p.KW + kw) * cin
							copy(w[((o*q.KH+i)*q.KW+j)*cin:][:cin], kernel[src:src+cin])
						}
					}
				}
				ConvNCHWF32(&q, in, w, sub, threads)
				putBuf(w)
			}
			subPixels := q.OutH * q.OutW
			for bc := range p.Batch * p.OutChannels {
				s := sub[bc*subPixels : (bc+1)*subPixels]
				d := out[bc*pixels : (bc+1)*pixels]
				for i := range q.OutH {
					row := d[(a+i*lh)*p.OutW+b:]
					for j, v := range s[i*q.OutW : (i+1)*q.OutW] {
						row[j*lw] = v
					}
				}
			}
			putBuf(sub)
		}
	}
}

// tapSpacing is where a phase's taps fall in the undilated image: the
// first at offset first from the output position's index, the next
// step further each.
type tapSpacing struct{ first, step int }

// phaseTaps lists the kernel taps (along one dimension) that output
// positions a, a+l, a+2l, ... read at image positions rather than holes
// of dilation l, and where they fall.
func phaseTaps(a, pad, k, dil, l int) ([]int, tapSpacing) {
	var taps []int
	var sp tapSpacing
	for t := range k {
		at := a - pad + t*dil // in the dilated image, for output a
		if at%l != 0 {
			continue
		}
		off := floorDiv(at, l)
		if len(taps) == 0 {
			sp.first = off
		} else if len(taps) == 1 {
			sp.step = off - sp.first
		}
		taps = append(taps, t)
	}
	if sp.step == 0 {
		sp.step = 1
	}
	return taps, sp
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
