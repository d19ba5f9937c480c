package kernels

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func randS8(n int, rng *rand.Rand) []int8 {
	s := make([]int8, n)
	for i := range s {
		s[i] = int8(rng.IntN(256) - 128)
	}
	return s
}

// refGemmS8 is the textbook triple loop, summing in int64 and then
// truncating to s32 (the evaluator's semantics).
func refGemmS8(m, n, k int, a, b Strided[int8]) []int32 {
	out := make([]int32, m*n)
	for i := range m {
		for j := range n {
			var s int64
			for p := range k {
				s += int64(a.at(i, p)) * int64(b.at(p, j))
			}
			out[i*n+j] = int32(s)
		}
	}
	return out
}

// s8Case lays out A (m×k) and B (k×n) as asked: A transposed or not, B
// transposed or not, with an extra column stride so that neither is
// contiguous along a row when bCol > 1.
func s8Case(rng *rand.Rand, m, n, k int, transA, transB bool, bCol int, fill func(int, *rand.Rand) []int8) (Strided[int8], Strided[int8]) {
	a := Strided[int8]{Data: fill(m*k, rng), Row: k, Col: 1}
	if transA {
		a = Strided[int8]{Data: a.Data, Row: 1, Col: m}
	}
	b := Strided[int8]{Data: fill(k*n*bCol, rng), Row: n * bCol, Col: bCol}
	if transB {
		b = Strided[int8]{Data: b.Data, Row: bCol, Col: k * bCol}
	}
	return a, b
}

func checkGemmS8Case(t *testing.T, m, n, k int, a, b Strided[int8], threads []int) {
	t.Helper()
	want := refGemmS8(m, n, k, a, b)
	for _, th := range threads {
		ldc := n + 3
		c := make([]int32, m*ldc)
		for i := range c {
			c[i] = 99 // overwritten (accumulate=false), except the padding
		}
		if err := GemmS8(m, n, k, a, b, c, ldc, false, th); err != nil {
			t.Fatal(err)
		}
		for i := range m {
			for j := range n {
				if g, w := c[i*ldc+j], want[i*n+j]; g != w {
					t.Fatalf("m=%d n=%d k=%d strides A %d,%d B %d,%d threads=%d: C[%d,%d] = %d, want %d",
						m, n, k, a.Row, a.Col, b.Row, b.Col, th, i, j, g, w)
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

// Every size 1..17 in each of m, n and k, A and B transposed or not and
// B with odd column strides, exactly equal to the reference loop.
func TestGemmS8Sizes(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for m := 1; m <= 17; m++ {
			for n := 1; n <= 17; n++ {
				for k := 1; k <= 17; k++ {
					a, b := s8Case(rng, m, n, k, (m+k)%2 == 0, (n+k)%3 == 0, 1+(m+n)%3, randS8)
					checkGemmS8Case(t, m, n, k, a, b, []int{1})
				}
			}
		}
	})
}

// Several k blocks (odd and even totals), rows across threads, with 1, 2
// and 3 threads giving the same (exact) result.
func TestGemmS8BlocksAndThreads(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, sz := range [][3]int{{131, 45, 1025}, {70, 97, 511}, {250, 33, 512}, {37, 3100, 40}, {200, 200, 300}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}} {
				a, b := s8Case(rng, m, n, k, tr[0], tr[1], 1, randS8)
				checkGemmS8Case(t, m, n, k, a, b, []int{1, 2, 3})
			}
		}
	})
}

// Extremes: all -128 (each product 2^14, the largest) and a mix of -128
// and 127, with k deep enough for sums near 2^26 but no s32 overflow.
func TestGemmS8Extremes(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		fills := map[string]func(int, *rand.Rand) []int8{
			"-128": func(n int, _ *rand.Rand) []int8 {
				s := make([]int8, n)
				for i := range s {
					s[i] = -128
				}
				return s
			},
			"±": func(n int, rng *rand.Rand) []int8 {
				s := make([]int8, n)
				for i := range s {
					s[i] = [2]int8{-128, 127}[rng.IntN(2)]
				}
				return s
			},
		}
		for name, fill := range fills {
			for _, k := range []int{1, 2, 3, 4097} {
				a, b := s8Case(rng, 13, 35, k, false, false, 1, fill)
				t.Run(name, func(t *testing.T) { checkGemmS8Case(t, 13, 35, k, a, b, []int{1, 2}) })
			}
		}
	})
}

// Past 131072 products of -128·-128 the s32 sum wraps, as XLA's s32
// accumulation does: the result is the exact sum modulo 2^32.
func TestGemmS8Wraps(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		k := 140001
		a := Strided[int8]{Data: make([]int8, 7*k), Row: k, Col: 1}
		b := Strided[int8]{Data: make([]int8, k*17), Row: 17, Col: 1}
		for i := range a.Data {
			a.Data[i] = -128
		}
		for i := range b.Data {
			b.Data[i] = -128
		}
		c := make([]int32, 7*17)
		if err := GemmS8(7, 17, k, a, b, c, 17, false, 2); err != nil {
			t.Fatal(err)
		}
		want := int32(int64(k) << 14) // 2293776384 wraps to -2001190912
		for i, g := range c {
			if g != want || g >= 0 {
				t.Fatalf("C[%d] = %d, want %d (wrapped)", i, g, want)
			}
		}
	})
}

func TestGemmS8Accumulate(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		m, n, k := 19, 23, 700
		a, b := s8Case(rng, m, n, k, false, true, 1, randS8)
		want := refGemmS8(m, n, k, a, b)
		c := make([]int32, m*n)
		for i := range c {
			c[i] = int32(i) - 100
		}
		if err := GemmS8(m, n, k, a, b, c, n, true, 2); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if c[i] != w+int32(i)-100 {
				t.Fatalf("C[%d] = %d, want %d", i, c[i], w+int32(i)-100)
			}
		}
		// k = 0 leaves an accumulated C alone and clears an overwritten one.
		if err := GemmS8(m, n, 0, a, b, c, n, false, 1); err != nil || c[5] != 0 {
			t.Fatalf("k=0: C[5] = %d, err %v", c[5], err)
		}
	})
}

func TestGemmS8BadArgs(t *testing.T) {
	a := Strided[int8]{Data: make([]int8, 12), Row: 4, Col: 1}
	b := Strided[int8]{Data: make([]int8, 20), Row: 5, Col: 1}
	c := make([]int32, 15)
	if err := GemmS8(3, 5, 4, a, b, c, 5, false, 1); err != nil {
		t.Fatalf("fitting arguments: %v", err)
	}
	bad := []struct {
		name    string
		m, n, k int
		a, b    Strided[int8]
		ldc     int
	}{
		{"negative m", -1, 5, 4, a, b, 5},
		{"short A", 4, 5, 4, a, b, 5},
		{"short B", 3, 5, 5, Strided[int8]{Data: make([]int8, 15), Row: 5, Col: 1}, b, 5},
		{"short C", 3, 6, 4, a, Strided[int8]{Data: make([]int8, 24), Row: 6, Col: 1}, 6},
		{"ldc < n", 3, 5, 4, a, b, 4},
		{"negative stride", 3, 5, 4, Strided[int8]{Data: a.Data, Row: -4, Col: 1}, b, 5},
		{"huge stride", 3, 5, 4, Strided[int8]{Data: a.Data, Row: math.MaxInt, Col: 1}, b, 5},
	}
	for _, x := range bad {
		if err := GemmS8(x.m, x.n, x.k, x.a, x.b, c, x.ldc, false, 1); !errors.Is(err, ErrGemmArgs) {
			t.Errorf("%s: err = %v, want ErrGemmArgs", x.name, err)
		}
	}
	if err := GemmBatchS8(2, 3, 5, 4, a, 12, b, 20, c, 5, 15, false, 1); !errors.Is(err, ErrGemmArgs) {
		t.Errorf("batch past the data: err = %v, want ErrGemmArgs", err)
	}
}

// u8 A (ONNX MatMulInteger's activations): every size 1..17, A plain or
// transposed, values over the whole u8 range (255·(-128) products), exactly
// the integer sums of a plain loop.
func TestGemmU8S8Sizes(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 8))
		for m := 1; m <= 17; m++ {
			for n := 1; n <= 17; n += 4 {
				for k := 1; k <= 17; k++ {
					for _, transA := range []bool{false, true} {
						checkGemmU8S8Case(t, m, n, k, transA, rng)
					}
				}
			}
		}
		checkGemmU8S8Case(t, 37, 70, 300, false, rng) // several slivers and k blocks of pairs
	})
}

func checkGemmU8S8Case(t *testing.T, m, n, k int, transA bool, rng *rand.Rand) {
	t.Helper()
	ad := make([]uint8, m*k)
	for i := range ad {
		ad[i] = uint8(rng.IntN(256))
	}
	a := Strided[uint8]{Data: ad, Row: k, Col: 1}
	if transA {
		a = Strided[uint8]{Data: ad, Row: 1, Col: m}
	}
	bd := make([]int8, k*n)
	for i := range bd {
		bd[i] = int8(rng.IntN(256) - 128)
	}
	b := Strided[int8]{Data: bd, Row: n, Col: 1}
	c := make([]int32, m*n)
	if err := GemmU8S8(m, n, k, a, b, c, n, false, 2); err != nil {
		t.Fatal(err)
	}
	for i := range m {
		for j := range n {
			var want int32
			for p := range k {
				want += int32(a.Data[i*a.Row+p*a.Col]) * int32(b.Data[p*b.Row+j*b.Col])
			}
			if c[i*n+j] != want {
				t.Fatalf("m=%d n=%d k=%d transA=%v: C[%d,%d] = %d, want %d", m, n, k, transA, i, j, c[i*n+j], want)
			}
		}
	}
}

// A u8 A too short for its view, or a negative size, is refused with
// ErrGemmArgs before anything is written.
func TestGemmU8S8BadArgs(t *testing.T) {
	b := Strided[int8]{Data: make([]int8, 4*3), Row: 3, Col: 1}
	c := []int32{7, 7, 7, 7, 7, 7}
	short := Strided[uint8]{Data: make([]uint8, 7), Row: 4, Col: 1} // 2×4 needs 8
	if err := GemmU8S8(2, 3, 4, short, b, c, 3, false, 1); !errors.Is(err, ErrGemmArgs) {
		t.Errorf("short A: %v", err)
	}
	if err := GemmU8S8(-1, 3, 4, short, b, c, 3, false, 1); !errors.Is(err, ErrGemmArgs) {
		t.Errorf("negative m: %v", err)
	}
	for _, v := range c {
		if v != 7 {
			t.Fatalf("C written on refused arguments: %v", c)
		}
	}
}

// gemmQuad itself on every kernel level: the VNNI assembly where the CPU
// has it, its pure-Go twin otherwise (the purego run), exact against the
// reference loop for s8 and u8 A, over edges, k blocks and threads.
func TestGemmQuad(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, sz := range [][3]int{{1, 1, 1}, {13, 33, 7}, {12, 32, 4}, {25, 65, 1027}, {6, 31, 2051}, {131, 45, 1025}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}} {
				a, b := s8Case(rng, m, n, k, tr[0], tr[1], 1+m%2, randS8)
				want := refGemmS8(m, n, k, a, b)
				for _, th := range []int{1, 2} {
					c := make([]int32, m*n)
					gemmQuad(m, n, k, a, b, c, n, false, th)
					ua := Strided[uint8]{Data: make([]uint8, len(a.Data)), Row: a.Row, Col: a.Col}
					for i, x := range a.Data {
						ua.Data[i] = uint8(x)
					}
					cu := make([]int32, m*n)
					gemmQuad(m, n, k, ua, b, cu, n, false, th)
					for i := range m {
						for j := range n {
							var wu int64
							for p := range k {
								wu += int64(ua.at(i, p)) * int64(b.at(p, j))
							}
							if c[i*n+j] != want[i*n+j] || cu[i*n+j] != int32(wu) {
								t.Fatalf("%v threads %d: C[%d,%d] = %d (s8 A), %d (u8 A); want %d, %d", sz, th, i, j, c[i*n+j], cu[i*n+j], want[i*n+j], wu)
							}
						}
					}
				}
			}
		}
	})
}

// The VNNI kernel gives its pure-Go twin's bits on the same packed data,
// accumulating into C or overwriting it, one A sliver or two.
func TestQuadKernelTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, kq := range []int{1, 3, 4, 5, 64, 257} {
		for blocks := 1; blocks <= 2; blocks++ {
			a := make([]byte, blocks*4*q8MR*kq)
			b := make([]byte, 2*4*q8NR*kq)
			for i := range a {
				a[i] = byte(rng.IntN(256))
			}
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			bias := make([]int32, q8Tile)
			for i := range bias {
				bias[i] = rng.Int32() - 1<<30
			}
			for _, ow := range []bool{false, true} {
				got, want := make([]int32, 12*40), make([]int32, 12*40)
				for i := range got {
					got[i] = int32(i * 7919)
					want[i] = got[i]
				}
				kernelQuad(blocks, kq, a, b, got, 40, ow, bias)
				kernelQuadGo(blocks, kq, a, b, want, 40, ow, bias)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("kq=%d blocks=%d overwrite=%v: C[%d] = %d, twin %d", kq, blocks, ow, i, got[i], want[i])
					}
				}
			}
		}
	}
}
