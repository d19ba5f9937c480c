package eval

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalCholesky, hlo.OpCholesky)
	register(evalTriangularSolve, hlo.OpTriangularSolve)
}

// evalCholesky factors each trailing n×n matrix (batched over the leading
// dimensions) in complex128, reading only the triangle lower selects. The
// other triangle is implementation-defined in the spec; it is written as 0.
func evalCholesky(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	a := loadComplex128(ops[0])
	s := ops[0].Shape()
	if s.Rank() < 2 {
		return nil, fmt.Errorf("cholesky: operand rank %d < 2", s.Rank())
	}
	n := int(s.Dims[s.Rank()-1])
	lower := in.Bool("lower")
	out := make([]complex128, len(a))
	for base := 0; base+n*n <= len(a) && n > 0; base += n * n {
		// at reads A[i][j] from the selected triangle (A is Hermitian).
		at := func(i, j int) complex128 {
			if lower == (i >= j) || i == j {
				return a[base+i*n+j]
			}
			return cmplx.Conj(a[base+j*n+i])
		}
		l := make([]complex128, n*n)
		failed := false
		for j := 0; j < n; j++ {
			d := at(j, j)
			for k := 0; k < j; k++ {
				d -= l[j*n+k] * cmplx.Conj(l[j*n+k])
			}
			// A non-positive pivot: the matrix is not positive definite.
			failed = failed || !(real(d) > 0)
			ljj := complex(math.Sqrt(real(d)), 0)
			l[j*n+j] = ljj
			for i := j + 1; i < n; i++ {
				v := at(i, j)
				for k := 0; k < j; k++ {
					v -= l[i*n+k] * cmplx.Conj(l[j*n+k])
				}
				l[i*n+j] = v / ljj
			}
		}
		if failed {
			// XLA returns a matrix of NaNs when the decomposition fails
			// (XLA's cholesky_test NonPSDInput expects every element NaN).
			for i := range n * n {
				out[base+i] = complex(math.NaN(), math.NaN())
			}
			continue
		}
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				if lower {
					out[base+i*n+j] = l[i*n+j]
				} else {
					out[base+j*n+i] = cmplx.Conj(l[i*n+j])
				}
			}
		}
	}
	return storeComplex128(in.Shape, out), nil
}

// evalTriangularSolve solves op(a)·x = b (left_side) or x·op(a) = b per
// batch in complex128. Only a's lower or upper triangle is read, and with
// unit_diagonal its diagonal is taken as 1 (the spec: "the diagonal
// elements of a are assumed to be 1 and not accessed").
func evalTriangularSolve(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	as, bs := ops[0].Shape(), ops[1].Shape()
	if as.Rank() < 2 || bs.Rank() < 2 {
		return nil, fmt.Errorf("triangular-solve: operands must have rank >= 2")
	}
	a, b := loadComplex128(ops[0]), loadComplex128(ops[1])
	n := int(as.Dims[as.Rank()-1])
	rows, cols := int(bs.Dims[bs.Rank()-2]), int(bs.Dims[bs.Rank()-1])
	left, lower, unit := in.Bool("left_side"), in.Bool("lower"), in.Bool("unit_diagonal")
	tr, _ := in.EnumAttr("transpose_a")
	out := make([]complex128, len(b))
	if n == 0 || rows*cols == 0 {
		return storeComplex128(in.Shape, out), nil
	}
	for batch := 0; batch*n*n < len(a); batch++ {
		// m is op(tri(a)), transposed once more for right-side solves so
		// every solve is m·y = c over the columns of c.
		m := make([]complex128, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j && lower != (i > j) {
					continue
				}
				v := a[batch*n*n+i*n+j]
				if i == j && unit {
					v = 1
				}
				r, c := i, j
				switch tr {
				case "TRANSPOSE":
					r, c = j, i
				case "ADJOINT":
					r, c, v = j, i, cmplx.Conj(v)
				}
				if !left {
					r, c = c, r
				}
				m[r*n+c] = v
			}
		}
		bb := b[batch*rows*cols : (batch+1)*rows*cols]
		ob := out[batch*rows*cols : (batch+1)*rows*cols]
		// In the left case y is a column of x (stride cols); in the right
		// case y is a row of x (stride 1), since x·M = b ⇔ Mᵀ·xᵀ = bᵀ.
		nrhs, stride, step := cols, cols, 1
		if !left {
			nrhs, stride, step = rows, 1, cols
		}
		mLower := lower != (tr == "TRANSPOSE" || tr == "ADJOINT") != !left
		for r := 0; r < nrhs; r++ {
			solveTriangular(m, n, mLower, bb[r*step:], ob[r*step:], stride)
		}
	}
	return storeComplex128(in.Shape, out), nil
}

// solveTriangular solves m·y = c for a lower or upper triangular m with y
// and c strided by stride.
func solveTriangular(m []complex128, n int, isLower bool, c, y []complex128, stride int) {
	for k := 0; k < n; k++ {
		i := k
		if !isLower {
			i = n - 1 - k
		}
		v := c[i*stride]
		for j := 0; j < n; j++ {
			if j != i && (isLower && j < i || !isLower && j > i) {
				v -= m[i*n+j] * y[j*stride]
			}
		}
		y[i*stride] = v / m[i*n+i]
	}
}
