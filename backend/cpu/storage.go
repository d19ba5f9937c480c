package cpu

import (
	"fmt"
	"unsafe"

	"github.com/axle-ml/axle/hlo"
)

// Assigned buffers are raw bytes (an arena, a pooled output, a donated
// argument); a value is a literal whose typed storage slice views them.

// viewBytes returns a literal of array shape s over mem (len(mem) is at
// least s's storage size).
func viewBytes(s hlo.Shape, mem []byte) *hlo.Literal {
	n := int(s.NumElements())
	p := unsafe.Pointer(unsafe.SliceData(mem))
	var data any
	switch s.DType {
	case hlo.Pred:
		data = unsafe.Slice((*bool)(p), n)
	case hlo.S2, hlo.S4, hlo.S8:
		data = unsafe.Slice((*int8)(p), n)
	case hlo.S16:
		data = unsafe.Slice((*int16)(p), n)
	case hlo.S32:
		data = unsafe.Slice((*int32)(p), n)
	case hlo.S64:
		data = unsafe.Slice((*int64)(p), n)
	case hlo.U16, hlo.F16, hlo.BF16:
		data = unsafe.Slice((*uint16)(p), n)
	case hlo.U32:
		data = unsafe.Slice((*uint32)(p), n)
	case hlo.U64:
		data = unsafe.Slice((*uint64)(p), n)
	case hlo.F32:
		data = unsafe.Slice((*float32)(p), n)
	case hlo.F64:
		data = unsafe.Slice((*float64)(p), n)
	case hlo.C64:
		data = unsafe.Slice((*complex64)(p), n)
	case hlo.C128:
		data = unsafe.Slice((*complex128)(p), n)
	default: // u2, u4, u8, f8 and f4 types
		data = unsafe.Slice((*uint8)(p), n)
	}
	l, err := hlo.NewLiteralFromData(s, data)
	if err != nil {
		panic(fmt.Sprintf("cpu: view of %s: %v", s, err)) // a bug in buffer assignment
	}
	return l
}

// bytesOf returns an array literal's storage as bytes (shared).
func bytesOf(l *hlo.Literal) []byte { return l.RawBytes() }

// alignedBytes allocates n bytes starting on a 64-byte boundary (cache
// lines, and the widest vector loads).
func alignedBytes(n int64) []byte {
	b := make([]byte, n+64)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & 63)
	b = b[off : off+int(n) : off+int(n)]
	populate(b)
	return b
}

// sameStorage reports whether two literals' storage starts at the same
// address (an in-place kernel's output and operand).
func sameStorage(a, b *hlo.Literal) bool {
	x, y := bytesOf(a), bytesOf(b)
	return len(x) > 0 && len(y) > 0 && unsafe.SliceData(x) == unsafe.SliceData(y)
}
