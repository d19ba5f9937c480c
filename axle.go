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
// afterwards and says so in its errors. Every method is safe for
// concurrent use; bad input gives an error, never a panic.
package axle
