package axle

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/axle-ml/axle/hlo"
)

// The memory limit. A client accounts the bytes its executions and new
// buffers need before anything is allocated, and refuses what would take
// it past ClientOptions.MemoryLimit: a server running users' models fails
// one request with ErrMemoryLimit rather than have the kernel kill the
// process.
//
// What is accounted: an execution reserves its need (on the cpu backend
// the arena and every output from buffer assignment; on the evaluator an
// estimate from the module, see evaluatorNeed) from its start to its end;
// a new buffer (BufferFromSlice, BufferFromLiteral) is checked before it
// is made; buffers (new ones and outputs) then count until Release,
// donation or, for one dropped without either, the garbage collector
// (runtime.AddCleanup). Storage the pools keep for reuse (released
// outputs, released slice buffers, idle arenas) is not counted, nor are
// executions and buffers under minAccounted (64 KiB) once made: a serving
// loop's scalar calls would pay atomic additions on a shared counter and
// a cleanup for bytes that cannot matter.

// ErrMemoryLimit is what errors.Is finds in an execution or a buffer
// creation refused by the client's memory limit.
var ErrMemoryLimit = errors.New("axle: memory limit exceeded")

// MemoryLimitError is a refusal by the memory limit, with the sizes.
type MemoryLimitError struct {
	What  string // "executing e", "a buffer of f32[100]"
	Need  int64  // bytes the operation needs
	InUse int64  // bytes accounted to the client when it asked
	Limit int64  // the client's limit
}

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("axle: memory limit exceeded: %s needs %s with %s in use, over the client's limit of %s",
		e.What, formatBytes(e.Need), formatBytes(e.InUse), formatBytes(e.Limit))
}

// Is makes errors.Is(err, ErrMemoryLimit) hold.
func (e *MemoryLimitError) Is(target error) bool { return target == ErrMemoryLimit }

// formatBytes writes n exactly, with a rounded binary size beside it.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%d bytes (%.1f GiB)", n, float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// minAccounted is the smallest execution need the client accounts.
const minAccounted = 64 << 10

// memAccount is a client's accounting. limit <= 0: no limit, and nothing
// is counted (an execution pays nothing for it).
type memAccount struct {
	limit int64
	used  atomic.Int64
}

// defaultMemoryLimit is 3/4 of the machine's physical memory, leaving
// the rest to the Go heap's overheads, the compiler and the system; no
// limit where the size is unknown.
func defaultMemoryLimit() int64 {
	if n := physicalMemory(); n > 0 {
		return n / 4 * 3
	}
	return -1
}

// reserve accounts n bytes for what (named lazily: the common case
// formats nothing), failing if they would pass the limit.
func (a *memAccount) reserve(n int64, what func() string) error {
	if a.limit <= 0 {
		return nil
	}
	if used := a.used.Add(n); used > a.limit || used < 0 {
		a.used.Add(-n)
		return &MemoryLimitError{What: what(), Need: n, InUse: used - n, Limit: a.limit}
	}
	return nil
}

// release gives back a reservation.
func (a *memAccount) release(n int64) {
	if a.limit > 0 {
		a.used.Add(-n)
	}
}

// MemoryLimit is the client's memory limit in bytes (negative: none).
func (c *Client) MemoryLimit() int64 {
	if c == nil || c.mem.limit <= 0 {
		return -1
	}
	return c.mem.limit
}

// MemoryInUse is the bytes accounted to the client now: its running
// executions' reservations and its counted buffers.
func (c *Client) MemoryInUse() int64 {
	if c == nil {
		return 0
	}
	return c.mem.used.Load()
}

// executionNeed is what one execution of x reserves: on compiled code
// its arena and outputs (buffer assignment's sizes, donation ignored: an
// output may take a donated argument's storage, or not); on the evaluator
// evaluatorNeed.
func executionNeed(x *Executable) int64 {
	if x.cpu != nil && x.cpu.Engine == "compiled" {
		s := x.cpu.Memory()
		return s.Peak + s.Outputs
	}
	return evaluatorNeed(x.module)
}

// evaluatorNeed estimates an evaluation's memory as the sum of the
// result sizes of the entry computation's instructions and, once each,
// of the computations its control flow calls: the evaluator keeps every
// value of a computation until the computation returns, so this bounds
// its peak from above (a while body's values are counted once, though
// each iteration makes new ones; the last iteration's are garbage by
// then). Parameters, constants and values that pass storage on (tuples,
// get-tuple-element, bitcasts) count nothing.
func evaluatorNeed(m *hlo.Module) int64 {
	seen := map[*hlo.Computation]bool{}
	var sum func(c *hlo.Computation) int64
	sum = func(c *hlo.Computation) int64 {
		if c == nil || seen[c] {
			return 0
		}
		seen[c] = true
		var n int64
		for _, in := range c.Instructions {
			switch in.Opcode {
			case hlo.OpParameter, hlo.OpConstant, hlo.OpTuple, hlo.OpGetTupleElement, hlo.OpBitcast:
				continue
			case hlo.OpWhile, hlo.OpCall, hlo.OpConditional, hlo.OpAsyncStart:
				for _, cc := range in.CalledComputations() {
					n = addSat(n, sum(cc))
				}
			}
			n = addSat(n, shapeBytes(in.Shape))
		}
		return n
	}
	return sum(m.Entry)
}

// shapeBytes is the storage of a shape's arrays (saturating: a shape's
// element count may overflow int64 bytes).
func shapeBytes(s hlo.Shape) int64 {
	if s.IsTuple() {
		var n int64
		for _, e := range s.Tuple {
			n = addSat(n, shapeBytes(e))
		}
		return n
	}
	if !s.IsArray() || !s.DType.IsArrayType() {
		return 0
	}
	elems, size := s.NumElements(), int64(max(1, (s.DType.Bits()+7)/8))
	if elems <= 0 {
		return 0
	}
	if elems > (1<<62)/size {
		return 1 << 62
	}
	return elems * size
}

func addSat(a, b int64) int64 {
	if a > (1<<62)-b {
		return 1 << 62
	}
	return a + b
}

// reserveBuffer reserves a new buffer of n elements of t.
func (c *Client) reserveBuffer(t hlo.DType, n int64) (int64, error) {
	size := n * int64(max(1, (t.Bits()+7)/8))
	return size, c.mem.reserve(size, func() string { return fmt.Sprintf("a buffer of %d %s elements", n, t) })
}

// reserveLiteral reserves a copy of l.
func (c *Client) reserveLiteral(l *hlo.Literal) (int64, error) {
	s := l.Shape()
	size := shapeBytes(s)
	return size, c.mem.reserve(size, func() string { return "a buffer of " + s.HumanString() })
}

// bufAcct is a buffer's share of its client's account, given back once:
// by Release, by donation, or by the garbage collector when the buffer
// is dropped without either.
type bufAcct struct {
	mem *memAccount
	n   atomic.Int64
}

// end gives the share back (nil: nothing counted).
func (a *bufAcct) end() {
	if a != nil {
		a.mem.release(a.n.Swap(0))
	}
}

// endDonated stops counting the donated arguments of an execution that
// took them.
func endDonated(args []*Buffer, donated []bool) {
	for i, d := range donated {
		if d {
			args[i].acct.end()
		}
	}
}

// keep makes the n bytes reserved for b count until its life ends;
// a buffer under minAccounted gives them back at once.
func (a *memAccount) keep(b *Buffer, n int64) {
	if a.limit <= 0 {
		return
	}
	if n < minAccounted {
		a.release(n)
		return
	}
	b.acct = &bufAcct{mem: a}
	b.acct.n.Store(n)
	runtime.AddCleanup(b, (*bufAcct).end, b.acct)
}

// output counts an execution's output buffer from now on (its execution
// reserved it while running). Outputs under minAccounted are not counted.
func (a *memAccount) output(b *Buffer) {
	if a.limit <= 0 {
		return
	}
	if n := int64(len(b.lit.RawBytes())); n >= minAccounted { // tuples: nil
		a.used.Add(n)
		a.keep(b, n)
	}
}
