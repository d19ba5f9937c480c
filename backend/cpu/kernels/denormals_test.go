package kernels

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// withFlush runs f with the kernels flushing subnormals to zero.
func withFlush(t *testing.T, f func()) {
	t.Helper()
	was := SetFlushDenormals(true)
	defer SetFlushDenormals(was)
	if !FlushDenormals() {
		t.Fatal("flushing not on")
	}
	f()
}

// TestFlushDenormalsGemm checks that the GEMM kernels, flushing, give the
// product of A with its subnormals read as zero, and differ from it when
// keeping them (A's rows of subnormal values times B's large ones give
// normal sums).
func TestFlushDenormalsGemm(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels here")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{40, 70, 33}, {24, 64, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, az := make([]float32, m*k), make([]float32, m*k)
		for i := range a {
			a[i] = rng.Float32()
			if i/k%3 == 0 { // every third row subnormal
				a[i] = math.Float32frombits(rng.Uint32N(1<<23) + 1)
			} else {
				az[i] = a[i]
			}
		}
		b := randSlice[float32](k*n, rng)
		for i := range b {
			b[i] *= 1e30
		}
		sa, sz := Strided[float32]{Data: a, Row: k, Col: 1}, Strided[float32]{Data: az, Row: k, Col: 1}
		sb := Strided[float32]{Data: b, Row: n, Col: 1}
		got, want, kept := make([]float32, m*n), make([]float32, m*n), make([]float32, m*n)
		withFlush(t, func() {
			GemmF32(m, n, k, sa, sb, got, n, false, 1)
			GemmF32(m, n, k, sz, sb, want, n, false, 1)
		})
		was := SetFlushDenormals(false)
		GemmF32(m, n, k, sa, sb, kept, n, false, 1)
		SetFlushDenormals(was)
		differ := false
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: element %d: got %g, want %g (A's subnormals read as zero)", s, i, got[i], want[i])
			}
			differ = differ || kept[i] != want[i]
		}
		if !differ {
			t.Errorf("%v: keeping subnormals changed nothing", s)
		}
	}
}

// TestMXCSRRestored checks that the GEMM gives its thread the default
// SSE control word back: Go arithmetic on a subnormal right after a
// flushing product must keep it.
func TestMXCSRRestored(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rng := rand.New(rand.NewPCG(7, 8))
	a := Strided[float32]{Data: randSlice[float32](32*32, rng), Row: 32, Col: 1}
	c := make([]float32, 32*32)
	withFlush(t, func() { GemmF32(32, 32, 32, a, a, c, 32, false, 1) })
	if tiny*one == 0 {
		t.Errorf("Go arithmetic flushed a subnormal after the product: MXCSR not given back")
	}
}

// tiny and one are variables, so that the compiler does not fold their
// product.
var tiny, one float32 = 1e-40, 1
