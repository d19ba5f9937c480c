package eval

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalFft, hlo.OpFft)
}

// evalFft transforms the last len(fft_length) dimensions with a direct
// DFT in complex128 (slow, exact to rounding). RFFT keeps the first
// L/2+1 outputs of the last dimension; IRFFT rebuilds that dimension's
// Hermitian spectrum of length L and returns its real part.
func evalFft(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	typ, _ := in.EnumAttr("fft_type")
	lens, _ := in.Ints("fft_length")
	s := ops[0].Shape()
	r := len(lens)
	if r == 0 || r > s.Rank() {
		return nil, fmt.Errorf("fft: fft_length %v does not fit operand rank %d", lens, s.Rank())
	}
	x := loadComplex128(ops[0])
	dims := append([]int64(nil), s.Dims...)
	first := s.Rank() - r
	last := s.Rank() - 1
	switch typ {
	case "FFT", "IFFT":
		inverse := typ == "IFFT"
		for d := first; d <= last; d++ {
			x = dftAlong(x, dims, d, dims[d], inverse)
		}
	case "RFFT":
		for d := first; d <= last; d++ {
			x = dftAlong(x, dims, d, dims[d], false)
		}
		x, _ = truncateLast(x, dims, lens[r-1]/2+1)
	case "IRFFT":
		for d := first; d < last; d++ {
			x = dftAlong(x, dims, d, dims[d], true)
		}
		x, dims = hermitianLast(x, dims, lens[r-1])
		x = dftAlong(x, dims, last, dims[last], true)
	default:
		return nil, fmt.Errorf("fft: fft_type %q: %w", typ, ErrUnimplemented)
	}
	return storeComplex128(in.Shape, x), nil
}

// dftAlong applies a length-n DFT along dimension d (inverse: conjugate
// twiddles and 1/n scaling).
func dftAlong(x []complex128, dims []int64, d int, n int64, inverse bool) []complex128 {
	st := hlo.RowMajorStrides(dims)
	sign := -1.0
	if inverse {
		sign = 1
	}
	tw := make([]complex128, n)
	for k := range tw {
		tw[k] = cmplx.Rect(1, sign*2*math.Pi*float64(k)/float64(n))
	}
	out := make([]complex128, len(x))
	others := complementDims(len(dims), []int64{int64(d)})
	for _, base := range offsetTable(others, dims, st) {
		for k := int64(0); k < n; k++ {
			var acc complex128
			for j := int64(0); j < n; j++ {
				acc += x[base+int(j)*st[d]] * tw[(j*k)%n]
			}
			if inverse {
				acc /= complex(float64(n), 0)
			}
			out[base+int(k)*st[d]] = acc
		}
	}
	return out
}

// truncateLast keeps the first m elements of the last dimension.
func truncateLast(x []complex128, dims []int64, m int64) ([]complex128, []int64) {
	n := dims[len(dims)-1]
	rows := len(x) / max(int(n), 1)
	out := make([]complex128, 0, rows*int(m))
	for r := 0; r < rows; r++ {
		out = append(out, x[r*int(n):r*int(n)+int(m)]...)
	}
	nd := append([]int64(nil), dims...)
	nd[len(nd)-1] = m
	return out, nd
}

// hermitianLast expands each last-dimension row X[0..L/2] to length L with
// X[L-k] = conj(X[k]).
func hermitianLast(x []complex128, dims []int64, l int64) ([]complex128, []int64) {
	n := int(dims[len(dims)-1])
	rows := len(x) / max(n, 1)
	out := make([]complex128, rows*int(l))
	for r := 0; r < rows; r++ {
		for k := 0; k < int(l); k++ {
			switch {
			case k < n && int64(k) <= l/2:
				out[r*int(l)+k] = x[r*n+k]
			case int(l)-k < n:
				out[r*int(l)+k] = cmplx.Conj(x[r*n+int(l)-k])
			}
		}
	}
	nd := append([]int64(nil), dims...)
	nd[len(nd)-1] = l
	return out, nd
}
