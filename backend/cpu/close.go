package cpu

// Close drops the executable's idle frames (their arenas) and pooled
// outputs, so that their memory can be collected while the executable is
// still referenced. The caller must ensure no execution runs during
// Close, and should run none after: an execution would allocate them
// anew. (The bodies of control flow compiled as executables of their
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
