package hlo

import (
	"fmt"
	"unsafe"
)

// ViewBytes returns an array literal of shape s whose storage is mem,
// shared, not copied: a backend's arena, a plan's literals. mem must hold
// s's elements (at least its byte size) and start aligned for its element
// type. Writes through either are seen by the other.
func ViewBytes(s Shape, mem []byte) (*Literal, error) {
	if !s.IsArray() {
		return nil, fmt.Errorf("a view of non-array shape %s", s)
	}
	n := storageLen(s)
	_, size := viewOf(s.DType, nil, 0)
	if len(mem) < n*size {
		return nil, fmt.Errorf("a view of %s needs %d bytes, has %d", s, n*size, len(mem))
	}
	if n > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%uintptr(min(size, 8)) != 0 {
		return nil, fmt.Errorf("a view of %s at a misaligned address", s)
	}
	data, _ := viewOf(s.DType, unsafe.Pointer(unsafe.SliceData(mem)), n)
	return NewLiteralFromData(s, data)
}

// viewOf is the storage slice of n elements of t at p, and the size of
// one element.
func viewOf(t DType, p unsafe.Pointer, n int) (any, int) {
	switch t {
	case Pred:
		return unsafe.Slice((*bool)(p), n), 1
	case S2, S4, S8:
		return unsafe.Slice((*int8)(p), n), 1
	case S16:
		return unsafe.Slice((*int16)(p), n), 2
	case S32:
		return unsafe.Slice((*int32)(p), n), 4
	case S64:
		return unsafe.Slice((*int64)(p), n), 8
	case U16, F16, BF16:
		return unsafe.Slice((*uint16)(p), n), 2
	case U32:
		return unsafe.Slice((*uint32)(p), n), 4
	case U64:
		return unsafe.Slice((*uint64)(p), n), 8
	case F32:
		return unsafe.Slice((*float32)(p), n), 4
	case F64:
		return unsafe.Slice((*float64)(p), n), 8
	case C64:
		return unsafe.Slice((*complex64)(p), n), 8
	case C128:
		return unsafe.Slice((*complex128)(p), n), 16
	}
	return unsafe.Slice((*uint8)(p), n), 1 // u2, u4, u8, f8 and f4 types
}
