package cpu

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// Triangular-solve and cholesky against the evaluator: the shared
// conformance cases, then random small systems of every dtype and
// attribute combination (the exact path: bit-identical), then large real
// ones on the blocked path (within a tolerance) and the declines.

var solveTypes = []hlo.DType{hlo.F32, hlo.F64, hlo.C64, hlo.C128}

var solveLowerers = map[hlo.Opcode]lowerFunc{hlo.OpTriangularSolve: lowerTriangularSolve, hlo.OpCholesky: lowerCholesky}

// TestSolveConformance runs every triangular-solve and cholesky of the
// shared cases through its kernel, which must lower all of them and
// match the evaluator exactly (they are all small: the exact path).
func TestSolveConformance(t *testing.T) {
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	lowered := map[hlo.Opcode]int{}
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil || !(strings.Contains(c.HLO, "triangular-solve(") || strings.Contains(c.HLO, "cholesky(")) {
			continue
		}
		solveConformanceCase(t, c, lowered)
	}
	// 17 and 9 instructions in the shared cases when this was written.
	if lowered[hlo.OpTriangularSolve] < 17 || lowered[hlo.OpCholesky] < 9 {
		t.Errorf("compiled %d triangular-solves and %d choleskys, want 17 and 9",
			lowered[hlo.OpTriangularSolve], lowered[hlo.OpCholesky])
	}
}

func solveConformanceCase(t *testing.T, c *conformance.Case, lowered map[hlo.Opcode]int) {
	t.Helper()
	err := evalCaseSteps(c, func(in *hlo.Instruction, ops []*hlo.Literal, want *hlo.Literal) {
		lower := solveLowerers[in.Opcode]
		if lower == nil {
			return
		}
		k, ok := lower(in, 2)
		if !ok {
			t.Fatalf("%s: %s %s declined", filepath.Base(c.Path), in.Opcode, in.Shape)
		}
		lowered[in.Opcode]++
		got := poisoned(in.Shape)
		if err := k(got, ops); err != nil {
			t.Fatalf("%s: %s: %v", c.Path, in, err)
		}
		checkSolveBits(t, in, got, want)
	})
	if err != nil {
		t.Fatalf("%s: %v", c.Path, err)
	}
}

// checkSolveBits compares exactly, down to the sign of zero, each part of a
// complex value on its own; NaNs of any payload are equal.
func checkSolveBits(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d elements, want %d", in, got.Len(), want.Len())
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) || x != x && y != y }
	for i := range got.Len() {
		x, y := complex(got.GetFloat64(i), 0), complex(want.GetFloat64(i), 0)
		if in.Shape.DType.IsComplex() {
			x, y = got.GetComplex128(i), want.GetComplex128(i)
		}
		if !same(real(x), real(y)) || !same(imag(x), imag(y)) {
			t.Fatalf("%s %v: element %d is %v, want %v", in, in.Attrs, i, x, y)
		}
	}
}

// triSolveText is a triangular-solve of a (batch..., n, n) and b of the
// matching shape, with the given layout text on both operands.
func triSolveText(dt hlo.DType, batch []int64, n, nrhs int64, left, lower, unit bool, tr, layout string) string {
	b := append(append([]int64{}, batch...), n, nrhs)
	if !left {
		b = append(append([]int64{}, batch...), nrhs, n)
	}
	a := append(append([]int64{}, batch...), n, n)
	root := fmt.Sprintf("%s triangular-solve(p0, p1), left_side=%t, lower=%t, unit_diagonal=%t, transpose_a=%s",
		shapeText(dt, b), left, lower, unit, tr)
	return module([]string{shapeText(dt, a) + layout, shapeText(dt, b) + layout}, root)
}

// TestTriangularSolveRandom covers every dtype, side, triangle,
// transpose and unit_diagonal on random small batched systems, with the
// {0,1}-style reversed layout on some, threads 1 to 3: exact matches.
func TestTriangularSolveRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dt := range solveTypes {
		for _, left := range []bool{true, false} {
			for _, lower := range []bool{true, false} {
				for _, tr := range []string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"} {
					for _, unit := range []bool{false, true} {
						batch := [][]int64{nil, {2}, {2, 3}}[rng.IntN(3)]
						n, nrhs := int64(rng.IntN(8)), int64(rng.IntN(6))
						layout := ""
						if len(batch) == 0 && rng.IntN(2) == 0 {
							layout = "{0,1}"
						}
						in := parseRoot(t, triSolveText(dt, batch, n, nrhs, left, lower, unit, tr, layout))
						ops := randomOperands(in, rng)
						if n > 2 && rng.IntN(4) == 0 {
							ops[0].SetFloat64(0, 0) // a zero pivot: NaNs, as in the evaluator's complex division
						}
						got, want := runKernel(t, lowerTriangularSolve, in, ops, 1+rng.IntN(3))
						checkSolveBits(t, in, got, want)
					}
				}
			}
		}
	}
}

// TestTriangularSolveUnreadTriangle puts NaNs in the triangle a solve
// must not read, and in the diagonal of a unit_diagonal solve.
func TestTriangularSolveUnreadTriangle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, lower := range []bool{true, false} {
		for _, unit := range []bool{false, true} {
			in := parseRoot(t, triSolveText(hlo.F64, nil, 5, 3, true, lower, unit, "TRANSPOSE", ""))
			ops := randomOperands(in, rng)
			for i := range 5 {
				for j := range 5 {
					if i == j && unit || i != j && (i > j) != lower {
						ops[0].SetFloat64(i*5+j, math.NaN())
					}
				}
			}
			got, want := runKernel(t, lowerTriangularSolve, in, ops, 1)
			checkSolveBits(t, in, got, want)
			if math.IsNaN(got.GetFloat64(0)) {
				t.Fatalf("lower=%t unit=%t: NaN leaked from the unread part of a", lower, unit)
			}
		}
	}
}

// hermitianPD fills each n×n matrix of l with B·Bᴴ + n·I (positive
// definite), then the triangle cholesky must not read with NaNs.
func hermitianPD(l *hlo.Literal, n int, lower bool, rng *rand.Rand) {
	cplx := l.DType().IsComplex()
	for base := 0; base < l.Len(); base += n * n {
		b := make([]complex128, n*n)
		for i := range b {
			b[i] = complex(rng.Float64()*2-1, 0)
			if cplx {
				b[i] += complex(0, rng.Float64()*2-1)
			}
		}
		for i := range n {
			for j := range n {
				v := complex(0, 0)
				for k := range n {
					v += b[i*n+k] * cmplx.Conj(b[j*n+k])
				}
				if i == j {
					v = complex(real(v)+float64(n), 0)
				}
				if i != j && (i > j) != lower {
					v = complex(math.NaN(), math.NaN())
				}
				l.SetComplex128(base+i*n+j, v)
			}
		}
	}
}

// TestCholeskyRandom factors random Hermitian positive definite batches
// of every dtype, both triangles, and indefinite ones (all NaN): exact.
func TestCholeskyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dt := range solveTypes {
		for _, lower := range []bool{true, false} {
			for trial := range 6 {
				n := rng.IntN(9)
				batch := [][]int64{nil, {3}, {2, 2}}[trial%3]
				s := shapeText(dt, append(append([]int64{}, batch...), int64(n), int64(n)))
				layout := ""
				if len(batch) == 0 && trial%2 == 0 {
					layout = "{0,1}"
				}
				in := parseRoot(t, module([]string{s + layout}, fmt.Sprintf("%s cholesky(p0), lower=%t", s, lower)))
				ops := []*hlo.Literal{hlo.NewLiteral(in.Operands[0].Shape)}
				hermitianPD(ops[0], n, lower, rng)
				if n > 1 && trial >= 3 {
					ops[0].SetFloat64(n*n-1, -1) // the last matrix is indefinite
				}
				got, want := runKernel(t, lowerCholesky, in, ops, 1+rng.IntN(3))
				checkSolveBits(t, in, got, want)
			}
		}
	}
}

// closeScaled compares within tol times the largest magnitude of want:
// the blocked kernels sum in another order (and f32 ones in f32, where
// the evaluator sums in f64). For these well-conditioned systems the
// backward-stable algorithms are off by a few n·ε of that scale: n ≤ 300
// gives 2e-5 for f32 and 7e-14 for f64; tol leaves a margin of 5.
func closeScaled(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	tol := 1e-4
	if in.Shape.DType == hlo.F64 {
		tol = 3e-13
	}
	scale := 0.0
	for i := range want.Len() {
		if v := math.Abs(want.GetFloat64(i)); v > scale { // (not NaN)
			scale = v
		}
	}
	for i := range got.Len() {
		x, y := got.GetFloat64(i), want.GetFloat64(i)
		if x != y && !(x != x && y != y) && !(math.Abs(x-y) <= tol*scale) {
			t.Fatalf("%s: element %d is %v, want %v (scale %v)", in, i, x, y, scale)
		}
	}
}

// wellConditioned makes each matrix of a diagonally dominant: off-
// diagonal entries in [-1, 1]/n, the diagonal in ±[1, 2].
func wellConditioned(a *hlo.Literal, n int, rng *rand.Rand) {
	for i := range a.Len() {
		r, c := i/n%n, i%n
		v := (rng.Float64()*2 - 1) / float64(n)
		if r == c {
			v = (1 + rng.Float64()) * float64(1-2*rng.IntN(2))
		}
		a.SetFloat64(i, v)
	}
}

// TestSolveBlocked runs real systems large enough for the blocked
// kernels (with a batch of two, and an n not a multiple of the block)
// against the evaluator within closeScaled's tolerance, and checks that
// one and two threads agree exactly.
func TestSolveBlocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = blockedMinN + 101
	for _, dt := range []hlo.DType{hlo.F32, hlo.F64} {
		for _, left := range []bool{true, false} {
			for _, lower := range []bool{true, false} {
				for _, tr := range []string{"NO_TRANSPOSE", "TRANSPOSE"} {
					unit := rng.IntN(2) == 0
					in := parseRoot(t, triSolveText(dt, []int64{2}, n, 70, left, lower, unit, tr, ""))
					if p, _ := planTriSolve(in); !p.blocked {
						t.Fatalf("%s: not blocked", in)
					}
					ops := randomOperands(in, rng)
					wellConditioned(ops[0], n, rng)
					got, want := runKernel(t, lowerTriangularSolve, in, ops, 2)
					closeScaled(t, in, got, want)
					one, _ := runKernel(t, lowerTriangularSolve, in, ops, 1)
					checkSolveBits(t, in, one, got)
				}
			}
		}
		for _, lower := range []bool{true, false} {
			s := shapeText(dt, []int64{2, n, n})
			in := parseRoot(t, module([]string{s}, fmt.Sprintf("%s cholesky(p0), lower=%t", s, lower)))
			ops := []*hlo.Literal{hlo.NewLiteral(in.Operands[0].Shape)}
			hermitianPD(ops[0], n, lower, rng)
			got, want := runKernel(t, lowerCholesky, in, ops, 2)
			closeScaled(t, in, got, want)
			ops[0].SetFloat64(n*n+n+1, -1e6) // the second matrix turns indefinite at pivot 1
			got, want = runKernel(t, lowerCholesky, in, ops, 1)
			closeScaled(t, in, got, want)
			if !math.IsNaN(got.GetFloat64(n*n+n*n-1)) || math.IsNaN(got.GetFloat64(0)) {
				t.Fatalf("%s: want NaNs for the second matrix only", in)
			}
		}
	}
}

// TestSolveDeclines: types the kernels do not compute in fall back to
// the evaluator.
func TestSolveDeclines(t *testing.T) {
	for _, dt := range []hlo.DType{hlo.BF16, hlo.F16} {
		if _, ok := lowerTriangularSolve(parseRoot(t, triSolveText(dt, nil, 3, 2, true, true, false, "NO_TRANSPOSE", "")), 1); ok {
			t.Errorf("%s triangular-solve lowered", dt)
		}
		s := shapeText(dt, []int64{3, 3})
		if _, ok := lowerCholesky(parseRoot(t, module([]string{s}, s+" cholesky(p0), lower=true")), 1); ok {
			t.Errorf("%s cholesky lowered", dt)
		}
	}
}

// BenchmarkSolve times an f32 cholesky of 512×512 and an f32 left
// triangular solve of 512×512 with 512 right-hand sides, kernel (one
// and two threads) against the evaluator.
func BenchmarkSolve(b *testing.B) {
	const n = 512
	s := shapeText(hlo.F32, []int64{n, n})
	chol := parseRootB(b, module([]string{s}, s+" cholesky(p0), lower=true"))
	trsm := parseRootB(b, triSolveText(hlo.F32, nil, n, n, true, true, false, "NO_TRANSPOSE", ""))
	rng := rand.New(rand.NewPCG(1, 1))
	cholOps := []*hlo.Literal{hlo.NewLiteral(chol.Operands[0].Shape)}
	hermitianPD(cholOps[0], n, true, rng)
	trsmOps := randomOperands(trsm, rng)
	wellConditioned(trsmOps[0], n, rng)
	for _, c := range []struct {
		name  string
		in    *hlo.Instruction
		lower lowerFunc
		ops   []*hlo.Literal
	}{{"cholesky", chol, lowerCholesky, cholOps}, {"trsm", trsm, lowerTriangularSolve, trsmOps}} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/kernel-threads=%d", c.name, threads), func(b *testing.B) {
				k, ok := c.lower(c.in, threads)
				if !ok {
					b.Fatal("no kernel")
				}
				out := hlo.NewLiteral(c.in.Shape)
				for b.Loop() {
					if err := k(out, c.ops); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(c.name+"/evaluator", func(b *testing.B) {
			var ev eval.Evaluator
			for b.Loop() {
				if _, err := ev.Instruction(c.in, c.ops); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTriangularSolveNonFinite injects zero pivots, infinities and NaNs
// into a and b: the real kernels must turn what follows an infinite
// step into NaNs as the evaluator's complex arithmetic does (exact on
// small systems; on a blocked one, a zero pivot, within tolerance).
func TestTriangularSolveNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	specials := []float64{0, math.Inf(1), math.Inf(-1), math.NaN(), 1e300}
	for trial := range 400 {
		dt := solveTypes[trial%4]
		tr := []string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}[rng.IntN(3)]
		in := parseRoot(t, triSolveText(dt, []int64{2}, 1+int64(rng.IntN(6)), 1+int64(rng.IntN(4)),
			rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(4) == 0, tr, ""))
		ops := randomOperands(in, rng)
		for range 1 + rng.IntN(3) {
			o := ops[rng.IntN(2)]
			o.SetFloat64(rng.IntN(o.Len()), specials[rng.IntN(len(specials))])
		}
		got, want := runKernel(t, lowerTriangularSolve, in, ops, 1)
		checkSolveBits(t, in, got, want)
	}
	const n = blockedMinN + 60
	for _, lower := range []bool{true, false} {
		in := parseRoot(t, triSolveText(hlo.F32, nil, n, 9, true, lower, false, "NO_TRANSPOSE", ""))
		ops := randomOperands(in, rng)
		wellConditioned(ops[0], n, rng)
		ops[0].SetFloat64(150*n+150, 0) // in the second outer block
		got, want := runKernel(t, lowerTriangularSolve, in, ops, 2)
		closeScaled(t, in, got, want)
	}
}
