package kernels

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// refConvInt8 is ConvInt8's definition as a direct loop: int64 sums of
// (x − zx)(w − zw) over the window, padding contributing nothing, wrapped
// to s32 (the evaluator's s32 convolution).
func refConvInt8(p *ConvInt8, in []byte, kernel []int8) []int32 {
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	out := make([]int32, p.Batch*p.OutChannels*p.OutH*p.OutW)
	x := func(b, c, y, xx int) int64 {
		v := in[((b*p.InChannels+c)*p.InH+y)*p.InW+xx]
		if p.XUnsigned {
			return int64(v)
		}
		return int64(int8(v))
	}
	for b := range p.Batch {
		for o := range p.OutChannels {
			g := o / cout
			zw := int64(0)
			if p.WZero != nil {
				zw = int64(p.WZero[o])
			}
			for oy := range p.OutH {
				for ox := range p.OutW {
					var s int64
					for c := range cin {
						for i := range p.KH {
							for j := range p.KW {
								y, xx := oy*p.StrideH+i*p.DilH-p.PadH, ox*p.StrideW+j*p.DilW-p.PadW
								if y < 0 || y >= p.InH || xx < 0 || xx >= p.InW {
									continue
								}
								w := int64(kernel[((o*cin+c)*p.KH+i)*p.KW+j])
								s += (x(b, g*cin+c, y, xx) - int64(p.XZero)) * (w - zw)
							}
						}
					}
					out[((b*p.OutChannels+o)*p.OutH+oy)*p.OutW+ox] = int32(s)
				}
			}
		}
	}
	return out
}

func randConvInt8(rng *rand.Rand, p *ConvInt8) ([]byte, []int8) {
	in := make([]byte, p.Batch*p.InChannels*p.InH*p.InW)
	for i := range in {
		in[i] = byte(rng.IntN(256))
	}
	kernel := randS8(p.OutChannels*p.InChannels/p.Groups*p.KH*p.KW, rng)
	return in, kernel
}

// convInt8Case is a geometry with the output size it implies.
func convInt8Case(batch, cin, cout, groups, h, w, kh, kw, stride, pad, dil int) *ConvInt8 {
	out := func(n, k int) int { return (n+2*pad-dil*(k-1)-1)/stride + 1 }
	return &ConvInt8{Batch: batch, InChannels: cin, OutChannels: cout, Groups: groups, InH: h, InW: w,
		OutH: out(h, kh), OutW: out(w, kw), KH: kh, KW: kw, StrideH: stride, StrideW: stride,
		PadH: pad, PadW: pad, DilH: dil, DilW: dil}
}

// Every geometry (strides, padding, dilation, groups, 1×1 and 1-D), u8 and
// s8 images, with and without zero points on either side, on 1 and 2
// threads and with im2col blocks of a few columns: bit for bit the
// definition's loop.
func TestConvInt8NCHW(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 9))
		cases := []*ConvInt8{
			convInt8Case(1, 3, 5, 1, 7, 9, 3, 3, 1, 1, 1),
			convInt8Case(2, 8, 16, 1, 12, 11, 3, 3, 2, 1, 1),
			convInt8Case(1, 4, 6, 2, 9, 9, 3, 3, 1, 2, 2),
			convInt8Case(1, 70, 33, 1, 6, 5, 1, 1, 1, 0, 1),
			convInt8Case(2, 6, 6, 6, 8, 8, 5, 5, 1, 2, 1),
			convInt8Case(1, 13, 40, 1, 1, 30, 1, 7, 1, 3, 1),
			convInt8Case(1, 64, 24, 1, 10, 10, 3, 3, 1, 1, 1),
			convInt8Case(3, 32, 32, 1, 20, 20, 3, 3, 1, 1, 1), // examples across threads
			convInt8Case(1, 32, 40, 2, 9, 11, 3, 3, 1, 1, 2),  // by pixel rows: groups, dilation
			convInt8Case(1, 128, 16, 1, 6, 7, 3, 3, 1, 1, 1),  // K past one block (1152 > 1024)
			func() *ConvInt8 { // a vertical stride alone
				p := convInt8Case(2, 16, 8, 1, 11, 9, 3, 3, 1, 1, 1)
				p.StrideH, p.OutH = 2, 6
				return p
			}(),
		}
		for ci, p := range cases {
			for _, variant := range []int{0, 1, 2, 3} {
				q := *p
				q.XUnsigned = variant%2 == 0
				if variant >= 2 {
					q.XZero = int32(rng.IntN(128))
					q.WZero = make([]int32, q.OutChannels)
					for i := range q.WZero {
						q.WZero[i] = int32(rng.IntN(256) - 128)
					}
				}
				in, kernel := randConvInt8(rng, &q)
				want := refConvInt8(&q, in, kernel)
				sums, err := ConvInt8KernelSums(&q, kernel)
				if err != nil {
					t.Fatal(err)
				}
				for _, blocks := range []int{4 << 20, 64 * 32} {
					for _, threads := range []int{1, 2} {
						for _, given := range []bool{false, true} {
							t.Run(fmt.Sprintf("%d/%d/%d/%d/%v", ci, variant, blocks, threads, given), func(t *testing.T) {
								defer func(b int) { im2colBytes = b }(im2colBytes)
								im2colBytes = blocks
								r := q
								if given {
									r.KernelSums = sums
								}
								got := make([]int32, len(want))
								if err := ConvInt8NCHW(&r, in, kernel, got, threads); err != nil {
									t.Fatal(err)
								}
								for i := range got {
									if got[i] != want[i] {
										t.Fatalf("%+v: out[%d] = %d, want %d", r, i, got[i], want[i])
									}
								}
							})
						}
					}
				}
				// The sums given are the ones used: one channel's off by
				// one moves that channel by its image term alone.
				if shift := map[bool]int32{true: 128}[q.XUnsigned]; shift != q.XZero {
					r := q
					r.KernelSums = append([]int32(nil), sums...)
					r.KernelSums[0]++
					got := make([]int32, len(want))
					if err := ConvInt8NCHW(&r, in, kernel, got, 1); err != nil {
						t.Fatal(err)
					}
					if d := got[0] - want[0]; d != shift-q.XZero {
						t.Fatalf("%+v: a kernel sum off by one moved out[0] by %d, want %d", r, d, shift-q.XZero)
					}
				}
			}
		}
	})
}

// A description that does not fit its slices or its zero points is
// refused with ErrGemmArgs before anything is written.
func TestConvInt8NCHWBadArgs(t *testing.T) {
	p := convInt8Case(1, 2, 2, 1, 4, 4, 3, 3, 1, 1, 1)
	in, kernel := randConvInt8(rand.New(rand.NewPCG(1, 1)), p)
	out := make([]int32, 2*4*4)
	bad := []func(q *ConvInt8) ([]byte, []int8, []int32){
		func(q *ConvInt8) ([]byte, []int8, []int32) { return in[:5], kernel, out },
		func(q *ConvInt8) ([]byte, []int8, []int32) { return in, kernel[:3], out },
		func(q *ConvInt8) ([]byte, []int8, []int32) { return in, kernel, out[:4] },
		func(q *ConvInt8) ([]byte, []int8, []int32) { q.Groups = 3; return in, kernel, out },
		func(q *ConvInt8) ([]byte, []int8, []int32) { q.XZero = 200; return in, kernel, out },
		func(q *ConvInt8) ([]byte, []int8, []int32) { q.WZero = []int32{1}; return in, kernel, out },
		func(q *ConvInt8) ([]byte, []int8, []int32) { q.StrideH = 0; return in, kernel, out },
		func(q *ConvInt8) ([]byte, []int8, []int32) { q.InH = -1; return in, kernel, out },
		func(q *ConvInt8) ([]byte, []int8, []int32) { q.KernelSums = []int32{1}; return in, kernel, out },
	}
	for i, f := range bad {
		q := *p
		x, w, o := f(&q)
		for j := range o {
			o[j] = 7
		}
		if err := ConvInt8NCHW(&q, x, w, o, 1); !errors.Is(err, ErrGemmArgs) {
			t.Errorf("case %d: err = %v, want ErrGemmArgs", i, err)
		}
		for j := range o {
			if o[j] != 7 {
				t.Fatalf("case %d: wrote out[%d]", i, j)
			}
		}
	}
}

// BenchmarkConvInt8 is a ResNet layer (3×3, 64→64 channels, 56×56, batch
// 8, NCHW) as a quantized model runs it, against the f32 NCHW kernels on
// the same geometry, in multiply-adds ×2 per second.
func BenchmarkConvInt8(b *testing.B) {
	p := convInt8Case(8, 64, 64, 1, 56, 56, 3, 3, 1, 1, 1)
	p.XUnsigned, p.XZero = true, 3
	in, kernel := randConvInt8(rand.New(rand.NewPCG(1, 1)), p)
	out := make([]int32, p.Batch*p.OutChannels*p.OutH*p.OutW)
	ops := 2 * float64(p.Batch*p.OutChannels*p.OutH*p.OutW*p.InChannels*9)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("int8/threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				if err := ConvInt8NCHW(p, in, kernel, out, threads); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(ops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
		b.Run(fmt.Sprintf("f32/threads=%d", threads), func(b *testing.B) {
			q := &ConvNCHW{Batch: p.Batch, InChannels: 64, OutChannels: 64, Groups: 1, InH: 56, InW: 56, OutH: 56, OutW: 56,
				KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilH: 1, DilW: 1}
			x, w, o := make([]float32, len(in)), make([]float32, len(kernel)), make([]float32, len(out))
			for b.Loop() {
				ConvNCHWF32(q, x, w, o, threads)
			}
			b.ReportMetric(ops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
	}
}
