package cpu

// Close drops the executable's idle frames (their arenas) and pooled
// outputs, so that their memory can be collected while the executable is
// still referenced. It may run while executions do (the pools are safe
// for concurrent use), but those put their frames back after it, and an
// execution after it allocates them anew: the caller calls Close again
// once they have finished (the runtime's Executable.Close does). (The bodies of control flow compiled as executables of their
// own keep their pools until the executable is collected.)
func (x *Executable) Close() {
	x.frames.one.Store(nil)
	x.frames.mu.Lock()
	x.frames.free = nil
	x.frames.mu.Unlock()
	for i := range x.outs.one {
		x.outs.one[i].Store(nil)
	}
	x.outs.mu.Lock()
	x.outs.free = nil
	x.outs.mu.Unlock()
}

// Interpreted reports whether the cost model chose to run the whole
// module on the evaluator; its results may then share storage with the
// module's constants or the arguments, as the evaluator's values do.
func (x *Executable) Interpreted() bool { return x.interp }
