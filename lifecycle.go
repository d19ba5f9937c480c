package axle

import "github.com/axle-ml/axle/hlo"

// Executable lifecycle: Close sets the closed flag and empties the pools
// (free); calls already past their check of the flag finish, and each
// that puts something back into a pool (an execution its frame, a
// Release its output) checks the flag again after the put and empties
// the pools itself if it is set. Either that check sees the flag, or
// Close set it later and its free came after the put: once the calls
// running at Close have finished, the pools hold nothing. No count of
// running calls is kept: its two atomic read-modify-writes per call, and
// two more per Release, were a tenth of a scalar call
// (BenchmarkExecuteScalarAdd); the checks are plain loads. (The cpu
// backend's pools are safe to use and empty concurrently.)

// usable checks that x was made by Compile and that neither it nor its
// client is closed.
func (x *Executable) usable() error {
	if x == nil || x.prog == nil {
		return errNoExecutable
	}
	if x.client.closed.Load() {
		x.Close() // its client closed it even if the cache had let it go
		return closedError("client")
	}
	if x.isClosed() {
		return closedError("executable " + x.entry)
	}
	return nil
}

func (x *Executable) isClosed() bool { return x.closed.Load() }

// enter checks that a call may start (usable, inlined for the common
// case); the call ends with leave.
func (x *Executable) enter() error {
	if x == nil || x.prog == nil || x.client.closed.Load() || x.isClosed() {
		return x.usable()
	}
	return nil
}

// leave ends a call that may have put a frame back into the pools: if
// the executable was closed meanwhile, Close's free may have come before
// the put.
func (x *Executable) leave() {
	if x.isClosed() {
		x.free()
	}
}

// Close ends the executable's life: it leaves the client's compile cache
// (compiling the same module again gives a new executable), later
// executions fail with ErrClosed, and its memory — the cpu backend's
// arenas and pooled outputs — is released once the executions running
// now have finished. Their results, and earlier ones, stay readable;
// releasing them no longer pools their storage. Closing twice does
// nothing.
func (x *Executable) Close() error {
	if x == nil || x.prog == nil {
		return errNoExecutable
	}
	if x.closed.Swap(true) {
		return nil
	}
	x.client.cache.remove(x)
	x.free()
	return nil
}

// free empties the pools. It is not inlined, so that leave, on every
// call's path, is.
//
//go:noinline
func (x *Executable) free() {
	if x.cpu != nil {
		x.cpu.Close()
	}
}

// recycle gives an output's storage back to the program's pool, unless
// the executable is closed (then checking again after the put, as leave
// does).
func (x *Executable) recycle(l *hlo.Literal) {
	if x.isClosed() {
		return
	}
	if x.cpu != nil {
		x.cpu.Recycle(l) // a direct call: the interface's costs a scalar call a few ns
	} else {
		x.prog.Recycle(l)
	}
	x.leave()
}

// footprint is what the executable counts against the compile cache's
// memory bound: its arena and its constants.
func (x *Executable) footprint() int64 {
	n := x.Memory().Peak
	for _, c := range x.module.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpConstant && in.Literal != nil {
				n += literalBytes(in.Literal)
			}
		}
	}
	return n
}

func literalBytes(l *hlo.Literal) int64 {
	n := int64(len(l.RawBytes()))
	for _, e := range l.Elements() {
		n += literalBytes(e)
	}
	return n
}
