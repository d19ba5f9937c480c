package axle

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/axle-ml/axle/hlo"
)

// Buffer is an array (or a tuple) on a client's device. Its contents never
// change; Release or donation ends its life.
type Buffer struct {
	client *Client
	lit    *hlo.Literal
	// pool is the executable whose output pool takes the storage back on
	// Release; nil when the storage is the buffer's own.
	pool *Executable
	// host marks storage made by BufferFromSlice, which goes back to the
	// client's pool of host storage on Release.
	host bool
	// state packs the number of executions and reads using the buffer
	// (low bits) with the released, donated and pending flags, so that
	// Release during an execution defers recycling to the last user and
	// donation can demand that nobody else holds the buffer.
	state atomic.Int64
	// acct is the buffer's share of the client's memory account (nil
	// when not counted; memory.go).
	acct *bufAcct
	// dev is the device holding it (nil: the client's first).
	dev *Device
}

const (
	flagReleased = int64(1) << 62
	flagDonated  = int64(1) << 61
	// flagPending marks a buffer an execution means to donate while it
	// acquires its other arguments: the donation may still be called off,
	// so reads and Release wait for the outcome rather than see a
	// donation that does not happen (the wait is a few atomic operations
	// long: the donor holds its kept arguments before it marks any).
	flagPending = int64(1) << 60
	holdMask    = flagPending - 1
)

// Errors of buffers whose life has ended; argument errors wrap them.
var (
	ErrReleased = errors.New("axle: buffer was released")
	ErrDonated  = errors.New("axle: buffer was donated to an execution")
	// ErrInUse: a buffer can be donated only when no other execution or
	// read is using it.
	ErrInUse = errors.New("axle: buffer is in use and cannot be donated")
)

var errNoBuffer = errors.New("axle: nil or zero Buffer (buffers come from BufferFromSlice, BufferFromLiteral or Execute)")

// BufferFromSlice returns a buffer holding a copy of data with the given
// dimensions (a vector of len(data) when there are none). The element
// type is T's natural one (float32: f32, uint16: u16).
func BufferFromSlice[T hlo.Native](c *Client, data []T, dims ...int64) (*Buffer, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	size, err := c.reserveBuffer(hlo.NativeDType[T](), int64(len(data)))
	if err != nil {
		return nil, err
	}
	l, err := fromSlice(&c.host, data, dims)
	if err != nil {
		c.mem.release(size)
		return nil, fmt.Errorf("axle: %w", err)
	}
	b := &Buffer{client: c, lit: l, host: true}
	c.mem.keep(b, size)
	return b, nil
}

// BufferFromScalar returns a rank-0 buffer holding v.
func BufferFromScalar[T hlo.Native](c *Client, v T) (*Buffer, error) {
	return BufferFromSlice(c, []T{v}, []int64{}...)
}

// BufferFromLiteral returns a buffer holding a copy of l, an array or a
// tuple with known values.
func (c *Client) BufferFromLiteral(l *hlo.Literal) (*Buffer, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if err := checkLiteral(l); err != nil {
		return nil, err
	}
	size, err := c.reserveLiteral(l)
	if err != nil {
		return nil, err
	}
	b := &Buffer{client: c, lit: l.Clone()}
	c.mem.keep(b, size)
	return b, nil
}

// checkLiteral rejects what no execution can take: nil and elided values.
func checkLiteral(l *hlo.Literal) error {
	if l == nil {
		return errors.New("axle: nil literal")
	}
	if l.IsElided() {
		return fmt.Errorf("axle: literal of shape %s is elided ({...}): its values are unknown", l.Shape().HumanString())
	}
	for _, e := range l.Elements() {
		if err := checkLiteral(e); err != nil {
			return err
		}
	}
	return nil
}

// Shape is the buffer's shape (still known after Release). Callers must
// not modify it.
func (b *Buffer) Shape() hlo.Shape {
	if b == nil || b.lit == nil {
		return hlo.Shape{}
	}
	return b.lit.Shape()
}

// DType is the buffer's element type (hlo.Tuple for a tuple).
func (b *Buffer) DType() hlo.DType { return b.Shape().DType }

// Device is the device holding the buffer: the one whose execution made
// it, the one BufferOn placed it on, else the client's first.
func (b *Buffer) Device() *Device {
	if b == nil || b.client == nil || len(b.client.devices) == 0 {
		return nil
	}
	if b.dev != nil {
		return b.dev
	}
	return b.client.devices[0]
}

// ToLiteral returns a copy of the buffer's value.
func (b *Buffer) ToLiteral() (*hlo.Literal, error) {
	if err := b.hold(); err != nil {
		return nil, err
	}
	defer b.unhold()
	return b.lit.Clone(), nil
}

// ToSlice returns a copy of an array buffer's elements in row-major
// order. T must be the element type's storage type (float32 for f32,
// uint16 for f16 and bf16 bit patterns).
func ToSlice[T hlo.Native](b *Buffer) ([]T, error) {
	if err := b.hold(); err != nil {
		return nil, err
	}
	defer b.unhold()
	s, err := hlo.LiteralToSlice[T](b.lit)
	if err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	return s, nil
}

// IsReleased reports whether the buffer was released or donated.
func (b *Buffer) IsReleased() bool {
	return b == nil || b.state.Load()&(flagReleased|flagDonated) != 0
}

// Release ends the buffer's life: an executable's output goes back to the
// executable's pool, to hold a later execution's output. A buffer still in
// use by a running execution is recycled when that execution ends.
// Releasing twice, or releasing a donated buffer, does nothing.
func (b *Buffer) Release() {
	if b == nil {
		return
	}
	for {
		s := b.state.Load()
		if s&(flagReleased|flagDonated) != 0 {
			return
		}
		if s&flagPending != 0 {
			runtime.Gosched()
			continue
		}
		if b.state.CompareAndSwap(s, s|flagReleased) {
			b.acct.end()
			if s&holdMask == 0 {
				b.recycle()
			}
			return
		}
	}
}

// hold marks the buffer in use, failing if its life has ended.
func (b *Buffer) hold() error {
	if b == nil || b.lit == nil {
		return errNoBuffer
	}
	for {
		s := b.state.Load()
		if err := stateErr(s); err != nil {
			return err
		}
		if s&flagPending != 0 {
			runtime.Gosched()
			continue
		}
		if b.state.CompareAndSwap(s, s+1) {
			return nil
		}
	}
}

// tryHold is hold's common case, small enough to inline into an
// execution's acquire: it holds a live buffer nobody is donating, and
// reports false, holding nothing, otherwise (hold then decides).
func (b *Buffer) tryHold() bool {
	s := b.state.Load()
	return s&^holdMask == 0 && b.state.CompareAndSwap(s, s+1)
}

// unhold ends one use; the last use of a released buffer recycles it.
func (b *Buffer) unhold() {
	if b.state.Add(-1) == flagReleased {
		b.recycle()
	}
}

// reserve marks the buffer for donation to an execution that may reuse
// its storage; nobody else may be using it, nor donating it. It never
// waits. The execution then commits the donation, or cancels it, which
// leaves the buffer as it was.
func (b *Buffer) reserve() error {
	s := b.state.Load()
	if err := stateErr(s); err != nil {
		return err
	}
	if s != 0 || !b.state.CompareAndSwap(0, flagPending) {
		return ErrInUse
	}
	return nil
}

// commit ends the life of a reserved buffer. While it is pending nobody
// else changes its state, so plain stores suffice.
func (b *Buffer) commit() { b.state.Store(flagDonated) }

// cancel gives a reserved buffer back, unchanged.
func (b *Buffer) cancel() { b.state.Store(0) }

func stateErr(s int64) error {
	switch {
	case s&flagReleased != 0:
		return ErrReleased
	case s&flagDonated != 0:
		return ErrDonated
	}
	return nil
}

// recycle gives the storage to the pool it came from, unless that pool
// was closed.
func (b *Buffer) recycle() {
	switch {
	case b.pool != nil:
		b.pool.recycle(b.lit)
	case b.host && b.client != nil:
		b.client.host.put(b.lit)
	}
}
