package hlo

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// Literal is a constant value of some shape: an array with typed storage,
// a tuple of literals, or a token.
//
// Array elements are stored in row-major order of the logical dimensions
// (the last dimension varies fastest) whatever the shape's layout, in a
// slice whose Go type depends on the element type:
//
//	pred                    []bool
//	s2, s4, s8              []int8 (one element per int8, sign-extended)
//	s16, s32, s64           []int16, []int32, []int64
//	u2, u4, u8              []uint8 (one element per uint8)
//	u16, u32, u64           []uint16, []uint32, []uint64
//	f16, bf16               []uint16 (raw bit patterns)
//	f8 types, f4e2m1fn      []uint8 (raw bit patterns, low bits)
//	f32, f64                []float32, []float64
//	c64, c128               []complex64, []complex128
//
// A dynamic dimension holds its bound's worth of storage; the dynamic size
// (initially the bound) says how much of it is live.
//
// An elided literal is a constant printed as `{...}` in a dump: its shape is
// known but its values are not (a runner invents them).
type Literal struct {
	shape    Shape
	elided   bool
	data     any        // the typed slice, for arrays
	elems    []*Literal // for tuples
	dynSizes []int64    // for shapes with dynamic dimensions
}

// Native is the set of Go element types a literal can be built from or read
// into directly; each maps to one element type (uint16 to u16, not f16).
type Native interface {
	bool | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 |
		float32 | float64 | complex64 | complex128
}

// NativeDType is the element type that stores T naturally (float32: f32,
// uint16: u16).
func NativeDType[T Native]() DType { return nativeDType[T]() }

// nativeDType is the element type that stores T naturally.
func nativeDType[T Native]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Pred
	case int8:
		return S8
	case int16:
		return S16
	case int32:
		return S32
	case int64:
		return S64
	case uint8:
		return U8
	case uint16:
		return U16
	case uint32:
		return U32
	case uint64:
		return U64
	case float32:
		return F32
	case float64:
		return F64
	case complex64:
		return C64
	}
	return C128
}

// floatFormat is the minifloat format of the narrow float types.
func floatFormat(t DType) (minifloat.Format, bool) {
	switch t {
	case F16:
		return minifloat.F16, true
	case BF16:
		return minifloat.BF16, true
	case F8E4M3FN:
		return minifloat.F8E4M3FN, true
	case F8E5M2:
		return minifloat.F8E5M2, true
	case F8E4M3FNUZ:
		return minifloat.F8E4M3FNUZ, true
	case F8E5M2FNUZ:
		return minifloat.F8E5M2FNUZ, true
	case F8E4M3B11FNUZ:
		return minifloat.F8E4M3B11FNUZ, true
	case F8E3M4:
		return minifloat.F8E3M4, true
	case F8E4M3:
		return minifloat.F8E4M3, true
	case F8E8M0FNU:
		return minifloat.F8E8M0FNU, true
	case F4E2M1FN:
		return minifloat.F4E2M1FN, true
	case F6E2M3FN:
		return minifloat.F6E2M3FN, true
	case F6E3M2FN:
		return minifloat.F6E3M2FN, true
	}
	return minifloat.Format{}, false
}

// makeStorage allocates n zero elements of t's storage type.
func makeStorage(t DType, n int) any {
	switch t {
	case Pred:
		return make([]bool, n)
	case S2, S4, S8:
		return make([]int8, n)
	case S16:
		return make([]int16, n)
	case S32:
		return make([]int32, n)
	case S64:
		return make([]int64, n)
	case U2, U4, U8:
		return make([]uint8, n)
	case U16, F16, BF16:
		return make([]uint16, n)
	case U32:
		return make([]uint32, n)
	case U64:
		return make([]uint64, n)
	case F32:
		return make([]float32, n)
	case F64:
		return make([]float64, n)
	case C64:
		return make([]complex64, n)
	case C128:
		return make([]complex128, n)
	}
	if t.IsF8() || t == F4E2M1FN || t == F6E2M3FN || t == F6E3M2FN {
		return make([]uint8, n)
	}
	return nil
}

// storageLen is the number of elements an array shape stores (bounds for
// dynamic dimensions; 0 if a dimension is unbounded or the count overflows).
func storageLen(s Shape) int { return int(max(elementCount(s), 0)) }

// NewLiteral returns a literal of shape s with every element zero (false,
// +0). Tuples get one zero literal per element; tokens hold nothing.
func NewLiteral(s Shape) *Literal {
	l := &Literal{shape: s.Clone()}
	switch {
	case s.IsTuple():
		l.elems = make([]*Literal, len(s.Tuple))
		for i, e := range s.Tuple {
			l.elems[i] = NewLiteral(e)
		}
	case s.IsArray():
		l.data = makeStorage(s.DType, storageLen(s))
		if s.IsDynamic() {
			l.dynSizes = slices.Clone(s.Dims)
		}
	}
	return l
}

// NewElidedLiteral returns a literal of shape s whose values are unknown,
// as a constant printed `{...}`.
func NewElidedLiteral(s Shape) *Literal { return &Literal{shape: s.Clone(), elided: true} }

// IsElided reports whether l's values are unknown (l itself was written
// `{...}`; elements of a tuple may be elided on their own).
func (l *Literal) IsElided() bool { return l.elided }

// Shape is l's shape. Callers must not modify it.
func (l *Literal) Shape() Shape { return l.shape }

// HasShape reports l.Shape().Equal(*s), and HasCompatibleShape
// l.Shape().Compatible(*s), without copying either shape: for the checks
// an execution makes on every argument and output.
func (l *Literal) HasShape(s *Shape) bool { return l.shape.equal(s) }

// HasCompatibleShape: see HasShape.
func (l *Literal) HasCompatibleShape(s *Shape) bool { return l.shape.compatible(s) }

// DType is l's element type (Tuple for tuples).
func (l *Literal) DType() DType { return l.shape.DType }

// Len is the number of stored elements of an array literal (0 for tuples,
// tokens and elided literals).
func (l *Literal) Len() int { return max(sliceLen(l.data), 0) }

// Data is the typed backing slice of an array literal (see Literal for the
// Go type per element type), shared, not copied; nil for tuples, tokens and
// elided literals.
func (l *Literal) Data() any { return l.data }

// Elements are the elements of a tuple literal, shared, not copied.
func (l *Literal) Elements() []*Literal { return l.elems }

// NewLiteralFromData returns an array literal of shape s that uses data as
// its storage (not copied). data must have the storage type of s's element
// type and one element per element of s.
func NewLiteralFromData(s Shape, data any) (*Literal, error) {
	if !s.IsArray() {
		return nil, fmt.Errorf("literal data for non-array shape %s", s)
	}
	if s.IsUnbounded() {
		return nil, fmt.Errorf("literal shape %s has an unbounded dimension", s)
	}
	want := makeStorage(s.DType, 0)
	if reflect.TypeOf(want) != reflect.TypeOf(data) {
		return nil, fmt.Errorf("literal data for %s must be %T, not %T", s, want, data)
	}
	if n := sliceLen(data); n != storageLen(s) {
		return nil, fmt.Errorf("literal data for %s has %d elements, want %d", s, n, storageLen(s))
	}
	l := &Literal{shape: s.Clone(), data: data}
	if s.IsDynamic() {
		l.dynSizes = slices.Clone(s.Dims)
	}
	return l, nil
}

func sliceLen(data any) int {
	switch d := data.(type) {
	case []bool:
		return len(d)
	case []int8:
		return len(d)
	case []int16:
		return len(d)
	case []int32:
		return len(d)
	case []int64:
		return len(d)
	case []uint8:
		return len(d)
	case []uint16:
		return len(d)
	case []uint32:
		return len(d)
	case []uint64:
		return len(d)
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []complex64:
		return len(d)
	case []complex128:
		return len(d)
	}
	return -1
}

// LiteralFromSlice returns an array literal holding a copy of data with the
// given dimensions (a vector of len(data) when dims is empty). The element
// type is the natural one for T (uint16 gives u16; use NewLiteralFromData
// for f16/bf16 bit patterns).
func LiteralFromSlice[T Native](data []T, dims ...int64) (*Literal, error) {
	if dims == nil {
		dims = []int64{int64(len(data))}
	}
	for _, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in %v", dims)
		}
	}
	return NewLiteralFromData(ArrayShape(nativeDType[T](), dims...), slices.Clone(data))
}

// ScalarLiteral returns a rank-0 literal holding v.
func ScalarLiteral[T Native](v T) *Literal {
	return &Literal{shape: ScalarShape(nativeDType[T]()), data: []T{v}}
}

// LiteralToSlice returns a copy of l's elements. T must be l's storage type.
func LiteralToSlice[T Native](l *Literal) ([]T, error) {
	d, ok := l.data.([]T)
	if !ok {
		var z T
		if l.elided {
			return nil, fmt.Errorf("literal of shape %s is elided", l.shape)
		}
		return nil, fmt.Errorf("literal of shape %s does not hold %T elements", l.shape, z)
	}
	return slices.Clone(d), nil
}

// MakeTupleLiteral returns the tuple of elems. The tuple takes the elements
// as they are (they are not copied).
func MakeTupleLiteral(elems ...*Literal) *Literal {
	shapes := make([]Shape, len(elems))
	for i, e := range elems {
		shapes[i] = e.shape
	}
	return &Literal{shape: TupleShape(shapes...), elems: slices.Clone(elems)}
}

// DynamicSize is the current size of dimension dim (its bound unless set).
func (l *Literal) DynamicSize(dim int) int64 {
	if l.dynSizes != nil {
		return l.dynSizes[dim]
	}
	return l.shape.Dims[dim]
}

// SetDynamicSize makes dimension dim dynamic, bounded by its size in the
// shape, with size live elements (as XLA's Literal::SetDynamicSize).
func (l *Literal) SetDynamicSize(dim int, size int64) error {
	if l.data == nil || dim < 0 || dim >= l.shape.Rank() {
		return fmt.Errorf("literal of shape %s has no dimension %d", l.shape, dim)
	}
	if size < 0 || size > l.shape.Dims[dim] {
		return fmt.Errorf("dynamic size %d of dimension %d is outside [0, %d]", size, dim, l.shape.Dims[dim])
	}
	if l.dynSizes == nil {
		l.dynSizes = slices.Clone(l.shape.Dims)
	}
	l.shape.SetDynamic(dim, true)
	l.dynSizes[dim] = size
	return nil
}

// LinearIndex is the storage position of the element at index (one entry
// per dimension, within the bounds).
func (l *Literal) LinearIndex(index []int64) int {
	n := int64(0)
	for i, d := range l.shape.Dims {
		n = n*d + index[i]
	}
	return int(n)
}

// Clone returns a deep copy of l.
func (l *Literal) Clone() *Literal {
	c := &Literal{shape: l.shape.Clone(), elided: l.elided, dynSizes: slices.Clone(l.dynSizes)}
	if l.elems != nil {
		c.elems = make([]*Literal, len(l.elems))
		for i, e := range l.elems {
			c.elems[i] = e.Clone()
		}
	}
	if l.data != nil {
		c.data = makeStorage(l.shape.DType, l.Len())
		copyStorage(c.data, l.data)
	}
	return c
}

func copyStorage(dst, src any) {
	switch d := dst.(type) {
	case []bool:
		copy(d, src.([]bool))
	case []int8:
		copy(d, src.([]int8))
	case []int16:
		copy(d, src.([]int16))
	case []int32:
		copy(d, src.([]int32))
	case []int64:
		copy(d, src.([]int64))
	case []uint8:
		copy(d, src.([]uint8))
	case []uint16:
		copy(d, src.([]uint16))
	case []uint32:
		copy(d, src.([]uint32))
	case []uint64:
		copy(d, src.([]uint64))
	case []float32:
		copy(d, src.([]float32))
	case []float64:
		copy(d, src.([]float64))
	case []complex64:
		copy(d, src.([]complex64))
	case []complex128:
		copy(d, src.([]complex128))
	}
}

// Equal reports whether l and o have compatible shapes (layouts are not
// compared) and the same values, bit for bit: +0 and -0 differ, NaNs are
// equal when their bits (sign and payload) are. For dynamic shapes only the
// live elements count. Elided literals are equal when their shapes are.
func (l *Literal) Equal(o *Literal) bool {
	if l == o {
		return true
	}
	if l == nil || o == nil || !l.shape.Compatible(o.shape) || l.elided != o.elided ||
		len(l.elems) != len(o.elems) || (l.data == nil) != (o.data == nil) {
		return false
	}
	for i, e := range l.elems {
		if !e.Equal(o.elems[i]) {
			return false
		}
	}
	if l.data == nil {
		return true
	}
	for d := range l.shape.Dims {
		if l.DynamicSize(d) != o.DynamicSize(d) {
			return false
		}
	}
	equal := true
	l.forEachLive(func(i int) bool {
		equal = l.bits(i) == o.bits(i)
		return equal
	})
	return equal
}

// forEachLive calls f with the storage position of every live element in
// row-major order, stopping early when f returns false.
func (l *Literal) forEachLive(f func(i int) bool) {
	rank := l.shape.Rank()
	idx := make([]int64, rank)
	for d := range rank {
		if l.DynamicSize(d) == 0 {
			return
		}
	}
	for {
		if !f(l.LinearIndex(idx)) {
			return
		}
		d := rank - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < l.DynamicSize(d) {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// bits is element i's bit pattern; complex numbers need both parts.
func (l *Literal) bits(i int) [2]uint64 {
	switch d := l.data.(type) {
	case []complex64:
		return [2]uint64{uint64(math.Float32bits(real(d[i]))), uint64(math.Float32bits(imag(d[i])))}
	case []complex128:
		return [2]uint64{math.Float64bits(real(d[i])), math.Float64bits(imag(d[i]))}
	}
	return [2]uint64{l.Bits(i)}
}

// RawBytes is an array literal's storage as bytes, shared, not copied
// (nil for tuples, tokens and elided literals): for hashing, and for
// backends that keep values in untyped buffers.
func (l *Literal) RawBytes() []byte {
	switch d := l.data.(type) {
	case []bool:
		return rawBytes(d)
	case []int8:
		return rawBytes(d)
	case []int16:
		return rawBytes(d)
	case []int32:
		return rawBytes(d)
	case []int64:
		return rawBytes(d)
	case []uint8:
		return d
	case []uint16:
		return rawBytes(d)
	case []uint32:
		return rawBytes(d)
	case []uint64:
		return rawBytes(d)
	case []float32:
		return rawBytes(d)
	case []float64:
		return rawBytes(d)
	case []complex64:
		return rawBytes(d)
	case []complex128:
		return rawBytes(d)
	}
	return nil
}

func rawBytes[T any](s []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}
