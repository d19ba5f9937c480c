package aot

import "github.com/axle-ml/axle/backend/cpu/jit"

// loadCode adds the plan's machine code to the JIT's code book: the
// tile programs built at load then run it where this CPU can, and run
// without generated code (the same bits) where it cannot.
func loadCode(book []byte) error {
	if len(book) == 0 {
		return nil
	}
	return jit.LoadBook(book)
}
