package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvNCHWAgainstDefinition runs random channels-first convolutions
// (strides, padding on either side, kernel and input dilation, groups, batches,
// rows that do and do not fill whole slivers) against refConv.
func TestConvNCHWAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for i := range 150 {
		g := 1 + rng.IntN(2)
		p := &ConvNCHW{Batch: 1 + rng.IntN(2), Groups: g,
			InChannels: g * (1 + rng.IntN(20)), OutChannels: g * (1 + rng.IntN(20)),
			InH: 1 + rng.IntN(12), InW: 1 + rng.IntN(40), KH: 1 + rng.IntN(3), KW: 1 + rng.IntN(5),
			StrideH: 1 + rng.IntN(2), StrideW: 1 + rng.IntN(2), DilH: 1 + rng.IntN(2), DilW: 1 + rng.IntN(2)}
		if i%3 == 0 {
			p.StrideW, p.DilW = 1, 1
		}
		p.LhsH, p.LhsW = 1, 1
		if i%4 == 1 { // a transposed convolution: input dilation, stride 1
			p.LhsH, p.LhsW, p.StrideH, p.StrideW = 1+rng.IntN(3), 2+rng.IntN(2), 1, 1
		}
		p.PadH, p.PadW = rng.IntN(p.KH+1), rng.IntN(p.KW+1)
		hiH, hiW := rng.IntN(p.KH+1), rng.IntN(p.KW+1)
		p.OutH = max(0, ((p.InH-1)*p.LhsH+1+p.PadH+hiH-((p.KH-1)*p.DilH+1))/p.StrideH+1)
		p.OutW = max(0, ((p.InW-1)*p.LhsW+1+p.PadW+hiW-((p.KW-1)*p.DilW+1))/p.StrideW+1)
		if i%5 == 0 { // a 1×1 at stride 1: the plain product
			p.KH, p.KW, p.StrideH, p.StrideW, p.PadH, p.PadW, p.LhsH, p.LhsW = 1, 1, 1, 1, 0, 0, 1, 1
			p.OutH, p.OutW = p.InH, p.InW
		}
		if p.OutH == 0 || p.OutW == 0 {
			continue
		}
		cin, taps := p.InChannels/g, p.KH*p.KW
		ref := &Conv{Batch: p.Batch, InChannels: p.InChannels, OutChannels: p.OutChannels, Groups: g,
			InSpatial: []int{p.InH, p.InW}, OutSpatial: []int{p.OutH, p.OutW}, Kernel: []int{p.KH, p.KW},
			Stride: []int{p.StrideH, p.StrideW}, PadLo: []int{p.PadH, p.PadW}, LhsDil: []int{p.LhsH, p.LhsW}, RhsDil: []int{p.DilH, p.DilW},
			InBatchStride: p.InChannels * p.InH * p.InW, InChannelStride: p.InH * p.InW, InSpatialStrides: []int{p.InW, 1},
			KernelInStride: 1, KernelOutStride: taps * cin, KernelSpatialStrides: []int{p.KW * cin, cin}}
		in := randSlice[float32](p.Batch*p.InChannels*p.InH*p.InW, rng)
		kern := randSlice[float32](p.OutChannels*taps*cin, rng)
		want := refConv(ref, in, kern) // [batch, pixels, channels]
		pixels := p.OutH * p.OutW
		for _, threads := range []int{1, 2} {
			out := make([]float32, p.Batch*p.OutChannels*pixels)
			for j := range out {
				out[j] = float32(math.NaN())
			}
			ConvNCHWF32(p, in, kern, out, threads)
			for b := range p.Batch {
				for o := range p.OutChannels {
					for px := range pixels {
						got, w := float64(out[(b*p.OutChannels+o)*pixels+px]), want[(b*pixels+px)*p.OutChannels+o]
						if !(math.Abs(got-w) <= 1e-4*(1+math.Abs(w))) {
							t.Fatalf("case %d %+v threads %d: out[%d,%d,%d] = %v, want %v", i, *p, threads, b, o, px, got, w)
						}
					}
				}
			}
		}
	}
}

// TestConvNCHWLarge covers K blocks that split a tap's channels and
// products big enough to run on two threads, by columns.
func TestConvNCHWLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, s := range []struct{ cin, cout, side, k, stride int }{{96, 24, 40, 3, 1}, {100, 30, 33, 3, 2}, {40, 70, 30, 1, 1}} {
		p := &ConvNCHW{Batch: 1, Groups: 1, InChannels: s.cin, OutChannels: s.cout, InH: s.side, InW: s.side,
			KH: s.k, KW: s.k, StrideH: s.stride, StrideW: s.stride, PadH: s.k / 2, PadW: s.k / 2, DilH: 1, DilW: 1}
		p.OutH = (s.side+2*(s.k/2)-s.k)/s.stride + 1
		p.OutW = p.OutH
		taps := s.k * s.k
		ref := &Conv{Batch: 1, InChannels: s.cin, OutChannels: s.cout, Groups: 1,
			InSpatial: []int{s.side, s.side}, OutSpatial: []int{p.OutH, p.OutW}, Kernel: []int{s.k, s.k},
			Stride: []int{s.stride, s.stride}, PadLo: []int{p.PadH, p.PadW}, LhsDil: []int{1, 1}, RhsDil: []int{1, 1},
			InBatchStride: s.cin * s.side * s.side, InChannelStride: s.side * s.side, InSpatialStrides: []int{s.side, 1},
			KernelInStride: 1, KernelOutStride: taps * s.cin, KernelSpatialStrides: []int{s.k * s.cin, s.cin}}
		in := randSlice[float32](s.cin*s.side*s.side, rng)
		kern := randSlice[float32](s.cout*taps*s.cin, rng)
		want := refConv(ref, in, kern)
		pixels := p.OutH * p.OutW
		out := make([]float32, s.cout*pixels)
		ConvNCHWF32(p, in, kern, out, 2)
		for o := range s.cout {
			for px := range pixels {
				got, w := float64(out[o*pixels+px]), want[px*s.cout+o]
				if !(math.Abs(got-w) <= 1e-4*(1+math.Abs(w))) {
					t.Fatalf("%+v: out[%d,%d] = %v, want %v", s, o, px, got, w)
				}
			}
		}
	}
}

// TestConvDepthwiseNCHW runs channels-first depthwise convolutions, big
// enough for several strips and two threads, against refConv.
func TestConvDepthwiseNCHW(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, s := range []struct{ batch, c, mult, h, w, k, stride, pad, dil int }{
		{1, 16, 1, 160, 40, 3, 1, 1, 1}, {2, 24, 2, 50, 70, 3, 2, 1, 1}, {1, 40, 1, 30, 33, 5, 1, 2, 2},
		{2, 200, 1, 2, 96, 5, 1, 2, 1}, {1, 8, 1, 9, 9, 3, 2, 0, 1}, {1, 32, 1, 64, 64, 3, 1, 5, 1},
	} {
		p := newConv(s.batch, s.c, s.c*s.mult, s.c, []int{s.h, s.w}, []int{s.k, s.k}, []int{s.stride, s.stride},
			[]int{s.pad, s.pad}, []int{s.pad, s.pad}, []int{1, 1}, []int{s.dil, s.dil}, true)
		// The kernel channels-minor: [kh, kw, 1, out].
		o := s.c * s.mult
		p.KernelOutStride, p.KernelInStride, p.KernelSpatialStrides = 1, o, []int{s.k * o, o}
		if !CanConvDepthwiseNCHW(p) {
			t.Fatalf("%+v: not taken", s)
		}
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](s.k*s.k*o, rng)
		want := refConv(p, in, kern) // [batch, pixels, channels]
		pixels := p.OutSpatial[0] * p.OutSpatial[1]
		for _, threads := range []int{1, 2} {
			out := make([]float32, s.batch*o*pixels)
			for i := range out {
				out[i] = float32(math.NaN())
			}
			ConvDepthwiseNCHWF32(p, in, kern, out, threads)
			for b := range s.batch {
				for ch := range o {
					for px := range pixels {
						got, w := float64(out[(b*o+ch)*pixels+px]), want[(b*pixels+px)*o+ch]
						if !(math.Abs(got-w) <= 1e-4*(1+math.Abs(w))) {
							t.Fatalf("%+v threads %d: out[%d,%d,%d] = %v, want %v", s, threads, b, ch, px, got, w)
						}
					}
				}
			}
		}
	}
}

// TestConvNCHWItems covers products too small to split but together
// worth two threads: a batch of two images in two groups, one thread a
// product.
func TestConvNCHWItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	p := &ConvNCHW{Batch: 2, Groups: 2, InChannels: 40, OutChannels: 60, InH: 22, InW: 22, OutH: 22, OutW: 22,
		KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilH: 1, DilW: 1, LhsH: 1, LhsW: 1}
	cin, cout, taps, pixels := 20, 30, 9, 22*22
	if !GemmRunsInline(cout, pixels, taps*cin, false) || 2*4*cout*pixels*taps*cin < gemmParallelFlops {
		t.Fatal("the shape no longer makes small products worth two threads")
	}
	ref := &Conv{Batch: 2, InChannels: 40, OutChannels: 60, Groups: 2,
		InSpatial: []int{22, 22}, OutSpatial: []int{22, 22}, Kernel: []int{3, 3},
		Stride: []int{1, 1}, PadLo: []int{1, 1}, LhsDil: []int{1, 1}, RhsDil: []int{1, 1},
		InBatchStride: 40 * pixels, InChannelStride: pixels, InSpatialStrides: []int{22, 1},
		KernelInStride: 1, KernelOutStride: taps * cin, KernelSpatialStrides: []int{3 * cin, cin}}
	in := randSlice[float32](2*40*pixels, rng)
	kern := randSlice[float32](60*taps*cin, rng)
	want := refConv(ref, in, kern)
	out := make([]float32, 2*60*pixels)
	ConvNCHWF32(p, in, kern, out, 2)
	for b := range 2 {
		for o := range 60 {
			for px := range pixels {
				got, w := float64(out[(b*60+o)*pixels+px]), want[(b*pixels+px)*60+o]
				if !(math.Abs(got-w) <= 1e-4*(1+math.Abs(w))) {
					t.Fatalf("out[%d,%d,%d] = %v, want %v", b, o, px, got, w)
				}
			}
		}
	}
}
