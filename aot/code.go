package aot

import (
	"errors"

	"github.com/axle-ml/axle/backend/cpu/jit"
)

// loadCode adds the plan's machine code to the JIT's code book: the
// tile programs built at load then run it where this CPU can, and run
// without generated code (the same bits) where it cannot. A book made by
// another version of the code generator is left out the same way: the
// plan still runs, on tile programs.
func loadCode(book []byte) error {
	if len(book) == 0 {
		return nil
	}
	if err := jit.LoadBook(book); err != nil && !errors.Is(err, jit.ErrBookStale) {
		return err
	}
	return nil
}
