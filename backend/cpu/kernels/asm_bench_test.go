//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkFMAPeak measures the machine's f32 FMA throughput with the
// assembly probe (12 independent FMA chains per round) at the widest
// vectors the kernels use here (16 lanes with AVX-512, else 8), on 1 and
// 2 goroutines: the peak every GEMM figure is compared against.
func BenchmarkFMAPeak(b *testing.B) {
	if useAVX512 {
		benchPeak(b, fmaPeak512, 384, "GFLOP/s")
		return
	}
	benchPeak(b, fmaPeak, 192, "GFLOP/s")
}

// BenchmarkFMAPeakAVX2 is the probe at 8 lanes on any machine: the peak
// of the AVX2 kernels (AXLE_KERNELS=avx2).
func BenchmarkFMAPeakAVX2(b *testing.B) { benchPeak(b, fmaPeak, 192, "GFLOP/s") }

// benchPeak runs an assembly throughput probe (rounds of opsPerRound
// operations) on 1 and 2 goroutines and reports its rate in unit.
func benchPeak(b *testing.B, probe func(rounds int), opsPerRound int, unit string) {
	if !useAsm {
		b.Skip("no AVX2 assembly")
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			const rounds = 1 << 20
			busy := make([]time.Duration, threads)
			for b.Loop() {
				for t, d := range onGoroutines(threads, func() { probe(rounds) }) {
					busy[t] += d
				}
			}
			ops := float64(opsPerRound*rounds*threads) * float64(b.N)
			b.ReportMetric(ops/b.Elapsed().Seconds()/1e9, unit)
			if threads > 1 {
				// The slowest goroutine's own rate: on a shared VM one
				// vCPU often runs at half the other's rate (its host
				// core shared with another guest), which every
				// two-thread figure of the same run then inherits.
				slowest := slices.Max(busy)
				b.ReportMetric(float64(opsPerRound*rounds)*float64(b.N)/slowest.Seconds()/1e9, "slowest-thread-"+unit)
			}
		})
	}
}

func BenchmarkMicroKernelF32(b *testing.B) {
	if !useAsm {
		b.Skip("no assembly")
	}
	const k = 256
	a := make([]float32, 6*k)
	bb := make([]float32, 16*k)
	c := make([]float32, 6*16)
	for b.Loop() {
		sgemm6x16(k, &a[0], &bb[0], &c[0], 16, false)
	}
	b.ReportMetric(2*6*16*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkMicroKernelF32K64(b *testing.B) {
	if !useAsm {
		b.Skip("no assembly")
	}
	const k = 64
	a := make([]float32, 6*k)
	bb := make([]float32, 16*k)
	c := make([]float32, 6*16)
	for b.Loop() {
		sgemm6x16(k, &a[0], &bb[0], &c[0], 16, false)
	}
	b.ReportMetric(2*6*16*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMaddPeak measures the VPMADDWD+VPADDD throughput (the s8
// kernel's inner pair) with the assembly probe, on 1 and 2 goroutines:
// the integer peak the s8 GEMM is compared against.
func BenchmarkMaddPeak(b *testing.B) { benchPeak(b, maddPeak, 256, "GOP/s") }

// BenchmarkVNNI8Peak measures VPDPBUSD's throughput on ZMM registers
// (the 8-bit GEMM's instruction where AVX-512 VNNI runs, gemm_quad.go):
// the integer peak it is compared against.
func BenchmarkVNNI8Peak(b *testing.B) {
	if !useVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	benchPeak(b, vnni8Peak, 1536, "GOP/s")
}

// BenchmarkMicroKernelQuad is the VNNI 12×32 kernel in L1, against
// BenchmarkVNNI8Peak.
func BenchmarkMicroKernelQuad(b *testing.B) {
	if !useVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	const kq = 256 // 1024 values of k
	a := make([]byte, 2*4*q8MR*kq)
	bb := make([]byte, 2*4*q8NR*kq)
	c := make([]int32, 12*32)
	bias := make([]int32, 32)
	for b.Loop() {
		kernelQuad(2, kq, a, bb, c, 32, false, bias)
	}
	b.ReportMetric(2*12*32*4*kq*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
}

func BenchmarkMicroKernelS8(b *testing.B) {
	if !useAsm {
		b.Skip("no assembly")
	}
	const kp = 256 // 512 values of k
	a := make([]int16, 2*6*kp)
	bb := make([]int16, 2*16*kp)
	c := make([]int32, 6*16)
	for b.Loop() {
		s8gemm6x16(kp, &a[0], &bb[0], &c[0], 16, false)
	}
	b.ReportMetric(2*6*16*2*kp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
}

// BenchmarkMicroKernelF32Pair is the AVX-512 12×32 kernel in L1, against
// the 16-lane probe's peak.
func BenchmarkMicroKernelF32Pair(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512")
	}
	const k = 256
	a := make([]float32, 12*k)
	bb := make([]float32, 32*k)
	c := make([]float32, 12*32)
	for b.Loop() {
		sgemm12x32z(k, &a[0], &bb[0], &c[0], 32, false)
	}
	b.ReportMetric(2*12*32*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkFMAAfterIdle measures what two threads get right after the
// machine sat idle: each iteration sleeps 20 ms, then runs the FMA probe
// for about 0.7 ms on two goroutines. It reports the slower goroutine's
// rate and the share of iterations in which it ran below three quarters
// of the other's. On the shared VMs this project is measured on, a vCPU
// that was idle often runs at half rate for the first fraction of a
// millisecond or more (continuous load: BenchmarkFMAPeak), which short
// two-thread runs such as `axle run --warmup 2` of a 256³ product
// inherit.
func BenchmarkFMAAfterIdle(b *testing.B) {
	if !useAVX512 || !useAsm {
		b.Skip("no AVX-512 probe")
	}
	const rounds, reps = 1 << 14, 20 // 37 µs a call here
	var slowSum float64
	slowRuns := 0
	for b.Loop() {
		time.Sleep(20 * time.Millisecond)
		d := onGoroutines(2, func() {
			for range reps {
				fmaPeak512(rounds)
			}
		})
		rate := func(d time.Duration) float64 { return 384 * rounds * reps / d.Seconds() / 1e9 }
		slow, fast := rate(max(d[0], d[1])), rate(min(d[0], d[1]))
		slowSum += slow
		if slow < 0.75*fast {
			slowRuns++
		}
	}
	b.ReportMetric(slowSum/float64(b.N), "slowest-thread-GFLOP/s")
	b.ReportMetric(float64(slowRuns)/float64(b.N), "share-slow")
}

// onGoroutines runs f on threads goroutines at once and returns how long
// each took.
func onGoroutines(threads int, f func()) []time.Duration {
	took := make([]time.Duration, threads)
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			f()
			took[t] = time.Since(t0)
		}()
	}
	wg.Wait()
	return took
}
