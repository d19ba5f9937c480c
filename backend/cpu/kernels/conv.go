package kernels

import "fmt"

// Conv describes a convolution in XLA's terms, with every operand read
// through strides so any dimension numbers work without transposing:
//
//	out[b, o..., g*OutPerGroup + j] = Σ over kernel positions k... and
//	  channels c < InChannels/Groups of
//	  in[b, pos..., g*InPerGroup + c] · kernel[k..., c, g*OutPerGroup + j]
//	pos_d = (o_d*Stride_d - PadLo_d + k_d*RhsDil_d) / LhsDil_d
//
// where a position that is negative, past the input or between dilated
// input elements reads zero. The output is row-major [Batch, OutSpatial...,
// OutChannels]. (XLA's window reversal and batch_group_count are not
// covered: the backend maps them onto this or falls back.)
type Conv struct {
	Batch, InChannels, OutChannels, Groups int
	InSpatial, OutSpatial, Kernel          []int
	Stride, PadLo, LhsDil, RhsDil          []int
	// Element strides of the input (batch, each spatial dimension,
	// channel) and of the kernel (each spatial dimension, input channel,
	// output channel).
	InBatchStride, InChannelStride  int
	InSpatialStrides                []int
	KernelInStride, KernelOutStride int
	KernelSpatialStrides            []int
}

func (p *Conv) check() error {
	n := len(p.InSpatial)
	for _, s := range [][]int{p.OutSpatial, p.Kernel, p.Stride, p.PadLo, p.LhsDil, p.RhsDil, p.InSpatialStrides, p.KernelSpatialStrides} {
		if len(s) != n {
			return fmt.Errorf("conv: %d spatial dimensions but a list of %d", n, len(s))
		}
	}
	if p.Groups < 1 || p.InChannels%p.Groups != 0 || p.OutChannels%p.Groups != 0 {
		return fmt.Errorf("conv: %d groups do not divide %d input and %d output channels", p.Groups, p.InChannels, p.OutChannels)
	}
	for d := range n {
		if p.Stride[d] < 1 || p.LhsDil[d] < 1 || p.RhsDil[d] < 1 {
			return fmt.Errorf("conv: stride and dilations must be >= 1")
		}
	}
	return nil
}

// ConvF32 computes the convolution into out (row-major [Batch,
// OutSpatial..., OutChannels]) as one GEMM per feature group: M = output
// pixels, N = output channels of the group, K = kernel positions × input
// channels of the group. The image is never expanded: the GEMM's A packer
// gathers im2col rows straight from the input (implicit im2col), the B
// packer reads the kernel through its strides.
func ConvF32(p *Conv, in, kernel, out []float32, threads int) error {
	if err := p.check(); err != nil {
		return err
	}
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	pixels := 1
	for _, o := range p.OutSpatial {
		pixels *= o
	}
	taps := 1
	for _, k := range p.Kernel {
		taps *= k
	}
	m, k := p.Batch*pixels, taps*cin
	for g := range p.Groups {
		im := &im2col{p: p, in: in, cin: cin, c0: g * cin, pixels: pixels, taps: taps}
		pa := func(dst []float32, ic, pc, mb, kb int) { im.pack(dst, ic, pc, mb, kb) }
		pb := func(dst []float32, pc, jc, kb, nb, from, to int) {
			packConvKernel(dst, p, kernel, g*cout+jc, cin, pc, kb, nb, from, to)
		}
		gemmCore(m, cout, k, pa, pb, out[g*cout:], p.OutChannels, false, threads, sgemmMR, sgemmNR, kernelF32)
	}
	return nil
}

// im2col packs rows of the implicit im2col matrix: row i is output pixel
// (batch, o...), column q is (kernel position, channel), channel fastest.
type im2col struct {
	p                     *Conv
	in                    []float32
	cin, c0, pixels, taps int
}

func (im *im2col) pack(dst []float32, ic, pc, mb, kb int) {
	p := im.p
	ns := len(p.InSpatial)
	var org, pos [8]int // per spatial dimension
	var kpos [8]int
	o := 0
	for s := 0; s < mb; s += sgemmMR {
		sliver := dst[o : o+sgemmMR*kb]
		rows := min(sgemmMR, mb-s)
		for r := range sgemmMR {
			if r >= rows {
				for q := range kb {
					sliver[q*sgemmMR+r] = 0
				}
				continue
			}
			// Output pixel of row i: batch b and position o... .
			i := ic + s + r
			b, rem := i/im.pixels, i%im.pixels
			for d := ns - 1; d >= 0; d-- {
				od := rem % p.OutSpatial[d]
				rem /= p.OutSpatial[d]
				org[d] = od*p.Stride[d] - p.PadLo[d]
			}
			base := b * p.InBatchStride
			for q := 0; q < kb; {
				col := pc + q
				tap, c := col/im.cin, col%im.cin
				run := min(im.cin-c, kb-q) // channels of one kernel tap
				t := tap
				for d := ns - 1; d >= 0; d-- {
					kpos[d] = t % p.Kernel[d]
					t /= p.Kernel[d]
				}
				off, ok := base, true
				for d := range ns {
					pos[d] = org[d] + kpos[d]*p.RhsDil[d]
					if pos[d] < 0 || pos[d]%p.LhsDil[d] != 0 || pos[d]/p.LhsDil[d] >= p.InSpatial[d] {
						ok = false
						break
					}
					off += pos[d] / p.LhsDil[d] * p.InSpatialStrides[d]
				}
				if ok {
					off += (im.c0 + c) * p.InChannelStride
					for t := range run {
						sliver[(q+t)*sgemmMR+r] = im.in[off+t*p.InChannelStride]
					}
				} else {
					for t := range run {
						sliver[(q+t)*sgemmMR+r] = 0
					}
				}
				q += run
			}
		}
		o += sgemmMR * kb
	}
}

// packConvKernel packs rows [pc, pc+kb) (kernel position, channel) and
// output-channel slivers [from, to) of one group's kernel matrix. The
// kernel's input-channel dimension holds one group's channels (XLA's
// kernel shape has InChannels/Groups there), so only the output channel
// moves with the group.
func packConvKernel(dst []float32, p *Conv, kernel []float32, co0, cin, pc, kb, nb, from, to int) {
	ns := len(p.Kernel)
	o := from * sgemmNR * kb
	for s := from * sgemmNR; s < min(nb, to*sgemmNR); s += sgemmNR {
		cols := min(sgemmNR, nb-s)
		for q := range kb {
			row := pc + q
			tap, c := row/cin, row%cin
			off := c * p.KernelInStride
			for d := ns - 1; d >= 0; d-- {
				off += tap % p.Kernel[d] * p.KernelSpatialStrides[d]
				tap /= p.Kernel[d]
			}
			d := dst[o : o+sgemmNR]
			for j := range cols {
				d[j] = kernel[off+(co0+s+j)*p.KernelOutStride]
			}
			clear(d[cols:])
			o += sgemmNR
		}
	}
}
