//go:build linux && amd64 && !purego

package jit

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// Where machine code comes from: load is the one place that makes a
// program's code, for Compile, FoldCode and the streaming loops alike.
// It takes the code from the book (book.go) if the program is there,
// and otherwise from the generator, if one is installed.

// generatorFunc is generate's signature.
type generatorFunc func(p *Program, nt bool, t target) (code []byte, pool []uint32, width int, err error)

// generator makes the code of programs the book lacks. It is nil until
// InstallGenerator: nothing else in the package refers to generate, so
// a binary that never calls InstallGenerator (a package compiled ahead
// of time, whose code is all in its book) does not link the generator.
var generator atomic.Pointer[generatorFunc]

// InstallGenerator lets Compile generate the code of programs the book
// does not hold. Whatever compiles models at run time calls it (package
// cpu's compile path); code compiled ahead of time loads a book instead.
func InstallGenerator() {
	g := generatorFunc(generate)
	generator.Store(&g)
}

// RemoveGenerator undoes InstallGenerator: programs then get code only
// from the book (tests, and tools that check a book covers a model).
func RemoveGenerator() { generator.Store(nil) }

// load returns p's code for target t, with non-temporal stores or not,
// in a new read-only executable mapping, and its pool and fold width.
func load(p *Program, nt bool, t target) ([]byte, []uint32, int, error) {
	if err := p.validate(); err != nil { // the same errors with or without the generator
		return nil, nil, 0, err
	}
	key := programKey(p, nt, t)
	e, ok := lookup(key)
	if !ok {
		var err error
		if e, err = generateEntry(p, key, nt, t); err != nil {
			return nil, nil, 0, err
		}
	}
	if Recording() {
		record(key, e)
	}
	m, err := mapCode(e.code)
	if err != nil {
		return nil, nil, 0, err
	}
	return m, slices.Clone(e.pool), e.width, nil
}

// generateEntry generates p's code (its key key) with the installed
// generator, or takes what it generated for the same key before.
func generateEntry(p *Program, key string, nt bool, t target) (entry, error) {
	g := generator.Load()
	if g == nil {
		return entry{}, fmt.Errorf("jit: the program is not in the code book, and no generator is installed: %w", ErrUnsupported)
	}
	if e, ok := made.get(key); ok {
		return e, nil
	}
	code, pool, width, err := (*g)(p, nt, t)
	if err != nil {
		return entry{}, err
	}
	e := entry{code: code, pool: pool, width: width, features: featuresOf(p, t)}
	made.put(key, e)
	return e, nil
}

// made keeps the generator's code by program key: a model is often the
// same programs many times over (an unrolled recurrence's cells, a
// transformer's layers), and generating is most of compiling one. The
// BiLSTM tagger unrolled one direction after the other: 128 cells, whose
// code took 1.15 s of its 1.7 s of load. Bounded by the code it holds;
// once full, programs are generated each time as before.
var made generated

// madeMaxBytes bounds the code made keeps.
const madeMaxBytes = 64 << 20

type generated struct {
	mu      sync.Mutex
	entries map[string]entry
	bytes   int
}

func (g *generated) get(key string) (entry, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.entries[key]
	return e, ok
}

func (g *generated) put(key string, e entry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(e.code) + 4*len(e.pool) + len(key)
	if g.bytes+n > madeMaxBytes {
		return
	}
	if g.entries == nil {
		g.entries = map[string]entry{}
	}
	if _, ok := g.entries[key]; !ok {
		g.entries[key] = e
		g.bytes += n
	}
}

// mapCode copies code into a new read-only executable mapping.
func mapCode(code []byte) ([]byte, error) {
	m, err := syscall.Mmap(-1, 0, len(code), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("jit: mmap: %w", err)
	}
	copy(m, code)
	if err := syscall.Mprotect(m, syscall.PROT_READ|syscall.PROT_EXEC); err != nil {
		syscall.Munmap(m)
		return nil, fmt.Errorf("jit: mprotect: %w", err)
	}
	return m, nil
}

// codeABI fingerprints what generated code assumes of the package that
// runs it: the argument block's layout, the limits that size it, the
// pool's bias, and the math constants whose bits it must share with the
// kernels. A book made by a version of the package that differs in any
// of them is refused (LoadBook).
func codeABI() uint64 {
	h := fnv.New64a()
	var buf []byte
	for _, x := range [...]int{argOuts, argN, argPool, argIns, argSplat, argSpill, argRows, argRowPtrs, argStrides,
		argFolds, argFoldPtrs, argMask, argBound, slotBytes, poolBias, MaxArrays, MaxInputs, MaxOutputs, MaxScalars, MaxRowFolds,
		maxUnroll, maxSpill} {
		buf = binary.AppendVarint(buf, int64(x))
	}
	h.Write(buf)
	fmt.Fprintf(h, "%v", kernels.MathConstants)
	return h.Sum64()
}
