package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// refConv is the definition of Conv, looped directly in float64.
func refConv(p *Conv, in, kernel []float32) []float64 {
	ns := len(p.InSpatial)
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	pixels, taps := 1, 1
	for d := range ns {
		pixels *= p.OutSpatial[d]
		taps *= p.Kernel[d]
	}
	out := make([]float64, p.Batch*pixels*p.OutChannels)
	o, kp := make([]int, ns), make([]int, ns)
	for b := range p.Batch {
		for px := range pixels {
			r := px
			for d := ns - 1; d >= 0; d-- {
				o[d], r = r%p.OutSpatial[d], r/p.OutSpatial[d]
			}
			for co := range p.OutChannels {
				g := co / cout
				var s float64
				for tap := range taps {
					t := tap
					for d := ns - 1; d >= 0; d-- {
						kp[d], t = t%p.Kernel[d], t/p.Kernel[d]
					}
					off, koff, ok := b*p.InBatchStride, co*p.KernelOutStride, true
					for d := range ns {
						pos := o[d]*p.Stride[d] - p.PadLo[d] + kp[d]*p.RhsDil[d]
						if pos < 0 || pos%p.LhsDil[d] != 0 || pos/p.LhsDil[d] >= p.InSpatial[d] {
							ok = false
							break
						}
						off += pos / p.LhsDil[d] * p.InSpatialStrides[d]
						koff += kp[d] * p.KernelSpatialStrides[d]
					}
					if !ok {
						continue
					}
					for c := range cin {
						s += float64(in[off+(g*cin+c)*p.InChannelStride]) * float64(kernel[koff+c*p.KernelInStride])
					}
				}
				out[(b*pixels+px)*p.OutChannels+co] = s
			}
		}
	}
	return out
}

// newConv builds a Conv with either channels-last (NHWC / HWIO) or
// channels-first (NCHW / OIHW) operand layouts.
func newConv(batch, cinTotal, coutTotal, groups int, inSp, kern, stride, padLo, padHi, lhsDil, rhsDil []int, channelsFirst bool) *Conv {
	ns := len(inSp)
	p := &Conv{Batch: batch, InChannels: cinTotal, OutChannels: coutTotal, Groups: groups,
		InSpatial: inSp, Kernel: kern, Stride: stride, PadLo: padLo, LhsDil: lhsDil, RhsDil: rhsDil}
	p.OutSpatial = make([]int, ns)
	for d := range ns {
		in := (inSp[d]-1)*lhsDil[d] + 1 + padLo[d] + padHi[d]
		k := (kern[d]-1)*rhsDil[d] + 1
		p.OutSpatial[d] = max(0, (in-k)/stride[d]+1)
	}
	cin := cinTotal / groups
	p.InSpatialStrides = make([]int, ns)
	p.KernelSpatialStrides = make([]int, ns)
	if channelsFirst { // NCHW, OIHW
		st := 1
		for d := ns - 1; d >= 0; d-- {
			p.InSpatialStrides[d] = st
			st *= inSp[d]
		}
		p.InChannelStride, p.InBatchStride = st, st*cinTotal
		st = 1
		for d := ns - 1; d >= 0; d-- {
			p.KernelSpatialStrides[d] = st
			st *= kern[d]
		}
		p.KernelInStride, p.KernelOutStride = st, st*cin
	} else { // NHWC, HWIO
		st := cinTotal
		for d := ns - 1; d >= 0; d-- {
			p.InSpatialStrides[d] = st
			st *= inSp[d]
		}
		p.InChannelStride, p.InBatchStride = 1, st
		p.KernelOutStride, p.KernelInStride = 1, coutTotal
		st = cin * coutTotal
		for d := ns - 1; d >= 0; d-- {
			p.KernelSpatialStrides[d] = st
			st *= kern[d]
		}
	}
	return p
}

// doubling is an epilogue that doubles each element it is handed (C's
// rows ldc apart) and counts in seen how often it saw each.
func doubling(out []float32, seen []int, ldc int) Epilogue {
	return func(i, j, rows, cols int) {
		for r := i; r < i+rows; r++ {
			for c := j; c < j+cols; c++ {
				out[r*ldc+c] *= 2
				seen[r*ldc+c]++
			}
		}
	}
}

// ones is n ones: unit strides, dilations or kernel sizes.
func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func inputLen(p *Conv) int {
	n := p.InBatchStride * p.Batch
	return n
}

func kernelLen(p *Conv) int {
	n := p.InChannels / p.Groups * p.OutChannels
	for _, k := range p.Kernel {
		n *= k
	}
	return n
}

func TestConvAgainstDefinition(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		one := ones
		cases := []*Conv{
			newConv(2, 3, 5, 1, []int{7, 6}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			newConv(1, 4, 17, 1, []int{9, 8}, []int{3, 2}, []int{2, 3}, []int{0, 1}, []int{1, 0}, one(2), one(2), true),
			newConv(2, 6, 4, 2, []int{5, 5}, []int{2, 2}, one(2), []int{1, 0}, []int{0, 1}, []int{2, 1}, []int{1, 2}, false),
			newConv(1, 8, 8, 8, []int{6, 7}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false), // depthwise
			newConv(3, 5, 7, 1, []int{11}, []int{4}, []int{2}, []int{-1}, []int{2}, one(1), []int{2}, true),
			newConv(1, 2, 3, 1, []int{4, 3, 5}, []int{2, 2, 3}, []int{1, 2, 1}, []int{1, 0, 1}, []int{0, 1, 1}, one(3), one(3), false),
			newConv(4, 20, 33, 1, []int{6, 6}, []int{1, 1}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false), // 1x1
			// Channels-last with >= 16 channels per group: the direct path.
			newConv(2, 16, 19, 1, []int{7, 9}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			newConv(1, 40, 24, 2, []int{8, 5}, []int{3, 2}, []int{2, 1}, []int{1, 0}, []int{2, 1}, []int{1, 2}, []int{2, 1}, false),
			newConv(3, 300, 7, 1, []int{4, 4}, []int{2, 2}, one(2), []int{0, 1}, []int{1, 0}, one(2), one(2), false), // K 1200: one block
			// Valid, strided and kernel-dilated: every sliver interior.
			newConv(2, 16, 17, 1, []int{11, 10}, []int{3, 2}, []int{2, 1}, []int{0, 0}, []int{0, 0}, one(2), []int{2, 3}, false),
			newConv(2, 130, 5, 1, []int{5, 5}, []int{3, 3}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false), // K 1170: one block
			// K 5400 over directKCMax: two blocks of 2700, the second
			// starting halfway through a tap's run of 600 channels.
			newConv(1, 600, 6, 1, []int{4, 4}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			// The same with whole 16-channel output slivers: their kernel
			// rows packed a tap's run of channels at a time.
			newConv(1, 600, 32, 1, []int{4, 4}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			// A long K and a small output: K blocks split across threads.
			newConv(2, 1024, 5, 1, []int{5, 5}, []int{3, 3}, one(2), []int{1, 0}, []int{0, 1}, one(2), one(2), false),
			// Output channels in pairs of B slivers (the AVX-512 taps
			// kernel), a partial sliver after them and a partial last
			// row sliver; then exactly one pair, every sliver interior.
			newConv(2, 16, 70, 1, []int{7, 5}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			newConv(1, 32, 32, 1, []int{8, 8}, []int{3, 3}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
			// Fewer output pixels than channels (ResNet's last stage): the
			// threads split the columns, 160 of them in steps of 32 (the
			// last thread's share ending in a partial pair), and the
			// same over a strided 1×1 with two rows of 7.
			newConv(1, 64, 160, 1, []int{7, 7}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			newConv(1, 48, 100, 1, []int{4, 14}, []int{1, 1}, []int{2, 2}, []int{0, 0}, []int{0, 0}, one(2), one(2), false),
			// Depthwise, channel multiplier 1 and 2, strided and padded.
			newConv(2, 24, 24, 24, []int{9, 7}, []int{3, 3}, []int{2, 1}, []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			newConv(1, 5, 10, 5, []int{6, 6}, []int{3, 3}, one(2), []int{0, 1}, []int{2, 1}, []int{1, 2}, []int{2, 1}, false),
			// Grouped, 2 to 8 channels a group: sums of depthwise
			// convolutions (convGrouped), channels-last and -first, 1-D
			// and 2-D, strided, padded, kernel-dilated; ResNeXt's 4 a
			// group.
			newConv(2, 8, 12, 4, []int{7, 6}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			newConv(1, 16, 16, 4, []int{9, 8}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 0}, one(2), one(2), true),
			newConv(3, 12, 6, 3, []int{13}, []int{5}, one(1), []int{4}, []int{4}, one(1), []int{2}, false),
			newConv(1, 64, 64, 16, []int{9, 9}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
			newConv(2, 16, 2, 2, []int{5, 6}, []int{2, 3}, []int{1, 2}, []int{0, 1}, []int{1, 1}, one(2), []int{2, 1}, true),
			// im2col's rows, most at a border: a small 3-D image of one
			// channel, and paddings that kernel dilations do not divide
			// (a border window's first tap in the image is its second or
			// third).
			newConv(2, 1, 2, 1, []int{4, 10, 10}, []int{3, 3, 3}, one(3), []int{1, 1, 1}, []int{1, 1, 1}, one(3), one(3), true),
			newConv(1, 2, 3, 1, []int{9, 11}, []int{3, 3}, one(2), []int{3, 1}, []int{3, 2}, one(2), []int{2, 3}, false),
			// K 297 of 3 channels: the second K block starts inside a tap,
			// in slivers at the border and (unpadded) inside the image.
			newConv(1, 3, 5, 1, []int{14, 13}, []int{11, 9}, one(2), []int{2, 2}, []int{2, 2}, one(2), one(2), true),
			newConv(1, 3, 5, 1, []int{14, 19}, []int{11, 9}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), true),
		}
		for ci, p := range cases {
			for _, threads := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("case%d/threads=%d", ci, threads), func(t *testing.T) {
					in := randSlice[float32](inputLen(p), rng)
					kern := randSlice[float32](kernelLen(p), rng)
					pixels := 1
					for _, o := range p.OutSpatial {
						pixels *= o
					}
					out := make([]float32, p.Batch*pixels*p.OutChannels)
					if err := ConvF32(p, in, kern, out, threads); err != nil {
						t.Fatal(err)
					}
					want := refConv(p, in, kern)
					// f32 sums of K products drift from the f64 reference
					// by more as K grows (5400: 1.2e-4 at values near 10).
					k := p.InChannels / p.Groups
					for _, d := range p.Kernel {
						k *= d
					}
					tol := 1e-4 * max(1, float64(k)/1024)
					for i, w := range want {
						if !(math.Abs(float64(out[i])-w) <= tol) {
							t.Fatalf("out[%d] = %v, want %v", i, out[i], w)
						}
					}
				})
			}
		}
	})
}

// Inconsistent parameters are errors, not panics.
func TestConvRejectsBadParameters(t *testing.T) {
	one := []int{1, 1}
	p := newConv(1, 6, 4, 4, []int{3, 3}, []int{2, 2}, one, []int{0, 0}, []int{0, 0}, one, one, false) // 4 groups do not divide 6 channels
	if err := ConvF32(p, make([]float32, 54), make([]float32, 16), make([]float32, 16), 1); err == nil {
		t.Fatal("groups not dividing the channels accepted")
	}
	p = newConv(1, 2, 2, 1, []int{3, 3}, []int{2, 2}, one, []int{0, 0}, []int{0, 0}, one, one, false)
	p.Stride = []int{1}
	if err := ConvF32(p, make([]float32, 18), make([]float32, 16), make([]float32, 8), 1); err == nil {
		t.Fatal("a stride list of the wrong length accepted")
	}
}

// The depthwise kernel's vector path gives, bit for bit, what its Go
// loop gives (each tap's product rounded, then added, in tap order), for
// channel counts across the 32- and 8-wide blocks and the Go tail, with
// padding (taps outside the image), strides, a channel multiplier of 2
// (Go only) and NaN/Inf among the inputs.
func TestConvDepthwiseBitsMatchGo(t *testing.T) {
	if useAsmVar == nil || !*useAsmVar {
		t.Skip("no vector kernel here")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	two := []int{1, 1}
	for _, c := range []int{2, 7, 8, 9, 16, 24, 31, 32, 33, 40, 56, 64, 71} {
		for _, mult := range []int{1, 2} {
			p := newConv(2, c, c*mult, c, []int{7, 6}, []int{3, 3}, []int{2, 1}, []int{1, 1}, []int{1, 0}, two, two, false)
			if !canConvDepthwise(p) {
				t.Fatalf("channels %d, multiplier %d: not on the depthwise kernel", c, mult)
			}
			in := randSlice[float32](inputLen(p), rng)
			in[rng.IntN(len(in))] = float32(math.NaN())
			in[rng.IntN(len(in))] = float32(math.Inf(-1))
			kern := randSlice[float32](kernelLen(p), rng)
			pixels := 1
			for _, o := range p.OutSpatial {
				pixels *= o
			}
			got, want := make([]float32, p.Batch*pixels*p.OutChannels), make([]float32, p.Batch*pixels*p.OutChannels)
			if err := ConvF32(p, in, kern, got, 2); err != nil {
				t.Fatal(err)
			}
			*useAsmVar = false
			err := ConvF32(p, in, kern, want, 2)
			*useAsmVar = true
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("channels %d, multiplier %d: out[%d] = %v, Go loop %v", c, mult, i, got[i], want[i])
				}
			}
		}
	}
}

// A kernel cache changes no bits: calls that pack the panels, calls that
// reuse them (from several goroutines at once), and a call with another
// kernel array, which must not be served the first one's panels. The
// shapes take the direct path's ordinary blocks and its split-K one.
// convPath names the path ConvPackedF32 takes for p.
func convPath(p *Conv) string {
	switch {
	case canConvDepthwise(p):
		return "depthwise"
	case canConvTransposed(p):
		return "transposed"
	case canConvGrouped(p):
		return "grouped"
	case winogradTakes(p):
		return "winograd"
	case pointwiseAsGemm(p):
		return "pointwise"
	case canConvDirect(p):
		return "direct"
	}
	return "im2col"
}

// TestConvKernelCache: with a panel cache, the direct path and the two
// GEMM paths (pointwise, implicit im2col) give the bits they give without
// one, on first and later calls, from several goroutines, and for a new
// kernel array handed to the same cache.
func TestConvKernelCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	one, zero := []int{1, 1}, []int{0, 0}
	paths := map[string]bool{}
	for _, p := range []*Conv{
		newConv(2, 24, 40, 1, []int{9, 8}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		newConv(2, 1024, 5, 1, []int{5, 5}, []int{3, 3}, one, []int{1, 0}, []int{0, 1}, one, one, false),
		newConv(2, 64, 72, 1, []int{9, 8}, []int{1, 1}, one, zero, zero, one, one, false),
		newConv(2, 64, 40, 1, []int{9, 8}, []int{1, 1}, one, zero, zero, one, one, false),
		newConv(1, 256, 100, 1, []int{7, 7}, []int{1, 1}, one, zero, zero, one, one, false), // panels read in place
		newConv(1, 1, 258, 1, []int{1, 576}, []int{1, 256}, []int{1, 128}, zero, zero, one, one, true),
	} {
		paths[convPath(p)] = true
		t.Logf("%v: %s path", p.OutChannels, convPath(p))
		if convPath(p) == "depthwise" {
			t.Fatal("a depthwise convolution has no panels")
		}
		in := randSlice[float32](inputLen(p), rng)
		kernels := [][]float32{randSlice[float32](kernelLen(p), rng), randSlice[float32](kernelLen(p), rng)}
		pixels := p.OutSpatial[0] * p.OutSpatial[1]
		var cache ConvKernelCache
		for _, kern := range kernels {
			want := make([]float32, p.Batch*pixels*p.OutChannels)
			if err := ConvF32(p, in, kern, want, 2); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan string, 8)
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 2 {
						got := make([]float32, len(want))
						if err := ConvPackedF32(p, in, kern, got, 2, nil, &cache); err != nil {
							errs <- err.Error()
							return
						}
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								errs <- fmt.Sprintf("out[%d] = %v with the cache, %v without", i, got[i], want[i])
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatalf("%s path: %s", convPath(p), e)
			}
		}
	}
	for _, want := range []string{"direct", "pointwise", "im2col"} {
		if !paths[want] {
			t.Errorf("no case takes the %s path (cases take %v)", want, paths)
		}
	}
}

// packConvKernel against an element-by-element packing, with the kernel
// laid out as a forward convolution's (HWIO) and as a kernel gradient's
// (in-channels outermost, IHWO: rows of one tap an in-channel apart), K
// blocks starting and ending inside a tap's run of channels, and whole
// and partial output slivers.
func TestPackConvKernelLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, cin := range []int{5, 40} {
		for _, cout := range []int{16, 32, 35} {
			for _, ihwo := range []bool{false, true} {
				p := &Conv{InChannels: cin, OutChannels: cout, Groups: 1, Kernel: []int{3, 2}, KernelOutStride: 1}
				if ihwo {
					p.KernelSpatialStrides = []int{2 * cout, cout}
					p.KernelInStride = 6 * cout
				} else {
					p.KernelSpatialStrides = []int{2 * cin * cout, cin * cout}
					p.KernelInStride = cout
				}
				kernel := randSlice[float32](6*cin*cout, rng)
				k := 6 * cin
				slivers := (cout + sgemmNR - 1) / sgemmNR
				for _, kb := range []int{7, 64, k} {
					for pc := 0; pc < k; pc += kb {
						b := min(kb, k-pc)
						got := make([]float32, slivers*sgemmNR*b)
						for i := range got {
							got[i] = float32(math.NaN())
						}
						packConvKernel(got, p, kernel, 0, cin, pc, b, cout, 0, slivers)
						for s := range slivers {
							for r := range b {
								tap, c := (pc+r)/cin, (pc+r)%cin
								for j := range sgemmNR {
									want := float32(0)
									if co := s*sgemmNR + j; co < cout {
										want = kernel[kernelTapOffset(p, tap)+c*p.KernelInStride+co]
									}
									if g := got[(s*b+r)*sgemmNR+j]; g != want {
										t.Fatalf("cin %d cout %d ihwo %v pc %d kb %d: sliver %d row %d col %d = %v, want %v",
											cin, cout, ihwo, pc, b, s, r, j, g, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// The 12-row direct kernel (twelve pixels of an output row whose windows
// lie inside the image, one offset per tap) gives the 6-row taps
// kernel's bits, and the definition's values: padded, strided and
// dilated windows, two feature groups (the group's channel offset), a K
// over directKCMax whose second block starts inside a tap's run, one and
// two threads.
func TestConvDirectTaps(t *testing.T) {
	if useAVX512Var == nil || !*useAVX512Var {
		t.Skip("no AVX-512 kernels on this machine")
	}
	one := func(n int) []int { return slices.Repeat([]int{1}, n) }
	rng := rand.New(rand.NewPCG(51, 52))
	for ci, p := range []*Conv{
		newConv(2, 16, 32, 1, []int{20, 30}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(1, 32, 64, 1, []int{13, 40}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(1, 24, 32, 1, []int{9, 33}, []int{2, 3}, one(2), []int{0, 2}, []int{0, 0}, one(2), []int{1, 2}, false),
		newConv(1, 64, 64, 2, []int{5, 27}, []int{3, 3}, one(2), []int{2, 2}, []int{2, 2}, one(2), one(2), false),
		newConv(1, 500, 32, 1, []int{3, 16}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(3, 16, 32, 1, []int{40}, []int{5}, one(1), []int{2}, []int{2}, one(1), one(1), false),
		// Output rows shorter than twelve pixels, every window inside:
		// groups of twelve examples at one pixel (a kernel gradient's
		// shape), 26 examples leaving two over; then a K long enough to
		// be split between the threads; then padding, which leaves no
		// groups.
		newConv(26, 16, 32, 1, []int{8, 8}, []int{6, 6}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(30, 300, 32, 1, []int{5, 7}, []int{3, 5}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(20, 16, 32, 1, []int{6, 6}, []int{4, 4}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		// One pixel an example (a product): groups of twelve examples a
		// row apart; and 11×11 outputs, too many pixels for groups of
		// examples in an MC block, too few for a row group.
		newConv(40, 16, 32, 1, []int{3, 3}, []int{3, 3}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(3, 16, 32, 1, []int{13, 13}, []int{3, 3}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		// Output channels not in whole pairs of B slivers, which the
		// masked kernels store in place: 24 (a detection head's 96→24),
		// 8, 12, 18 (one sliver and a bit), 40 (a pair and a part), 16,
		// in row groups and in groups of examples.
		newConv(1, 96, 24, 1, []int{20, 30}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(2, 16, 8, 1, []int{9, 29}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(1, 32, 12, 1, []int{7, 27}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(1, 16, 18, 1, []int{5, 40}, []int{3, 5}, one(2), []int{1, 2}, []int{1, 2}, one(2), one(2), false),
		newConv(1, 20, 40, 1, []int{6, 26}, []int{3, 3}, one(2), []int{0, 1}, []int{2, 1}, one(2), one(2), false),
		newConv(2, 17, 16, 1, []int{4, 31}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(26, 16, 24, 1, []int{8, 8}, []int{6, 6}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(40, 16, 8, 1, []int{3, 3}, []int{3, 3}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
	} {
		checkDirectTaps(t, rng, fmt.Sprintf("case %d", ci), p, 1e-3, "6-row kernel")
	}
	// Pointwise convolutions narrower than two pairs of slivers take
	// the direct path, their pixels grouped in twelves across output rows
	// and examples (the image is one dense matrix); without the 12-row
	// kernel they are the packed GEMM's.
	for ci, p := range []*Conv{
		newConv(2, 8, 8, 1, []int{24, 96}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(1, 48, 12, 1, []int{20, 20}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(3, 96, 18, 1, []int{7, 13}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(2, 32, 8, 1, []int{5, 9}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(1, 20, 31, 1, []int{61}, one(1), one(1), []int{0}, []int{0}, one(1), one(1), false),
		newConv(1, 32, 48, 1, []int{9, 11}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(2, 16, 40, 1, []int{5, 7}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
	} {
		if convPath(p) != "direct" {
			t.Fatalf("pointwise case %d: on the %s path", ci, convPath(p))
		}
		checkDirectTaps(t, rng, fmt.Sprintf("pointwise case %d", ci), p, 1e-3, "packed GEMM")
	}
}

// Pointwise convolutions narrower than two pairs of slivers take the
// direct path on every host with assembly kernels (on AVX2 from
// narrowMinK input channels, six pixels a tile): against the packed
// GEMM, bit for bit, and the definition. The shapes are the OCR models'.
func TestConvPointwiseNarrow(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels on this machine")
	}
	one := func(n int) []int { return slices.Repeat([]int{1}, n) }
	rng := rand.New(rand.NewPCG(53, 54))
	for ci, p := range []*Conv{
		newConv(1, 16, 32, 1, []int{40, 40}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(1, 16, 16, 1, []int{33, 21}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(2, 24, 24, 1, []int{13, 17}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		// K in blocks (split between the threads on two): the 6×8
		// kernel adds the later blocks' sums.
		newConv(1, 4200, 24, 1, []int{3, 4}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(1, 48, 12, 1, []int{20, 20}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(2, 32, 48, 1, []int{9, 11}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(3, 96, 18, 1, []int{7, 13}, one(2), one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), false),
		newConv(1, 20, 31, 1, []int{61}, one(1), one(1), []int{0}, []int{0}, one(1), one(1), false),
	} {
		if !pointwiseNarrow(p) || convPath(p) != "direct" {
			t.Fatalf("pointwise case %d: on the %s path", ci, convPath(p))
		}
		checkDirectTaps(t, rng, fmt.Sprintf("pointwise case %d", ci), p, 1e-3, "packed GEMM")
	}
}

// checkDirectTaps runs p with the 12-row kernel and without (directTaps),
// on one and two threads: the two give the same bits, and the definition
// within tol. without names the path taken without.
func checkDirectTaps(t *testing.T, rng *rand.Rand, name string, p *Conv, tol float64, without string) {
	t.Helper()
	in := randSlice[float32](inputLen(p), rng)
	kern := randSlice[float32](kernelLen(p), rng)
	pixels := 1
	for _, o := range p.OutSpatial {
		pixels *= o
	}
	want := refConv(p, in, kern)
	for _, threads := range []int{1, 2} {
		run := func(on bool) []float32 {
			defer func(v bool) { directTaps = v }(directTaps)
			directTaps = on
			out := make([]float32, p.Batch*pixels*p.OutChannels)
			if err := ConvF32(p, in, kern, out, threads); err != nil {
				t.Fatal(err)
			}
			return out
		}
		got, other := run(true), run(false)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(other[i]) {
				t.Fatalf("%s threads %d: out[%d] = %v, %s %v", name, threads, i, got[i], without, other[i])
			}
			if !(math.Abs(float64(got[i])-want[i]) <= tol) {
				t.Fatalf("%s threads %d: out[%d] = %v, want %v", name, threads, i, got[i], want[i])
			}
		}
	}
}

// Few-channel convolutions on the direct path (canConvDirect's merged
// runs: a window's row of taps as one run, the image copied with its
// padding as zeros) against the definition, and against the packed
// im2col path they took before, bit for bit: one channel 3x3 padded (the
// CNN's first layer), three channels 7x7 stride 2 padded by 3 (ResNet's
// first), negative padding (no copy, border runs), a 1-D one, and output
// channels not in whole pairs of slivers.
func TestConvFewChannels(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels on this machine")
	}
	one := func(n int) []int { return slices.Repeat([]int{1}, n) }
	rng := rand.New(rand.NewPCG(61, 62))
	for ci, p := range []*Conv{
		newConv(3, 1, 32, 1, []int{14, 28}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(2, 3, 64, 1, []int{30, 40}, []int{7, 7}, []int{2, 2}, []int{3, 3}, []int{3, 3}, one(2), one(2), false),
		newConv(2, 2, 32, 1, []int{9, 30}, []int{3, 3}, one(2), []int{-1, 1}, []int{0, -1}, one(2), one(2), false),
		newConv(4, 4, 32, 1, []int{50}, []int{5}, one(1), []int{2}, []int{2}, one(1), one(1), false),
		newConv(2, 1, 17, 1, []int{6, 26}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		// The OCR models' first layers: 3 → 16 and 3 → 8, 3×3 stride 2.
		newConv(1, 3, 16, 1, []int{33, 40}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		newConv(2, 3, 8, 1, []int{12, 50}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, one(2), one(2), false),
		// Channels-first images, gathered channels-last by the staging
		// copy: RGB 3×3 stride 2 and 7×7 stride 2, one channel, four, a
		// 1-D one, and one with no padding (staged for its layout alone).
		newConv(2, 3, 24, 1, []int{13, 40}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, one(2), one(2), true),
		newConv(1, 3, 32, 1, []int{30, 31}, []int{7, 7}, []int{2, 2}, []int{3, 3}, []int{3, 3}, one(2), one(2), true),
		newConv(3, 1, 16, 1, []int{9, 27}, []int{3, 3}, one(2), []int{1, 1}, []int{1, 1}, one(2), one(2), true),
		newConv(2, 4, 8, 1, []int{7, 30}, []int{3, 3}, one(2), []int{2, 1}, []int{0, 1}, one(2), one(2), true),
		newConv(2, 3, 16, 1, []int{40}, []int{5}, []int{2}, []int{2}, []int{2}, one(1), one(1), true),
		newConv(2, 3, 8, 1, []int{6, 30}, []int{3, 3}, one(2), []int{0, 0}, []int{0, 0}, one(2), one(2), true),
		// An image large enough for the threads to share the copy.
		newConv(1, 3, 16, 1, []int{300, 301}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, one(2), one(2), true),
		// Dilated kernels, a tap a run: HiFi-GAN's residual layers (8
		// channels, kernels 3 and 7 dilated by 5), a 2-D one dilated
		// across only, and a channels-first one strided.
		newConv(1, 8, 8, 1, []int{320}, []int{3}, one(1), []int{5}, []int{5}, one(1), []int{5}, false),
		newConv(2, 8, 8, 1, []int{60}, []int{7}, one(1), []int{15}, []int{15}, one(1), []int{5}, false),
		newConv(2, 4, 16, 1, []int{11, 29}, []int{3, 3}, one(2), []int{1, 2}, []int{1, 2}, one(2), []int{1, 2}, false),
		newConv(1, 3, 8, 1, []int{17, 33}, []int{3, 3}, []int{2, 2}, []int{2, 2}, []int{2, 2}, one(2), []int{2, 2}, true),
	} {
		if !canConvDirect(p) {
			t.Fatalf("case %d: not on the direct path", ci)
		}
		checkDirectTaps(t, rng, fmt.Sprintf("case %d", ci), p, 1e-4, "im2col path")
	}
}

// A depthwise convolution whose pixels are nearly all on the border
// (windows wider than the image, dilated, strided, 1-D to 3-D) finds each
// pixel's valid taps as the reference convolution sums them.
func TestConvDepthwiseBorders(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct{ in, kern, stride, padLo, padHi, rhsDil []int }{
		{[]int{3, 9}, []int{5, 5}, []int{1, 1}, []int{2, 2}, []int{2, 2}, []int{1, 1}},
		{[]int{3, 9}, []int{5, 5}, []int{2, 1}, []int{2, 2}, []int{2, 2}, []int{1, 1}},
		{[]int{4, 5}, []int{3, 3}, []int{1, 2}, []int{3, 2}, []int{1, 4}, []int{2, 3}},
		{[]int{2, 1}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}},
		{[]int{6}, []int{4}, []int{1}, []int{5}, []int{4}, []int{3}},
		{[]int{2, 3, 4}, []int{3, 3, 3}, []int{1, 1, 2}, []int{1, 2, 1}, []int{1, 0, 2}, []int{1, 2, 1}},
	} {
		for _, c := range []int{5, 40} {
			for _, mult := range []int{1, 2} {
				one := make([]int, len(tc.in))
				for i := range one {
					one[i] = 1
				}
				p := newConv(2, c, c*mult, c, tc.in, tc.kern, tc.stride, tc.padLo, tc.padHi, one, tc.rhsDil, false)
				if !canConvDepthwise(p) {
					t.Fatalf("%+v: not on the depthwise kernel", tc)
				}
				in := randSlice[float32](inputLen(p), rng)
				kern := randSlice[float32](kernelLen(p), rng)
				want := refConv(p, in, kern)
				got := make([]float32, len(want))
				if err := ConvF32(p, in, kern, got, 2); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if math.Abs(float64(got[i])-want[i]) > 1e-4 {
						t.Fatalf("%+v channels %d multiplier %d: out[%d] = %v, want %v", tc, c, mult, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// directOnly turns Winograd off for the rest of test t: its 3×3
// convolutions check the direct path's kernels, cuts and tile ops.
func directOnly(t *testing.T) {
	v := winograd
	winograd = false
	t.Cleanup(func() { winograd = v })
}

// TestConvGrouped: grouped convolutions of 2 to 8 channels a group take
// the depthwise sums (a path that would quietly be the GEMM's fails
// here), and their epilogue sees every finished value once: doubling
// them gives twice the definition.
func TestConvGrouped(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	one := []int{1, 1}
	for _, p := range []*Conv{
		newConv(2, 8, 12, 4, []int{7, 6}, []int{3, 3}, one, one, one, one, one, false),
		newConv(1, 32, 32, 8, []int{12, 12}, []int{3, 3}, []int{2, 2}, one, one, one, one, true),
	} {
		if got := convPath(p); got != "grouped" {
			t.Fatalf("%d groups of %d channels: the %s path", p.Groups, p.InChannels/p.Groups, got)
		}
		in, kern := randSlice[float32](inputLen(p), rng), randSlice[float32](kernelLen(p), rng)
		want := refConv(p, in, kern)
		for _, threads := range []int{1, 2} {
			out := make([]float32, len(want))
			seen := make([]int, len(want))
			epi := doubling(out, seen, p.OutChannels)
			if err := ConvEpilogueF32(p, in, kern, out, threads, epi); err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				if seen[i] != 1 || !(math.Abs(float64(out[i])-2*w) <= 2e-4) {
					t.Fatalf("threads=%d: out[%d] = %v (finished %d times), want %v", threads, i, out[i], seen[i], 2*w)
				}
			}
		}
	}
}
