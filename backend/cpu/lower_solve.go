package cpu

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Triangular-solve and cholesky. Small matrices and complex ones run the
// unblocked kernels in float64 or complex128, the evaluator's precision
// and summation order, so they match it bit for bit (f32 and c64 are
// widened per matrix and rounded once at the end, as the evaluator
// does). Real matrices of at least blockedMinN rows run the blocked
// kernels in their own type, their bulk on the GEMM. Literal data is
// row-major whatever the layout, as in the evaluator, so layouts need no
// handling.

// blockedMinN is the matrix size from which real solves and
// factorizations run blocked (on the GEMM, but no longer bit-identical
// to the evaluator): one outer block.
const blockedMinN = kernels.SolveBlock

// triSolvePlan is a triangular-solve as its kernel sees it: each of
// batch systems solves M·y = c for every column (left side) or row
// (right side) c of an rows×cols b, where M is the n×n op(a), transposed
// once more for right-side solves (x·op(a) = b ⇔ op(a)ᵀ·xᵀ = bᵀ).
type triSolvePlan struct {
	batch, n, rows, cols int
	left, unit           bool
	mTrans, mConj        bool // M[r][c] is a[c][r] / conjugated
	mLower               bool // the triangle of M to read
	blocked              bool
}

func planTriSolve(in *hlo.Instruction) (triSolvePlan, bool) {
	as, bs := in.Operands[0].Shape, in.Operands[1].Shape
	if as.Rank() < 2 || bs.Rank() != as.Rank() || !solveType(as.DType) || bs.DType != as.DType || in.Shape.DType != as.DType {
		return triSolvePlan{}, false
	}
	tr, _ := in.EnumAttr("transpose_a")
	trans := tr == "TRANSPOSE" || tr == "ADJOINT"
	p := triSolvePlan{
		n: int(as.Dims[as.Rank()-1]), rows: int(bs.Dims[bs.Rank()-2]), cols: int(bs.Dims[bs.Rank()-1]),
		left: in.Bool("left_side"), unit: in.Bool("unit_diagonal"), mConj: tr == "ADJOINT",
	}
	p.batch = int(hlo.ArrayShape(as.DType, as.Dims[:as.Rank()-2]...).NumElements())
	p.mTrans = trans != !p.left
	p.mLower = in.Bool("lower") != p.mTrans
	shared := p.cols
	if p.left {
		shared = p.rows
	}
	if shared != p.n || int(as.Dims[as.Rank()-2]) != p.n {
		return triSolvePlan{}, false
	}
	p.blocked = !as.DType.IsComplex() && p.n >= blockedMinN
	return p, true
}

// solveType reports whether the solve kernels handle dtype t: the types
// the evaluator factors without a lossy detour (it computes in
// complex128; narrower floats would round there and back per matrix).
func solveType(t hlo.DType) bool {
	return t == hlo.F32 || t == hlo.F64 || t == hlo.C64 || t == hlo.C128
}

// lowerTriangularSolve compiles a triangular-solve of f32, f64, c64 or
// c128 operands.
func lowerTriangularSolve(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	p, ok := planTriSolve(in)
	if !ok {
		return nil, false
	}
	switch in.Shape.DType {
	case hlo.F32:
		return triSolveKernel(p, threads, widenReal[float32], narrowReal[float32], triSolveBlocked[float32]), true
	case hlo.F64:
		return triSolveKernel(p, threads, widenReal[float64], narrowReal[float64], triSolveBlocked[float64]), true
	case hlo.C64:
		return triSolveKernel[complex64](p, threads, widenComplex[complex64], narrowComplex[complex64], nil), true
	case hlo.C128:
		return triSolveKernel[complex128](p, threads, widenComplex[complex128], narrowComplex[complex128], nil), true
	}
	return nil, false
}

// triSolveKernel solves storage type S in compute type W (exactly, in
// the evaluator's order), or with blocked when the plan says so.
func triSolveKernel[S any, W kernels.Scalar](p triSolvePlan, threads int, widen func([]W, []S), narrow func([]S, []W),
	blocked func(p triSolvePlan, m, a, b, x []S, threads int)) kernelFunc {
	nn, nb := p.n*p.n, p.rows*p.cols
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		a, b, o, err := solveOperands[S](out, ops, p.batch*nn, p.batch*nb)
		if err != nil || nb == 0 {
			return err
		}
		forBatches(p.batch, threads, nn*max(p.rows, p.cols), func(lo, hi, inner int) {
			if p.blocked && blocked != nil {
				m := make([]S, nn)
				for i := lo; i < hi; i++ {
					copy(o[i*nb:(i+1)*nb], b[i*nb:(i+1)*nb])
					blocked(p, m, a[i*nn:(i+1)*nn], b[i*nb:(i+1)*nb], o[i*nb:(i+1)*nb], inner)
				}
				return
			}
			aw, m, x := make([]W, nn), make([]W, nn), make([]W, nb)
			for i := lo; i < hi; i++ {
				widen(aw, a[i*nn:(i+1)*nn])
				buildM(m, aw, p)
				widen(x, b[i*nb:(i+1)*nb])
				triSolve(p, m, x, inner)
				if real, ok := any(x).([]float64); ok {
					redoNonFiniteAny(p, any(m).([]float64), b[i*nb:(i+1)*nb], real)
				}
				narrow(o[i*nb:(i+1)*nb], x)
			}
		})
		return nil
	}
}

// solveOperands checks the operands' and result's types and sizes.
func solveOperands[S any](out *hlo.Literal, ops []*hlo.Literal, na, nb int) (a, b, o []S, err error) {
	a, ok1 := ops[0].Data().([]S)
	o, ok3 := out.Data().([]S)
	ok2 := true
	if len(ops) > 1 {
		b, ok2 = ops[1].Data().([]S)
	}
	if !ok1 || !ok2 || !ok3 || len(a) != na || len(o) != nb || len(ops) > 1 && len(b) != nb {
		return nil, nil, nil, fmt.Errorf("%s operands do not match the compiled shapes", out.DType())
	}
	return a, b, o, nil
}

// buildM writes the triangle of M the solve reads from one matrix a,
// with a unit diagonal if asked (a's diagonal is then never read).
func buildM[W kernels.Scalar](m, a []W, p triSolvePlan) {
	n := p.n
	for r := range n {
		lo, hi := triangleCols(p, r)
		for c := lo; c < hi; c++ {
			if p.mTrans {
				m[r*n+c] = a[c*n+r]
			} else {
				m[r*n+c] = a[r*n+c]
			}
		}
		if p.unit {
			m[r*n+r] = 1
		}
		if p.mConj {
			conjInPlace(m[r*n+lo : r*n+hi])
		}
	}
}

// triSolve solves one system in place in x, the columns (left side) or
// rows of x split across threads: each is its own substitution, so the
// result does not depend on the split.
func triSolve[W kernels.Scalar](p triSolvePlan, m, x []W, threads int) {
	n := p.n
	if p.left {
		kernels.ParallelRange(threads, p.cols, n*n*p.cols, func(c0, c1 int) {
			kernels.TrsmLeft(m, n, n, p.mLower, x[c0:], p.cols, c1-c0)
		})
		return
	}
	kernels.ParallelRange(threads, p.rows, n*n*p.rows, func(r0, r1 int) {
		kernels.TrsmRows(m, n, n, p.mLower, x[r0*p.cols:], p.cols, r1-r0)
	})
}

// triSolveBlocked solves one real system in its own type, x holding b.
func triSolveBlocked[S float32 | float64](p triSolvePlan, m, a, b, x []S, threads int) {
	buildM(m, a, p)
	if p.left {
		kernels.TrsmLeftBlocked(m, p.n, p.n, p.mLower, x, p.cols, p.cols, threads)
	} else {
		kernels.TrsmRowsBlocked(m, p.n, p.n, p.mLower, x, p.cols, p.rows, threads)
	}
	redoNonFinite(p, m, b, x)
}

// redoNonFinite re-solves in complex128, exactly as the evaluator does,
// every right-hand side whose real solution x has a non-finite value (b
// is the original right-hand side). The evaluator solves real systems
// in complex128 with zero imaginary parts, where an infinity gains a NaN
// imaginary part (∞·0) that C99 complex division then carries on in its
// own way; with finite values throughout the imaginary parts stay zero
// and the real parts are the real arithmetic's, so only those
// right-hand sides differ.
func redoNonFinite[S, W float32 | float64](p triSolvePlan, m []W, b []S, x []W) {
	n := p.n
	nrhs, stride, step := p.cols, p.cols, 1 // y_r[i] is x[r*step+i*stride]
	if !p.left {
		nrhs, stride, step = p.rows, 1, p.cols
	}
	var mc, y []complex128
	for r := range nrhs {
		finite := true
		for i := range n {
			v := float64(x[r*step+i*stride])
			finite = finite && !math.IsInf(v, 0) && v == v
		}
		if finite {
			continue
		}
		if mc == nil {
			mc, y = make([]complex128, n*n), make([]complex128, n)
			for i, v := range m {
				mc[i] = complex(float64(v), 0)
			}
			if p.mConj { // the evaluator conjugates real entries too: -0 imaginary parts
				for i := range n {
					lo, hi := triangleCols(p, i)
					conjInPlace(mc[i*n+lo : i*n+hi])
				}
			}
		}
		for i := range n {
			y[i] = complex(float64(b[r*step+i*stride]), 0)
		}
		kernels.TrsmRows(mc, n, n, p.mLower, y, n, 1)
		for i := range n {
			x[r*step+i*stride] = W(real(y[i]))
		}
	}
}

// redoNonFiniteAny is redoNonFinite for a b of f32 or f64 storage.
func redoNonFiniteAny(p triSolvePlan, m []float64, b any, x []float64) {
	switch b := b.(type) {
	case []float32:
		redoNonFinite(p, m, b, x)
	case []float64:
		redoNonFinite(p, m, b, x)
	}
}

// triangleCols is the columns [lo, hi) of M's row r that its triangle
// holds, the diagonal included.
func triangleCols(p triSolvePlan, r int) (lo, hi int) {
	if p.mLower {
		return 0, r + 1
	}
	return r, p.n
}

// forBatches runs f over the batch: split across up to threads workers
// when there are several matrices and enough work, each worker's own
// loops then single-threaded (inner = 1); otherwise on the caller, the
// loops inside a matrix free to use all threads.
func forBatches(batch, threads, flopsPer int, f func(lo, hi, inner int)) {
	w := min(threads, batch)
	if w <= 1 || batch*flopsPer < 1<<20 {
		f(0, batch, threads)
		return
	}
	kernels.Parallel(w, func(t int) { f(t*batch/w, (t+1)*batch/w, 1) })
}

// conjInPlace conjugates complex x; real x is left as it is.
func conjInPlace[W kernels.Scalar](x []W) {
	if c, ok := any(x).([]complex128); ok {
		for i, v := range c {
			c[i] = complex(real(v), -imag(v))
		}
	}
}

func widenReal[S float32 | float64](dst []float64, src []S) {
	for i, v := range src {
		dst[i] = float64(v)
	}
}

func narrowReal[S float32 | float64](dst []S, src []float64) {
	for i, v := range src {
		dst[i] = S(v)
	}
}

func widenComplex[S complex64 | complex128](dst []complex128, src []S) {
	for i, v := range src {
		dst[i] = complex128(v)
	}
}

func narrowComplex[S complex64 | complex128](dst []S, src []complex128) {
	for i, v := range src {
		dst[i] = S(v)
	}
}

// lowerCholesky compiles a cholesky of an f32, f64, c64 or c128 operand.
func lowerCholesky(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	s := in.Operands[0].Shape
	if s.Rank() < 2 || !solveType(s.DType) || in.Shape.DType != s.DType || s.Dims[s.Rank()-1] != s.Dims[s.Rank()-2] {
		return nil, false
	}
	n := int(s.Dims[s.Rank()-1])
	p := cholPlan{n: n, batch: int(hlo.ArrayShape(s.DType, s.Dims[:s.Rank()-2]...).NumElements()), lower: in.Bool("lower"),
		blocked: !s.DType.IsComplex() && n >= blockedMinN}
	switch s.DType {
	case hlo.F32:
		return cholKernel(p, threads, widenReal[float32], narrowReal[float32], cholBlocked[float32]), true
	case hlo.F64:
		return cholKernel(p, threads, widenReal[float64], narrowReal[float64], cholBlocked[float64]), true
	case hlo.C64:
		return cholKernel[complex64](p, threads, widenComplex[complex64], narrowComplex[complex64], nil), true
	case hlo.C128:
		return cholKernel[complex128](p, threads, widenComplex[complex128], narrowComplex[complex128], nil), true
	}
	return nil, false
}

// cholPlan is a cholesky: batch n×n matrices, the triangle to read and
// write (the other is written as zeros, as the evaluator does).
type cholPlan struct {
	batch, n       int
	lower, blocked bool
}

func cholKernel[S any, W kernels.Scalar](p cholPlan, threads int, widen func([]W, []S), narrow func([]S, []W),
	blocked func(p cholPlan, a, o []S, threads int)) kernelFunc {
	nn := p.n * p.n
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		a, _, o, err := solveOperands[S](out, ops[:1], p.batch*nn, p.batch*nn)
		if err != nil || nn == 0 {
			return err
		}
		forBatches(p.batch, threads, nn*p.n/3, func(lo, hi, inner int) {
			if p.blocked && blocked != nil {
				for i := lo; i < hi; i++ {
					blocked(p, a[i*nn:(i+1)*nn], o[i*nn:(i+1)*nn], inner)
				}
				return
			}
			aw, l := make([]W, nn), make([]W, nn)
			for i := lo; i < hi; i++ {
				widen(aw, a[i*nn:(i+1)*nn])
				cholOne(p, aw, l)
				narrow(o[i*nn:(i+1)*nn], aw)
			}
		})
		return nil
	}
}

// cholOne factors the matrix in a (overwritten with the result) using
// l as scratch. l's lower triangle is the Hermitian matrix as the
// evaluator reads it: the selected triangle, conjugate-transposed when
// it is the upper one (the diagonal as it is).
func cholOne[W kernels.Scalar](p cholPlan, a, l []W) {
	n := p.n
	for i := range n {
		row := l[i*n : i*n+i+1]
		if p.lower {
			copy(row, a[i*n:i*n+i+1])
		} else {
			for j := range i {
				row[j] = a[j*n+i]
			}
			conjInPlace(row[:i])
			row[i] = a[i*n+i]
		}
	}
	if !kernels.Cholesky(l, n, n) {
		fillNaN(a)
		return
	}
	clear(a)
	for i := range n {
		if p.lower {
			copy(a[i*n:i*n+i+1], l[i*n:i*n+i+1])
			continue
		}
		for j := 0; j <= i; j++ {
			a[j*n+i] = l[i*n+j]
		}
	}
	if !p.lower {
		for j := range n {
			conjInPlace(a[j*n+j : j*n+n]) // Lᴴ, the zeros below left +0
		}
	}
}

// cholBlocked factors one real matrix in its own type into o.
func cholBlocked[S float32 | float64](p cholPlan, a, o []S, threads int) {
	n := p.n
	for i := range n {
		for j := 0; j <= i; j++ {
			if p.lower {
				o[i*n+j] = a[i*n+j]
			} else {
				o[i*n+j] = a[j*n+i]
			}
		}
	}
	if !kernels.CholeskyBlocked(o, n, n, threads) {
		for i := range o {
			o[i] = S(math.NaN())
		}
		return
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if p.lower {
				o[i*n+j] = 0
			} else {
				o[i*n+j], o[j*n+i] = o[j*n+i], 0
			}
		}
	}
}

func fillNaN[W kernels.Scalar](x []W) {
	var nan W
	switch p := any(&nan).(type) {
	case *float32:
		*p = float32(math.NaN())
	case *float64:
		*p = math.NaN()
	case *complex128:
		*p = complex(math.NaN(), math.NaN())
	}
	for i := range x {
		x[i] = nan
	}
}
