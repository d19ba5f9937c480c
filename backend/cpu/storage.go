package cpu

import (
	"fmt"
	"unsafe"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/pages"
)

// Assigned buffers are raw bytes (an arena, a pooled output, a donated
// argument); a value is a literal whose typed storage slice views them.

// viewBytes returns a literal of array shape s over mem (len(mem) is at
// least s's storage size).
func viewBytes(s hlo.Shape, mem []byte) *hlo.Literal {
	l, err := hlo.ViewBytes(s, mem)
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
	pages.Populate(b)
	return b
}

// sameStorage reports whether two literals' storage starts at the same
// address (an in-place kernel's output and operand).
func sameStorage(a, b *hlo.Literal) bool {
	x, y := bytesOf(a), bytesOf(b)
	return len(x) > 0 && len(y) > 0 && unsafe.SliceData(x) == unsafe.SliceData(y)
}
