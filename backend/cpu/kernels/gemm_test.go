package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func randSlice[T float32 | float64](n int, rng *rand.Rand) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.Float64()*2 - 1)
	}
	return s
}

// refGemm is the textbook triple loop in float64.
func refGemm[T float32 | float64](m, n, k int, a, b Strided[T]) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a.at(i, p)) * float64(b.at(p, j))
			}
			out[i*n+j] = s
		}
	}
	return out
}

// withKernels runs f with the assembly kernels, again with the AVX2 ones
// alone (where AVX-512 runs too), and again with the pure-Go ones (where
// the assembly exists).
func withKernels(t *testing.T, f func(t *testing.T)) {
	t.Run("default", f)
	if useVNNIVar != nil && *useVNNIVar {
		*useVNNIVar = false
		t.Run("avx512", f)
		*useVNNIVar = true
	}
	if useAVX512Var != nil && *useAVX512Var {
		*useAVX512Var = false
		t.Run("avx2", f)
		*useAVX512Var = true
	}
	if useAsmVar != nil && *useAsmVar {
		*useAsmVar = false
		defer func() { *useAsmVar = true }()
		t.Run("purego", f)
	}
}

// Every size 1..17 in each dimension, A transposed or not, B with an odd
// column stride or transposed (bCol 0), 1 and 3 threads, against the
// float64 triple loop.
func TestGemmSizesAndStrides(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for m := 1; m <= 17; m++ {
			for n := 1; n <= 17; n++ {
				for _, k := range []int{1, 2, 5, 16, 17} {
					checkGemm(t, rng, m, n, k, m%2 == 0, n%4)
				}
			}
		}
		for _, k := range []int{1, 7, 255, 256, 257, 600} {
			checkGemm(t, rng, 31, 45, k, false, 1)
			checkGemm(t, rng, 130, 19, k, true, 3)
			checkGemm(t, rng, 40, 37, k, false, 0)
		}
	})
}

func checkGemm(t *testing.T, rng *rand.Rand, m, n, k int, transA bool, bCol int) {
	t.Helper()
	a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
	if transA {
		a = Strided[float32]{Data: a.Data, Row: 1, Col: m}
	}
	b := Strided[float32]{Data: randSlice[float32](k*n*bCol, rng), Row: n * bCol, Col: bCol}
	if bCol == 0 { // B transposed: columns contiguous, k+1 apart
		b = Strided[float32]{Data: randSlice[float32]((k+1)*n, rng), Row: 1, Col: k + 1}
	}
	want := refGemm(m, n, k, a, b)
	for _, threads := range []int{1, 3} {
		ldc := n + 3
		c := make([]float32, m*ldc)
		for i := range c {
			c[i] = 99 // overwritten (accumulate=false), except the padding
		}
		GemmF32(m, n, k, a, b, c, ldc, false, threads)
		for i := range m {
			for j := range n {
				g, w := float64(c[i*ldc+j]), want[i*n+j]
				if !(math.Abs(g-w) <= 1e-5*float64(k)+1e-6) {
					t.Fatalf("m=%d n=%d k=%d transA=%v bCol=%d threads=%d: C[%d,%d] = %v, want %v", m, n, k, transA, bCol, threads, i, j, g, w)
				}
			}
			for j := n; j < ldc; j++ {
				if c[i*ldc+j] != 99 {
					t.Fatalf("m=%d n=%d k=%d: wrote outside C at [%d,%d]", m, n, k, i, j)
				}
			}
		}
	}
}

func TestGemmF64AndAccumulate(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, sz := range [][3]int{{1, 1, 1}, {7, 9, 13}, {13, 17, 300}, {64, 40, 33}} {
			m, n, k := sz[0], sz[1], sz[2]
			a := Strided[float64]{Data: randSlice[float64](m*k, rng), Row: k, Col: 1}
			b := Strided[float64]{Data: randSlice[float64](k*n, rng), Row: 1, Col: k} // B transposed
			want := refGemm(m, n, k, a, b)
			c := make([]float64, m*n)
			for i := range c {
				c[i] = 1
			}
			GemmF64(m, n, k, a, b, c, n, true, 2)
			for i, w := range want {
				if !(math.Abs(c[i]-(w+1)) <= 1e-12*float64(k)) {
					t.Fatalf("%v: C[%d] = %v, want %v", sz, i, c[i], w+1)
				}
			}
		}
	})
}

// The result does not depend on the thread count, bit for bit.
func TestGemmThreadCountInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, n, k := 97, 130, 513
	a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
	b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
	c1, c2 := make([]float32, m*n), make([]float32, m*n)
	GemmF32(m, n, k, a, b, c1, n, false, 1)
	GemmF32(m, n, k, a, b, c2, n, false, 4)
	for i := range c1 {
		if c1[i] != c2[i] {
			t.Fatalf("element %d: %v with 1 thread, %v with 4", i, c1[i], c2[i])
		}
	}
}

func TestGemmBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	batch, m, n, k := 3, 5, 7, 9
	a := randSlice[float32](batch*m*k, rng)
	b := randSlice[float32](batch*k*n, rng)
	c := make([]float32, batch*m*n)
	GemmBatchF32(batch, m, n, k, Strided[float32]{Data: a, Row: k, Col: 1}, m*k,
		Strided[float32]{Data: b, Row: n, Col: 1}, k*n, c, n, m*n, false, 2)
	for i := range batch {
		want := refGemm(m, n, k, Strided[float32]{Data: a[i*m*k:], Row: k, Col: 1}, Strided[float32]{Data: b[i*k*n:], Row: n, Col: 1})
		for j, w := range want {
			if g := float64(c[i*m*n+j]); !(math.Abs(g-w) <= 1e-5) {
				t.Fatalf("batch %d element %d = %v, want %v", i, j, g, w)
			}
		}
	}
}

// TestPackRows6 checks the A packer (its vector transpose for whole
// chunks of eight steps, and the rest) against the definition, for
// every depth up to 70 and long ones, at odd offsets and strides, and
// that it writes nothing past its six rows' steps.
func TestPackRows6(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, kb := range append(seq(1, 70), 255, 256, 257) {
		for _, ld := range []int{kb + 3, 2*kb + 5} {
			pc := rng.IntN(3)
			a := Strided[float32]{Data: randSlice[float32](8*ld+pc+kb, rng), Row: ld, Col: 1}
			i := 1 + rng.IntN(2)
			dst := make([]float32, 6*kb+8)
			for j := range dst {
				dst[j] = -7
			}
			packRows6(dst[:6*kb], a, i, pc, kb)
			for p := range kb {
				for r := range 6 {
					if got, want := dst[6*p+r], a.Data[(i+r)*ld+pc+p]; got != want {
						t.Fatalf("kb=%d ld=%d: step %d row %d = %v, want %v", kb, ld, p, r, got, want)
					}
				}
			}
			for j := 6 * kb; j < len(dst); j++ {
				if dst[j] != -7 {
					t.Fatalf("kb=%d: wrote dst[%d] past the %d steps", kb, j, kb)
				}
			}
		}
	}
}

// TestPackBRows checks packBRows' layout for every sliver width 1..16 and
// both sizes of the row-major path (whole slivers, the masked partial
// one): each sliver k-major, 16 values a step, zeros past B's last
// column (a lane read too many would bring the next row's value or
// whatever follows B), nothing written past the slivers asked for.
func TestPackBRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const nr = 16
	for _, nb := range append(seq(1, 40), 47, 48) {
		for _, kb := range []int{1, 2, 7, 64, 257} {
			ld := nb + rng.IntN(3)
			jc, pc := rng.IntN(2), rng.IntN(3)
			rows := pc + kb
			data := randSlice[float32]((rows-1)*ld+jc+nb, rng)
			b := Strided[float32]{Data: data, Row: ld, Col: 1}
			slivers := (nb + nr - 1) / nr
			dst := make([]float32, (slivers+1)*kb*nr)
			for i := range dst {
				dst[i] = float32(math.NaN())
			}
			packB(dst, b, pc, jc, kb, nb, nr, 0, slivers)
			for sl := range slivers {
				for p := range kb {
					for j := range nr {
						got := dst[sl*kb*nr+p*nr+j]
						var want float32
						if c := sl*nr + j; c < nb {
							want = data[(pc+p)*ld+jc+c]
						}
						if got != want && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
							t.Fatalf("nb=%d kb=%d: sliver %d step %d lane %d = %v, want %v", nb, kb, sl, p, j, got, want)
						}
					}
				}
			}
			for i := slivers * kb * nr; i < len(dst); i++ {
				if !math.IsNaN(float64(dst[i])) {
					t.Fatalf("nb=%d kb=%d: wrote dst[%d] past the slivers", nb, kb, i)
				}
			}
		}
	}
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// Both ways of splitting a product across threads, C's rows and C's
// columns, give the one-thread result bit for bit: over edges in every
// dimension, several KC slices, and accumulating into C.
func TestGemmSplitsMatchOneThread(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, s := range [][3]int{{97, 301, 513}, {250, 200, 300}, {40, 700, 257}, {13, 300, 70}} {
			m, n, k := s[0], s[1], s[2]
			a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
			b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
			init := randSlice[float32](m*(n+5), rng)
			for _, acc := range []bool{false, true} {
				run := func(threads int, cols bool) []float32 {
					defer func(v bool) { columnSplit = v }(columnSplit)
					columnSplit = cols
					c := append([]float32(nil), init...)
					GemmF32(m, n, k, a, b, c, n+5, acc, threads)
					return c
				}
				want := run(1, false)
				for _, threads := range []int{2, 3} {
					for _, cols := range []bool{false, true} {
						got := run(threads, cols)
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("%v accumulate=%v threads=%d columns=%v: element %d = %v, one thread %v",
									s, acc, threads, cols, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	})
}

// A thread that falls behind in the column split hands its last chunks
// to the others, and the result is still the one-thread result bit for
// bit, at every chunk size.
func TestGemmColumnsSlowThread(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		m, n, k := 100, 1000, 300
		a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
		b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
		want := make([]float32, m*n)
		GemmF32(m, n, k, a, b, want, n, false, 1)
		defer func(v, w int) { chunksPerThread, packedChunksPerThread, chunkHook = v, w, nil }(chunksPerThread, packedChunksPerThread)
		for _, per := range []int{1, 4, 100} {
			chunksPerThread, packedChunksPerThread = per, per
			var taken [2]atomic.Int32
			chunkHook = func(t int) {
				taken[t].Add(1)
				if t == 0 {
					time.Sleep(20 * time.Millisecond)
				}
			}
			got := make([]float32, m*n)
			GemmF32(m, n, k, a, b, got, n, false, 2)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("chunks per thread %d: element %d = %v, one thread %v", per, i, got[i], want[i])
				}
			}
			if per > 1 && taken[1].Load() <= taken[0].Load() {
				t.Errorf("chunks per thread %d: the fast thread took %d of the chunks, the slow one %d", per, taken[1].Load(), taken[0].Load())
			}
		}
	})
}

// The column split's chunks cover every sliver once, in order, in whole
// pairs (but the last sliver when their count is odd); each thread owns
// the same number of chunks and, with them, as many pairs as any other
// give or take one, whatever the width asked for.
func TestColumnChunksBalance(t *testing.T) {
	for slivers := 1; slivers <= 200; slivers++ {
		for threads := 1; threads <= 4; threads++ {
			for width := 2; width <= slivers+2; width += 2 {
				ch := chunksOf(slivers, threads, width)
				next := 0
				owned := make([]int, threads)
				for c := range ch.n {
					s0, s1 := ch.slivers(c)
					if s0 != next || s1 <= s0 || s0%2 != 0 || (s1%2 != 0 && s1 != slivers) || s1-s0 > ch.widest() {
						t.Fatalf("%d slivers, %d threads, width %d: chunk %d of %d is [%d, %d) after %d (widest %d)",
							slivers, threads, width, c, ch.n, s0, s1, next, ch.widest())
					}
					next = s1
					owned[c*threads/ch.n] += (s1 - s0 + 1) / 2 // claims' owner of chunk c
				}
				if next != slivers {
					t.Fatalf("%d slivers, %d threads, width %d: chunks end at %d", slivers, threads, width, next)
				}
				if ch.n >= threads && slices.Max(owned)-slices.Min(owned) > 1 {
					t.Fatalf("%d slivers, %d threads, width %d: %d chunks give the threads %v pairs", slivers, threads, width, ch.n, owned)
				}
			}
		}
	}
}

// Scratch buffers of mixed sizes cycling through the pools: every
// request gets exactly its length, from a buffer of its size class, in
// f32 and f64 alike; a buffer getBuf did not make is not pooled.
func TestBufPools(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var held32 [][]float32
	var held64 [][]float64
	for range 2000 {
		n := rng.IntN(1 << uint(rng.IntN(18)+1))
		switch rng.IntN(4) {
		case 0:
			b := getBuf[float32](n)
			if len(b) != n || cap(b) < n || cap(b) != 1<<bufClass(n) {
				t.Fatalf("getBuf(%d): len %d cap %d", n, len(b), cap(b))
			}
			held32 = append(held32, b)
		case 1:
			b := getBuf[float64](n)
			if len(b) != n || cap(b) != 1<<bufClass(n) {
				t.Fatalf("getBuf[float64](%d): len %d cap %d", n, len(b), cap(b))
			}
			held64 = append(held64, b)
		case 2:
			if len(held32) > 0 {
				putBuf(held32[0])
				held32 = held32[1:]
			}
		default:
			if len(held64) > 0 {
				putBuf(held64[0])
				held64 = held64[1:]
			}
		}
	}
	putBuf(make([]float32, 100)) // not a size class: dropped
	for range 100 {
		if b := getBuf[float32](100); cap(b) != 128 {
			t.Fatalf("getBuf(100) has cap %d, want 128", cap(b))
		}
	}
	if bufClass(0) != 0 || bufClass(1) != 0 || bufClass(2) != 1 || bufClass(3) != 2 || bufClass(4) != 2 || bufClass(5) != 3 {
		t.Fatal("size classes are not the powers of two at or above n")
	}
}

// The AVX-512 kernels take B slivers in pairs and A slivers in pairs
// where they are whole; sizes on each side of those boundaries (12 rows,
// 32 f32 or 16 f64 columns), with accumulation, match the float64 triple
// loop and, bit for bit, the AVX2 kernels (the same FMAs in the same
// order).
func TestGemmPairKernels(t *testing.T) {
	if useAVX512Var == nil || !*useAVX512Var {
		t.Skip("no AVX-512 kernels on this machine")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, m := range []int{5, 6, 11, 12, 13, 18, 24, 25, 121} {
		for _, n := range []int{15, 16, 31, 32, 33, 48, 63, 64, 65, 97} {
			for _, k := range []int{1, 3, 4, 5, 300} {
				checkPair(t, rng, m, n, k)
			}
		}
	}
}

func checkPair(t *testing.T, rng *rand.Rand, m, n, k int) {
	t.Helper()
	a32 := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
	b32 := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
	a64 := Strided[float64]{Data: randSlice[float64](m*k, rng), Row: 1, Col: m}
	b64 := Strided[float64]{Data: randSlice[float64](k*n, rng), Row: n, Col: 1}
	want32, want64 := refGemm(m, n, k, a32, b32), refGemm(m, n, k, a64, b64)
	ldc := n + 1
	run := func(avx512 bool) ([]float32, []float64) {
		*useAVX512Var = avx512
		defer func() { *useAVX512Var = true }()
		c32, c64 := make([]float32, m*ldc), make([]float64, m*ldc)
		for i := range c32 {
			c32[i], c64[i] = 0.5, 0.5
		}
		GemmF32(m, n, k, a32, b32, c32, ldc, true, 2)
		GemmF64(m, n, k, a64, b64, c64, ldc, true, 2)
		return c32, c64
	}
	got32, got64 := run(true)
	ref32, ref64 := run(false)
	for i := range m {
		for j := range ldc {
			at := i*ldc + j
			if j == n {
				if got32[at] != 0.5 || got64[at] != 0.5 {
					t.Fatalf("%dx%dx%d: wrote outside C at [%d,%d]", m, n, k, i, j)
				}
				continue
			}
			w := want32[i*n+j] + 0.5
			if g := float64(got32[at]); !(math.Abs(g-w) <= 1e-5*float64(k)+1e-6) {
				t.Fatalf("%dx%dx%d f32: C[%d,%d] = %v, want %v", m, n, k, i, j, g, w)
			}
			if w := want64[i*n+j] + 0.5; !(math.Abs(got64[at]-w) <= 1e-12*float64(k)) {
				t.Fatalf("%dx%dx%d f64: C[%d,%d] = %v, want %v", m, n, k, i, j, got64[at], w)
			}
			if math.Float32bits(got32[at]) != math.Float32bits(ref32[at]) || got64[at] != ref64[at] {
				t.Fatalf("%dx%dx%d: C[%d,%d] = %v / %v, AVX2 kernels %v / %v", m, n, k, i, j, got32[at], got64[at], ref32[at], ref64[at])
			}
		}
	}
}
