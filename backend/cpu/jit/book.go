package jit

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// The code book holds machine code by program key (book_key.go): the
// code of programs generated while recording, and of books loaded. Every
// program's code is looked up here first (load), so a binary that loads
// the book recorded when its model was compiled ahead of time runs
// generated code without linking the generator (InstallGenerator).

// entry is one program's code, as generate returned it.
type entry struct {
	code     []byte
	pool     []uint32
	width    int    // the row folds' partial results a row (Func.FoldWidth)
	features string // the CPU features the code needs (featuresFor)
}

// book is the process-wide book. Many goroutines compile at once: the
// lock guards both maps, made on first use (no init code).
var book struct {
	mu       sync.RWMutex
	entries  map[string]entry
	recorded map[string]bool // keys compiled while recording, for Recorded
}

var (
	recording            atomic.Bool
	bookHits, bookMisses atomic.Int64
)

// Record turns recording on or off and returns the previous setting.
// While it is on, every program compiled (its code generated, or found
// in the book) is kept for Recorded, and Compile makes each program's
// streaming loop at once, which runs otherwise make on first use.
func Record(on bool) (was bool) { return recording.Swap(on) }

// Recording reports whether programs compiled now are recorded: callers
// that compile variants of their programs lazily, at run time, compile
// them at once then, so the book has them.
func Recording() bool { return recording.Load() }

// Recorded takes the book of the programs compiled while recording since
// the last call: their entries stay in the process-wide book.
func Recorded() *Book {
	book.mu.Lock()
	defer book.mu.Unlock()
	b := &Book{abi: codeABI(), entries: make(map[string]entry, len(book.recorded))}
	for k := range book.recorded {
		b.entries[k] = book.entries[k]
	}
	book.recorded = nil
	return b
}

// LoadBook adds the entries of a book (Book.Marshal's bytes) to the
// process-wide book, but for those needing CPU features this machine
// lacks, and those whose programs it holds already. A book that is not
// one (truncated, corrupt) or was made for other generated code (another
// version of this package) is an error, and adds nothing. Where no
// generated code runs, the book is checked and adds nothing.
func LoadBook(data []byte) error {
	b, err := parseBook(data)
	if err != nil || !Available {
		return err
	}
	if abi := codeABI(); b.abi != abi {
		return fmt.Errorf("%w: the book's code is for generated code %#x, this package's is %#x", ErrBookStale, b.abi, abi)
	}
	book.mu.Lock()
	defer book.mu.Unlock()
	if book.entries == nil {
		book.entries = map[string]entry{}
	}
	for k, e := range b.entries {
		if _, ok := book.entries[k]; !ok && runnable(e.features) {
			book.entries[k] = e
		}
	}
	return nil
}

// ClearBook empties the process-wide book, and what Recorded would take.
// Funcs compiled before keep their code.
func ClearBook() {
	book.mu.Lock()
	defer book.mu.Unlock()
	book.entries, book.recorded = nil, nil
}

// BookHits counts the programs whose code came from the book, since the
// process started.
func BookHits() int64 { return bookHits.Load() }

// BookMisses counts the programs looked up and not found in the book
// (then generated, where a generator is installed).
func BookMisses() int64 { return bookMisses.Load() }

// lookup returns the book's entry for key, counting the hit or miss.
func lookup(key string) (entry, bool) {
	book.mu.RLock()
	e, ok := book.entries[key]
	book.mu.RUnlock()
	if ok {
		bookHits.Add(1)
	} else {
		bookMisses.Add(1)
	}
	return e, ok
}

// record keeps e as key's entry, and key for Recorded.
func record(key string, e entry) {
	book.mu.Lock()
	defer book.mu.Unlock()
	if book.entries == nil {
		book.entries = map[string]entry{}
	}
	if book.recorded == nil {
		book.recorded = map[string]bool{}
	}
	if _, ok := book.entries[key]; !ok {
		book.entries[key] = e
	}
	book.recorded[key] = true
}
