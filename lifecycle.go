package axle

import "github.com/axle-ml/axle/hlo"

// Executable lifecycle: state counts the calls using the executable
// (executions and recycled outputs) and carries the closed flag, so that
// Close while executions run lets them finish and the last one to leave
// frees the pools.

const execClosed = int64(1) << 62

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

func (x *Executable) isClosed() bool { return x.state.Load()&execClosed != 0 }

// enter is usable and counts a call in, unless the executable is closed:
// one check of the state serves both (a scalar call's every load and
// call shows).
func (x *Executable) enter() error {
	if x == nil || x.prog == nil || x.client.closed.Load() {
		return x.usable()
	}
	for {
		s := x.state.Load()
		if s&execClosed != 0 {
			return closedError("executable " + x.entry)
		}
		if x.state.CompareAndSwap(s, s+1) {
			return nil
		}
	}
}

// leave counts a call out; the last call out of a closed executable
// frees its pools.
func (x *Executable) leave() {
	if x.state.Add(-1) == execClosed {
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
	for {
		s := x.state.Load()
		if s&execClosed != 0 {
			return nil
		}
		if x.state.CompareAndSwap(s, s|execClosed) {
			x.client.cache.remove(x)
			if s == 0 {
				x.free()
			}
			return nil
		}
	}
}

func (x *Executable) free() {
	if x.cpu != nil {
		x.cpu.Close()
	}
}

// recycle gives an output's storage back to the program's pool, unless
// the executable is closed. It needs no count of its own (two atomic
// read-modify-writes, a tenth of a scalar call): Recycle only fills a
// pool, which free empties, so a put that raced with Close is undone by
// checking again after it: either this check sees the closed flag and
// frees, or Close set it later and its free (or the last execution's)
// comes after the put.
func (x *Executable) recycle(l *hlo.Literal) {
	if x.isClosed() {
		return
	}
	if x.cpu != nil {
		x.cpu.Recycle(l) // a direct call: the interface's costs a scalar call a few ns
	} else {
		x.prog.Recycle(l)
	}
	if x.isClosed() {
		x.freeIfIdle()
	}
}

// freeIfIdle frees the pools of a closed executable that no execution
// uses (one that does frees them as it leaves).
func (x *Executable) freeIfIdle() {
	if x.state.Load() == execClosed {
		x.free()
	}
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
