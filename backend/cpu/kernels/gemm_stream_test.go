package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The AVX2 kernels with a prefetch stream give the plain kernels' bits
// wherever the stream points (it only prefetches): the GEMM kernel on
// its own over k steps that leave each remainder of the four-step loop,
// a product of packed weights (macroKernelAVX2) against the same with
// the streams off, and direct convolutions (the taps kernel) likewise,
// each within the float64 definition's bound too.
func TestStreamKernelsMatchPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, k := range []int{1, 2, 3, 4, 5, 9, 64, 257} {
		a := randSlice[float32](sgemmMR*k, rng)
		b := randSlice[float32](sgemmNR*k, rng)
		for _, overwrite := range []bool{false, true} {
			for _, pf := range []prefetchRange{{off: sgemmNR * k * 4, step: 64}, {off: -1 << 30, step: 3}, {off: 1 << 40, step: 64}} {
				want, got := randSlice[float32](sgemmMR*20, rng), make([]float32, sgemmMR*20)
				copy(got, want)
				kernelF32(k, a, b, want, 20, overwrite)
				kernelStreamF32(k, a, b, got, 20, overwrite, pf)
				sameBits(t, fmt.Sprintf("kernel k=%d overwrite=%v pf=%+v", k, overwrite, pf), got, want)
			}
		}
	}
	for _, s := range [][3]int{{6, 16, 8}, {13, 40, 300}, {128, 384, 384}, {49, 100, 600}, {200, 48, 520}} {
		m, n, k := s[0], s[1], s[2]
		a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
		// Transposed B: on AVX-512 too it takes the packed path.
		b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: 1, Col: k}
		pb, err := PackBF32(k, n, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			run := func(streams bool) []float32 {
				defer func(old bool) { gemmStreams = old }(gemmStreams)
				gemmStreams = streams
				c := make([]float32, m*n)
				if err := GemmPackedEpilogueF32(m, n, k, a, b, pb, c, n, threads, nil, false); err != nil {
					t.Fatal(err)
				}
				return c
			}
			name := fmt.Sprintf("gemm %dx%dx%d threads=%d", m, n, k, threads)
			got := run(true)
			sameBits(t, name, got, run(false))
			ref := refGemm(m, n, k, a, b)
			for i, r := range ref {
				if !(math.Abs(float64(got[i])-r) <= 1e-5*float64(k)+1e-6) {
					t.Fatalf("%s: C[%d] = %v, want %v", name, i, got[i], r)
				}
			}
		}
	}
	one := []int{1, 1}
	for _, p := range []*Conv{
		newConv(1, 128, 128, 1, []int{14, 14}, []int{3, 3}, one, one, one, one, one, false),
		newConv(1, 64, 40, 1, []int{9, 7}, []int{3, 3}, []int{2, 2}, one, one, one, one, false),
		newConv(2, 32, 24, 1, []int{11, 11}, []int{3, 3}, one, one, one, one, one, false),
	} {
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](kernelLen(p), rng)
		ref := refConv(p, in, kern)
		for _, threads := range []int{1, 2} {
			run := func(streams bool) []float32 {
				defer func(old bool) { directStreams = old }(directStreams)
				directStreams = streams
				out := make([]float32, len(ref))
				if err := ConvPackedF32(p, in, kern, out, threads, nil, &ConvKernelCache{}); err != nil {
					t.Fatal(err)
				}
				return out
			}
			name := fmt.Sprintf("conv %v→%v threads=%d", p.InChannels, p.OutChannels, threads)
			got := run(true)
			sameBits(t, name, got, run(false))
			k := 9 * p.InChannels
			for i, r := range ref {
				if !(math.Abs(float64(got[i])-r) <= 1e-5*float64(k)+1e-6) {
					t.Fatalf("%s: out[%d] = %v, want %v", name, i, got[i], r)
				}
			}
		}
	}
}

func sameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %v with the stream, %v without", name, i, got[i], want[i])
		}
	}
}
