package tile

import (
	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/hlo"
)

// Integer edges of a loop fusion: its float result may be converted to
// an integer type as it is stored (quantizing: x/scale rounded, offset,
// clamped and converted to u8 is one pass over x), and it may read integer
// operands that it converts to floats as it loads them (dequantizing an
// s32 accumulator: converted, scaled and offset in one pass). Values stay
// floats inside; the conversions at the edges are the evaluator's.

// IntType reports whether programs read and store values of integer type
// t at their edges.
func IntType(t hlo.DType) bool {
	switch t {
	case hlo.S8, hlo.U8, hlo.S16, hlo.U16, hlo.S32, hlo.U32:
		return true
	}
	return false
}

// IntResult reports whether in converts a program's float value to an
// integer type the program can store: a loop fusion's root may.
func IntResult(in *hlo.Instruction) bool {
	return in.Opcode == hlo.OpConvert && len(in.Operands) == 1 && IntType(in.Shape.DType) && Type(in.Operands[0].Shape.DType)
}

// intValues are an integer operand's values, converted to f32 as the
// evaluator converts them (to nearest, ties to even: Go's conversion).
type intValues interface {
	tile(lo, hi int, buf []float32) []float32
	at(i int) float32
}

type intSlice[T int8 | uint8 | int16 | uint16 | int32 | uint32] []T

func (s intSlice[T]) tile(lo, hi int, buf []float32) []float32 {
	buf = buf[:hi-lo]
	for i, v := range s[lo:hi] {
		buf[i] = float32(v)
	}
	return buf
}

func (s intSlice[T]) at(i int) float32 { return float32(s[i]) }

// jitIntType is the generated code's array type for an integer result
// of type t: the 8-bit ones (the others are converted by storeInts).
func jitIntType(t hlo.DType) (jit.Type, bool) {
	switch t {
	case hlo.U8:
		return jit.U8, true
	case hlo.S8:
		return jit.S8, true
	}
	return 0, false
}

// storeInts converts src into the integer slice dst from element at on:
// toward zero, saturating at the type's range, NaN to 0 (the evaluator's
// float-to-integer conversion).
func storeInts(dst any, at int, src []float32) {
	switch d := dst.(type) {
	case []int8:
		saturate(d[at:at+len(src)], src, -1<<7, 1<<7-1)
	case []uint8:
		saturate(d[at:at+len(src)], src, 0, 1<<8-1)
	case []int16:
		saturate(d[at:at+len(src)], src, -1<<15, 1<<15-1)
	case []uint16:
		saturate(d[at:at+len(src)], src, 0, 1<<16-1)
	case []int32:
		saturate(d[at:at+len(src)], src, -1<<31, 1<<31-1)
	case []uint32:
		saturate(d[at:at+len(src)], src, 0, 1<<32-1)
	}
}

func saturate[T int8 | uint8 | int16 | uint16 | int32 | uint32](dst []T, src []float32, lo, hi float64) {
	for i, v := range src {
		switch x := float64(v); {
		case x > lo && x < hi: // the common case first
			dst[i] = T(x)
		case x >= hi:
			dst[i] = T(hi)
		case x <= lo:
			dst[i] = T(lo)
		default: // NaN
			dst[i] = 0
		}
	}
}
