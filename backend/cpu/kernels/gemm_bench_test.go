package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkGemmF32(b *testing.B) {
	for _, sz := range []int{256, 1024, 2048} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", sz, threads), func(b *testing.B) {
				benchGemmF32(b, sz, sz, sz, threads)
			})
		}
	}
}

// BenchmarkGemmS8 is BenchmarkGemmF32's sizes for s8×s8→s32, in integer
// ops (2·m·n·k per product).
func BenchmarkGemmS8(b *testing.B) {
	for _, sz := range []int{256, 1024, 2048} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", sz, threads), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				a := Strided[int8]{Data: randS8(sz*sz, rng), Row: sz, Col: 1}
				bm := Strided[int8]{Data: randS8(sz*sz, rng), Row: sz, Col: 1}
				c := make([]int32, sz*sz)
				for b.Loop() {
					if err := GemmS8(sz, sz, sz, a, bm, c, sz, false, threads); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(sz*sz*sz)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
			})
		}
	}
}

// BenchmarkGemmLayers times mlp_b256's two hidden layers' products
// (batch 256: 784→512 and 512→512), and each thread's share of them
// under the column split (256 of the 512 columns).
func BenchmarkGemmLayers(b *testing.B) {
	for _, s := range [][3]int{{256, 512, 784}, {256, 256, 784}, {256, 512, 512}, {256, 256, 512}} {
		for _, threads := range []int{1, 2} {
			m, n, k := s[0], s[1], s[2]
			b.Run(fmt.Sprintf("%dx%dx%d/threads=%d", m, n, k, threads), func(b *testing.B) {
				benchGemmF32(b, m, n, k, threads)
			})
		}
	}
}

// BenchmarkGemmDirectA runs products with A packed, A read in place (the
// direct kernels; AVX-512 only), and A read in place with B packed by the
// kernels, alternating, on one and two threads.
func BenchmarkGemmDirectA(b *testing.B) {
	for _, s := range [][3]int{{256, 512, 784}, {256, 512, 512}, {1024, 1024, 1024}, {1024, 768, 3072}, {1024, 3072, 768}} {
		for _, threads := range []int{1, 2} {
			for _, mode := range []string{"packed", "direct", "direct+packB"} {
				m, n, k := s[0], s[1], s[2]
				b.Run(fmt.Sprintf("%dx%dx%d/threads=%d/%s", m, n, k, threads, mode), func(b *testing.B) {
					defer func(d, p bool) { directA, directPackB = d, p }(directA, directPackB)
					directA, directPackB = mode != "packed", mode == "direct+packB"
					benchGemmF32(b, m, n, k, threads)
				})
			}
		}
	}
}

// benchGemmF32 times C = A·B for random row-major A (m×k) and B (k×n)
// on threads and reports GFLOP/s.
func benchGemmF32(b *testing.B, m, n, k, threads int) {
	rng := rand.New(rand.NewPCG(1, 1))
	a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
	bm := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
	c := make([]float32, m*n)
	for b.Loop() {
		GemmF32(m, n, k, a, bm, c, n, false, threads)
	}
	b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGemmU8S8 is gemm_u8s8_1024x4096's product (ONNX MatMulInteger's
// u8 activations by s8 weights), in integer ops.
func BenchmarkGemmU8S8(b *testing.B) {
	const m, n, k = 1024, 1024, 4096
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			ad := make([]uint8, m*k)
			for i := range ad {
				ad[i] = uint8(rng.IntN(256))
			}
			a := Strided[uint8]{Data: ad, Row: k, Col: 1}
			bm := Strided[int8]{Data: randS8(k*n, rng), Row: n, Col: 1}
			c := make([]int32, m*n)
			for b.Loop() {
				if err := GemmU8S8(m, n, k, a, bm, c, n, false, threads); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
	}
}
