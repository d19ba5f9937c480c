package kernels

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// TestMain runs the package's tests with IEEE subnormals, which they
// compare bit for bit with Go loops; TestFlushDenormals and
// TestFlushDenormalsGemm check the default, flushing.
func TestMain(m *testing.M) {
	SetFlushDenormals(false)
	os.Exit(m.Run())
}

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

// TestFlushDenormals checks the flushing kernels against their own
// results on the inputs with subnormals read as zero, bit for bit, and
// that no result is subnormal: elementwise ops, compares, sums and the
// vector math, over values around the subnormal range and exp's
// underflow. With flushing off the same runs must keep some subnormal
// result, so the test can tell the modes apart.
func TestFlushDenormals(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels here")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	n := 1003
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = subnormalish(rng)
		b[i] = subnormalish(rng)
	}
	daz := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			if v != 0 && math.Abs(float64(v)) < 0x1p-126 {
				v = float32(math.Copysign(0, float64(v)))
			}
			y[i] = v
		}
		return y
	}
	az, bz := daz(a), daz(b)
	binary := map[string]func(dst, a, b []float32){
		"add": AddF32, "mul": MulF32, "div": DivF32, "max": MaximumF32, "lt": func(d, a, b []float32) { CompareF32(CmpLT, d, a, b) },
	}
	unary := map[string]func(dst, x []float32){"exp": ExpF32, "tanh": TanhF32, "logistic": LogisticF32, "sqrt": SqrtF32}
	check := func(name string, got, want []float32, flushed bool) {
		t.Helper()
		subnormal := false
		for i := range got {
			if g := math.Abs(float64(got[i])); g != 0 && g < 0x1p-126 {
				subnormal = true
			}
			if flushed && math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s, flushing: element %d (%g, %g): got %g, want %g (inputs read as zero, result flushed)", name, i, a[i], b[i], got[i], want[i])
			}
		}
		if subnormal == flushed {
			t.Errorf("%s: flushing %v, yet a subnormal result: %v", name, flushed, subnormal)
		}
	}
	for name, f := range binary {
		got, want := make([]float32, n), make([]float32, n)
		withFlush(t, func() { f(got, a, b); f(want, az, bz) })
		check(name, got, daz(want), true)
		if name != "lt" && name != "max" { // they pass subnormals through only when kept
			f(got, a, b)
			check(name+" (kept)", got, nil, false)
		}
	}
	for name, f := range unary {
		got, want := make([]float32, n), make([]float32, n)
		withFlush(t, func() { f(got, a); f(want, az) })
		check(name, got, daz(want), true)
	}
}

// subnormalish returns values around the subnormal range and ones whose
// exp underflows into it.
func subnormalish(rng *rand.Rand) float32 {
	switch rng.IntN(4) {
	case 0:
		return math.Float32frombits(rng.Uint32N(1<<23)) * float32(1-2*rng.IntN(2)) // subnormal
	case 1:
		return float32(math.Ldexp(rng.Float64()+1, -126-rng.IntN(3))) // around the smallest normal
	case 2:
		return -87 - 17*rng.Float32() // exp into the subnormal range
	}
	return rng.Float32()*4 - 2
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
		GemmF32(m, n, k, sa, sb, kept, n, false, 1)
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

// TestMXCSRRestored checks that a flushing kernel gives its caller's
// thread the default SSE control word back: Go arithmetic on a subnormal
// right after the call must keep it.
func TestMXCSRRestored(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels here")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := []float32{-100, 1e-40, 0}
	y := make([]float32, len(x))
	withFlush(t, func() { ExpF32(y, x) })
	if y[0] != 0 {
		t.Errorf("exp(-100) = %g while flushing, want 0", y[0])
	}
	if x[1]*y[2] == 0 { // 1e-40 · exp(0), in Go
		t.Errorf("Go arithmetic flushed a subnormal after the call: MXCSR not restored")
	}
}
