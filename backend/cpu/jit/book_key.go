package jit

import (
	"encoding/binary"
	"math"
)

// A program's key in the code book (book.go) is a canonical encoding of
// everything its code is generated from: every field of the program,
// whether its stores are non-temporal, and the target (the settings of
// the machine and process that change the code). Programs whose code
// differs have different keys; the encoding is injective (every list
// goes with its length), so it is a key, not a hash that might collide.
// TestKeyCoversEveryField fails when a field is added to Program (or to
// Value, RowFold or target) and the key does not change with it.

// keyVersion starts every key: changing the encoding changes it, so no
// key of an older book matches a program by accident.
const keyVersion = 2

// target is what, beside a program and its stores, decides its code:
// the generator reads nothing else (generate).
type target struct {
	wide      bool // 16-lane AVX-512 code (usesWide)
	maxPinned int  // the most constants wide code keeps in registers
	shortcuts bool // exp's and logistic's shortcut blocks (shortcuts)
	foldRegs  bool // row folds' accumulators in registers (foldRegs)
}

// keyWriter appends a key's fields, each self-delimiting.
type keyWriter []byte

func (w *keyWriter) int(x int) { *w = binary.AppendVarint(*w, int64(x)) }

func (w *keyWriter) bool(b bool) {
	if b {
		*w = append(*w, 1)
	} else {
		*w = append(*w, 0)
	}
}

func (w *keyWriter) ints(xs []int) {
	w.int(len(xs))
	for _, x := range xs {
		w.int(x)
	}
}

func (w *keyWriter) types(ts []Type) {
	w.int(len(ts))
	for _, t := range ts {
		w.int(int(t))
	}
}

// programKey is p's key for code with non-temporal stores (nt) or not,
// generated for target t.
func programKey(p *Program, nt bool, t target) string {
	w := keyWriter{keyVersion}
	w.bool(nt)
	w.bool(t.wide)
	w.int(t.maxPinned)
	w.bool(t.shortcuts)
	w.bool(t.foldRegs)
	w.int(p.Inputs)
	w.int(p.Scalars)
	w.int(p.RowLen)
	w.int(p.PrefetchAhead)
	w.bool(p.Strided)
	w.int(p.lanes)
	w.int(p.unroll)
	w.values(p.Values)
	w.ints(p.Outputs)
	w.types(p.InputTypes)
	w.types(p.OutputTypes)
	w.ints(p.RowScalars)
	w.int(len(p.RowFolds))
	for _, f := range p.RowFolds {
		w.int(int(f.Op))
		w.int(f.Value)
	}
	w.ints(p.PrefetchInputs)
	w.ints(p.CachedOutputs)
	return string(w)
}

// values appends every field of every value, those its op does not read
// too: the key is then the program's plain contents, whatever the
// generator makes of them.
func (w *keyWriter) values(vs []Value) {
	w.int(len(vs))
	for _, v := range vs {
		w.int(int(v.Op))
		for _, a := range v.Args {
			w.int(a)
		}
		w.int(v.Arg)
		w.int(int(math.Float32bits(v.Value)))
		w.int(v.Off)
	}
}
