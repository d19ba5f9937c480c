package cpu

import (
	"sync/atomic"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// An epilogue bound to a call's operands (tile.Epilogue.Bind, BindOps)
// is closures and operand lists made on every call: two to six
// allocations a product or convolution, most of a small model's
// allocations a run. What they capture is where the operands lie, never
// their values, and an executable's operands and output lie in the same
// places from run to run (its arena's, and a caller's argument buffers),
// so each kernel keeps its last binding and takes it again for a call
// whose storage is the same. Concurrent executions use other arenas:
// they miss and bind afresh, as every call did before.

// boundEpilogue is one binding and the storage it was made for.
type boundEpilogue struct {
	refs    []storageRef // each argument's, then the output's
	ldc     int
	withOps bool // whether ops were asked for (and made, if e has them)
	epi     kernels.Epilogue
	ops     *kernels.TileOps
}

// storageRef is where a literal's storage lies and how long it is.
type storageRef struct {
	p unsafe.Pointer
	n int
}

// refOf is the storage of b.
func refOf(b []byte) storageRef { return storageRef{unsafe.Pointer(unsafe.SliceData(b)), len(b)} }

// epilogueBinding keeps one kernel's last binding.
type epilogueBinding struct{ last atomic.Pointer[boundEpilogue] }

// bind returns e bound to args and the output c (rows of ldc), and with
// ops its TileOps form (nil where it has none): the last binding where
// the storage is the same, else a new one, kept.
func (eb *epilogueBinding) bind(e *tile.Epilogue, args []*hlo.Literal, c []float32, ldc int, ops bool) (kernels.Epilogue, *kernels.TileOps, error) {
	if b := eb.last.Load(); b != nil && b.fits(args, c, ldc, ops) {
		return b.epi, b.ops, nil
	}
	epi, err := e.Bind(args, c, ldc)
	if err != nil {
		return nil, nil, err
	}
	var tops *kernels.TileOps
	if ops {
		tops = e.BindOps(args, c, ldc)
	}
	b := &boundEpilogue{refs: make([]storageRef, 0, len(args)+1), ldc: ldc, withOps: ops, epi: epi, ops: tops}
	for _, a := range args {
		b.refs = append(b.refs, refOf(a.RawBytes()))
	}
	b.refs = append(b.refs, refOfF32(c))
	eb.last.Store(b)
	return epi, tops, nil
}

// refOfF32 is the storage of c.
func refOfF32(c []float32) storageRef {
	return storageRef{unsafe.Pointer(unsafe.SliceData(c)), 4 * len(c)}
}

// fits reports whether b was made for this storage and this ops flag.
func (b *boundEpilogue) fits(args []*hlo.Literal, c []float32, ldc int, ops bool) bool {
	if b.ldc != ldc || b.withOps != ops || len(b.refs) != len(args)+1 {
		return false
	}
	for i, a := range args {
		if refOf(a.RawBytes()) != b.refs[i] {
			return false
		}
	}
	return b.refs[len(args)] == refOfF32(c)
}
