package hlo

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// Element access by storage position, converting through the element type
// as XLA's convert does (static_cast of the C++ types):
//
//   - float to integer truncates toward zero and saturates at the type's
//     range; NaN becomes 0;
//   - integer to narrower integer wraps (s2/s4 keep the low bits, sign
//     extended);
//   - to pred: non-zero (NaN included) is true;
//   - integers to f16, bf16, f8 and f4 go through float32, and so do f64
//     values to f16 and bf16 (Eigen's constructors round via float); f64 to
//     f8/f4 rounds once (ml_dtypes);
//   - complex to real takes the real part; real to complex has zero
//     imaginary part.
//
// The position i is an index into the storage (see Literal and
// LinearIndex); like a slice index it panics when out of range, and the
// accessors panic on tuple, token or elided literals, which have no
// elements.

// intRange is the value range of a signed integer type.
func intRange(t DType) (lo, hi int64) {
	b := t.Bits()
	return -1 << (b - 1), 1<<(b-1) - 1
}

// uintMax is the largest value of an unsigned integer type.
func uintMax(t DType) uint64 { return math.MaxUint64 >> (64 - t.Bits()) }

// wrapSigned keeps the low bits of v as a value of signed type t.
func wrapSigned(t DType, v int64) int64 {
	s := 64 - t.Bits()
	return v << s >> s
}

func floatToInt(v float64, lo, hi int64) int64 {
	switch {
	case v != v:
		return 0
	case v >= float64(hi):
		return hi
	case v <= float64(lo):
		return lo
	}
	return int64(v)
}

func floatToUint(v float64, hi uint64) uint64 {
	switch {
	case v != v || v <= 0:
		return 0
	case v >= float64(hi):
		return hi
	}
	return uint64(v)
}

// Bits is element i's bit pattern, zero-extended from the element width
// (for complex types, the real part's).
func (l *Literal) Bits(i int) uint64 {
	mask := uint64(math.MaxUint64)
	if b := l.shape.DType.Bits(); b < 64 {
		mask = 1<<b - 1
	}
	switch d := l.data.(type) {
	case []bool:
		return boolBits(d[i])
	case []int8:
		return uint64(d[i]) & mask
	case []int16:
		return uint64(d[i]) & mask
	case []int32:
		return uint64(d[i]) & mask
	case []int64:
		return uint64(d[i])
	case []uint8:
		return uint64(d[i])
	case []uint16:
		return uint64(d[i])
	case []uint32:
		return uint64(d[i])
	case []uint64:
		return d[i]
	case []float32:
		return uint64(math.Float32bits(d[i]))
	case []float64:
		return math.Float64bits(d[i])
	case []complex64:
		return uint64(math.Float32bits(real(d[i])))
	case []complex128:
		return math.Float64bits(real(d[i]))
	}
	panic(fmt.Sprintf("hlo: literal of shape %s has no elements", l.shape))
}

// SetBits sets element i from a bit pattern (the low bits of b, as many as
// the element width; for complex types, the real part with zero imaginary).
func (l *Literal) SetBits(i int, b uint64) {
	t := l.shape.DType
	switch d := l.data.(type) {
	case []bool:
		d[i] = b&1 != 0
	case []int8:
		d[i] = int8(wrapSigned(t, int64(b)))
	case []int16:
		d[i] = int16(b)
	case []int32:
		d[i] = int32(b)
	case []int64:
		d[i] = int64(b)
	case []uint8:
		d[i] = uint8(b & (1<<t.Bits() - 1)) // u2, u4 and f4 use the low bits
	case []uint16:
		d[i] = uint16(b)
	case []uint32:
		d[i] = uint32(b)
	case []uint64:
		d[i] = b
	case []float32:
		d[i] = math.Float32frombits(uint32(b))
	case []float64:
		d[i] = math.Float64frombits(b)
	case []complex64:
		d[i] = complex(math.Float32frombits(uint32(b)), 0)
	case []complex128:
		d[i] = complex(math.Float64frombits(b), 0)
	default:
		panic(fmt.Sprintf("hlo: literal of shape %s has no elements", l.shape))
	}
}

// GetFloat64 is element i as a float64 (exact for every float type).
func (l *Literal) GetFloat64(i int) float64 {
	t := l.shape.DType
	if f, ok := floatFormat(t); ok {
		return f.Values()[l.Bits(i)]
	}
	switch d := l.data.(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	case []complex64:
		return float64(real(d[i]))
	case []complex128:
		return real(d[i])
	}
	if t.IsUnsigned() {
		return float64(l.GetUint64(i))
	}
	return float64(l.GetInt64(i))
}

// GetInt64 is element i as an int64 (u64 values above MaxInt64 wrap).
func (l *Literal) GetInt64(i int) int64 {
	t := l.shape.DType
	switch {
	case t.IsPred() || t.IsUnsigned():
		return int64(l.Bits(i))
	case t.IsSigned():
		return wrapSigned(t, int64(l.Bits(i)))
	}
	return floatToInt(l.GetFloat64(i), math.MinInt64, math.MaxInt64)
}

// GetUint64 is element i as a uint64 (negative integers wrap).
func (l *Literal) GetUint64(i int) uint64 {
	t := l.shape.DType
	if t.IsPred() || t.IsInteger() {
		return uint64(l.GetInt64(i))
	}
	return floatToUint(l.GetFloat64(i), math.MaxUint64)
}

// GetComplex128 is element i as a complex128.
func (l *Literal) GetComplex128(i int) complex128 {
	switch d := l.data.(type) {
	case []complex64:
		return complex128(d[i])
	case []complex128:
		return d[i]
	}
	return complex(l.GetFloat64(i), 0)
}

// GetBool reports whether element i is non-zero.
func (l *Literal) GetBool(i int) bool {
	switch d := l.data.(type) {
	case []bool:
		return d[i]
	case []complex64, []complex128:
		return l.GetComplex128(i) != 0
	}
	if l.shape.DType.IsFloat() {
		return l.GetFloat64(i) != 0 // NaN too
	}
	return l.Bits(i) != 0
}

// SetFloat64 sets element i to v converted to the element type.
func (l *Literal) SetFloat64(i int, v float64) {
	t := l.shape.DType
	switch d := l.data.(type) {
	case []bool:
		d[i] = v != 0 // NaN too
		return
	case []float32:
		d[i] = float32(v)
		return
	case []float64:
		d[i] = v
		return
	case []complex64:
		d[i] = complex(float32(v), 0)
		return
	case []complex128:
		d[i] = complex(v, 0)
		return
	}
	switch f, ok := floatFormat(t); {
	case t == F16 || t == BF16:
		l.SetBits(i, uint64(f.FromFloat32(float32(v))))
	case ok:
		l.SetBits(i, uint64(f.FromFloat64(v)))
	case t.IsSigned():
		lo, hi := intRange(t)
		l.SetBits(i, uint64(floatToInt(v, lo, hi)))
	case t.IsUnsigned():
		l.SetBits(i, floatToUint(v, uintMax(t)))
	default:
		panic(fmt.Sprintf("hlo: literal of shape %s has no elements", l.shape))
	}
}

// SetInt64 sets element i to v converted to the element type.
func (l *Literal) SetInt64(i int, v int64) {
	t := l.shape.DType
	switch {
	case t.IsPred():
		l.SetBits(i, boolBits(v != 0))
	case t.IsInteger():
		l.SetBits(i, uint64(v))
	case t == F64 || t == C128:
		l.SetFloat64(i, float64(v))
	default:
		// f32 and c64 round once from the integer; narrower types go via
		// float32 too.
		l.SetFloat64(i, float64(float32(v)))
	}
}

// SetUint64 sets element i to v converted to the element type.
func (l *Literal) SetUint64(i int, v uint64) {
	t := l.shape.DType
	switch {
	case t.IsPred():
		l.SetBits(i, boolBits(v != 0))
	case t.IsInteger():
		l.SetBits(i, v)
	case t == F64 || t == C128:
		l.SetFloat64(i, float64(v))
	default:
		l.SetFloat64(i, float64(float32(v)))
	}
}

// SetComplex128 sets element i to v (its real part for real types).
func (l *Literal) SetComplex128(i int, v complex128) {
	switch d := l.data.(type) {
	case []complex64:
		d[i] = complex64(v)
	case []complex128:
		d[i] = v
	default:
		l.SetFloat64(i, real(v))
	}
}

// SetBool sets element i to 1 or 0 in the element type.
func (l *Literal) SetBool(i int, v bool) { l.SetInt64(i, int64(boolBits(v))) }

func boolBits(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// Convert returns l's values converted to element type t, as XLA's convert
// does (see the rules above). Complex to real is not supported, as in XLA.
func (l *Literal) Convert(t DType) (*Literal, error) {
	from := l.shape.DType
	switch {
	case !l.shape.IsArray() || !t.IsArrayType():
		return nil, fmt.Errorf("converting %s to %s is not supported", l.shape, t)
	case l.elided:
		return nil, fmt.Errorf("cannot convert an elided literal of shape %s", l.shape)
	case from == t:
		return l.Clone(), nil
	case from.IsComplex() && !t.IsComplex():
		return nil, fmt.Errorf("converting from type %s to type %s is not implemented", upperName(from), upperName(t))
	}
	out := NewLiteral(l.shape.WithDType(t))
	copy(out.dynSizes, l.dynSizes)
	if from == F16 && t == F32 {
		// By the bit-arithmetic decoding, the same values (NaN payloads
		// included) as through float64: constant folding widens an fp16
		// model's weights this way, 1.6M values for one layer.
		minifloat.F16.DecodeFloat32(out.Data().([]float32), l.Data().([]uint16))
		return out, nil
	}
	for i := range l.Len() {
		switch {
		case from.IsComplex():
			out.SetComplex128(i, l.GetComplex128(i))
		case from.IsPred() || from.IsSigned():
			out.SetInt64(i, l.GetInt64(i))
		case from.IsUnsigned():
			out.SetUint64(i, l.GetUint64(i))
		default:
			out.SetFloat64(i, l.GetFloat64(i))
		}
	}
	return out, nil
}

// upperName is XLA's PrimitiveType_Name spelling of t ("F32", "BF16").
func upperName(t DType) string {
	b := []byte(t.String())
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
