// Package axle is Axle's runtime API, in the spirit of XLA's PJRT: a
// Client owns devices and a compile cache, Buffers hold arrays (or tuples)
// on a device, and an Executable runs a compiled module on Buffers.
//
//	c, _ := axle.NewClient(axle.ClientOptions{})
//	x, _ := c.CompileText(hloText, axle.CompileOptions{})
//	a, _ := axle.BufferFromSlice(c, []float32{1, 2}, 2)
//	outs, _ := x.Execute(a, a)
//	v, _ := axle.ToSlice[float32](outs[0])
//	outs[0].Release()
//
// Two backends sit behind the same API: "cpu", the compiled CPU backend
// (backend/cpu), and "interp", the reference evaluator (eval), which is
// slow but runs every opcode exactly as XLA specifies it.
//
// Buffers are immutable once made. Release gives an output's storage back
// to its executable's pool so that later executions reuse it instead of
// allocating; donating an argument (ExecuteWith) lets the execution itself
// reuse the argument's storage. Either way the Buffer is unusable
// afterwards and says so in its errors. Results never share storage with
// the module's constants or with arguments that were not donated.
//
// Executable.Close gives an executable's memory back (the cpu backend's
// arenas and pools) and takes it out of the compile cache; Client.Close
// closes the executables the cache holds and ends the client. Using
// either afterwards fails with ErrClosed. The compile cache itself keeps
// executables within ClientOptions.CacheSize and CacheBytes.
//
// Every method is safe for concurrent use, and, on nil and zero values,
// returns an error (or a zero value from a getter) rather than panic.
package axle
