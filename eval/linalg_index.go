package eval

import "github.com/axle-ml/axle/hlo"

// offsetTable lists the linear offsets of every index over the chosen
// dimensions (row-major over that list, first listed varies slowest), so
// inner loops add precomputed offsets instead of recomputing indices.
func offsetTable(which []int64, dims []int64, strides []int) []int {
	out := []int{0}
	for _, d := range which {
		n := int(dims[d])
		next := make([]int, 0, len(out)*n)
		for _, o := range out {
			for k := 0; k < n; k++ {
				next = append(next, o+k*strides[d])
			}
		}
		out = next
	}
	return out
}

// complementDims lists the dimensions below rank that are in none of the
// given sets, in increasing order.
func complementDims(rank int, sets ...[]int64) []int64 {
	used := make([]bool, rank)
	for _, s := range sets {
		for _, d := range s {
			used[d] = true
		}
	}
	var out []int64
	for d := 0; d < rank; d++ {
		if !used[d] {
			out = append(out, int64(d))
		}
	}
	return out
}

// numKind is the arithmetic domain dense math runs in for an element type.
type numKind int

const (
	kindFloat numKind = iota
	kindInt
	kindComplex
)

func kindOf(t hlo.DType) numKind {
	switch {
	case t.IsComplex():
		return kindComplex
	case t.IsFloat():
		return kindFloat
	}
	return kindInt
}

// loadFloat64 reads every element once into a float64 slice.
func loadFloat64(l *hlo.Literal) []float64 {
	switch d := l.Data().(type) {
	case []float64:
		return d
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	}
	if f, ok := narrowFormat(l.DType()); ok {
		return decodeNarrow(l, f)
	}
	out := make([]float64, l.Len())
	for i := range out {
		out[i] = l.GetFloat64(i)
	}
	return out
}

// loadInt64 reads every element once; unsigned 64-bit values keep their
// bits, which is all wraparound arithmetic needs.
func loadInt64(l *hlo.Literal) []int64 {
	if d, ok := l.Data().([]int32); ok {
		out := make([]int64, len(d))
		for i, v := range d {
			out[i] = int64(v)
		}
		return out
	}
	out := make([]int64, l.Len())
	unsigned := l.DType().IsUnsigned() || l.DType().IsPred()
	for i := range out {
		if unsigned {
			out[i] = int64(l.Bits(i))
		} else {
			out[i] = l.GetInt64(i)
		}
	}
	return out
}

func loadComplex128(l *hlo.Literal) []complex128 {
	out := make([]complex128, l.Len())
	for i := range out {
		out[i] = l.GetComplex128(i)
	}
	return out
}

// storeFloat64 writes v into a new literal of shape s, rounding once.
func storeFloat64(s hlo.Shape, v []float64) *hlo.Literal {
	out := hlo.NewLiteral(s)
	switch d := out.Data().(type) {
	case []float64:
		copy(d, v)
	case []float32:
		for i, x := range v {
			d[i] = float32(x)
		}
	default:
		for i, x := range v {
			out.SetFloat64(i, x)
		}
	}
	return out
}

func storeInt64(s hlo.Shape, v []int64) *hlo.Literal {
	out := hlo.NewLiteral(s)
	if s.DType.IsPred() {
		for i, x := range v {
			out.SetBool(i, x != 0)
		}
		return out
	}
	for i, x := range v {
		out.SetBits(i, uint64(x))
	}
	return out
}

func storeComplex128(s hlo.Shape, v []complex128) *hlo.Literal {
	out := hlo.NewLiteral(s)
	for i, x := range v {
		out.SetComplex128(i, x)
	}
	return out
}

// scalarAt copies element i of l into a new scalar literal.
func scalarAt(l *hlo.Literal, i int) *hlo.Literal {
	s := hlo.NewLiteral(hlo.ScalarShape(l.DType()))
	setFrom(s, 0, l, i)
	return s
}

// setFrom copies element j of src into element i of dst, converting
// between floating-point precisions (a reducer may compute in another
// precision than the array it folds into; see asParam).
func setFrom(dst *hlo.Literal, i int, src *hlo.Literal, j int) {
	if dst.DType() != src.DType() && isFloating(dst.DType()) && isFloating(src.DType()) {
		if src.DType().IsComplex() || dst.DType().IsComplex() {
			dst.SetComplex128(i, src.GetComplex128(j))
		} else {
			dst.SetFloat64(i, src.GetFloat64(j))
		}
		return
	}
	if src.DType().IsComplex() {
		dst.SetComplex128(i, src.GetComplex128(j))
		return
	}
	dst.SetBits(i, src.Bits(j))
}
