//go:build linux && amd64 && !purego

package jit

import (
	"bytes"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// poison returns a function that fills every vector register (ZMM0–31
// where wide code runs, YMM0–15 otherwise) from the 64 bytes it is
// given: run before a program, it makes a read of a register the program
// never wrote (a constant it should have kept there, say) show.
func poison(t *testing.T) func(fill uint32) {
	var a asm
	a.wide = wideCode
	regs := numYMM
	if wideCode {
		regs = numZMM
	}
	for r := range regs {
		a.load(r, mem{base: rdi, index: -1})
	}
	a.ret()
	code, err := syscall.Mmap(-1, 0, len(a.b), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	copy(code, a.b)
	if err := syscall.Mprotect(code, syscall.PROT_READ|syscall.PROT_EXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(code) })
	block := make([]uint32, 16)
	return func(fill uint32) {
		for i := range block {
			block[i] = fill
		}
		call(uintptr(unsafe.Pointer(&code[0])), unsafe.Pointer(&block[0]))
	}
}

// TestPinnedConstants runs programs whose wide code keeps constants in
// registers after every vector register was filled with zeros, and
// again with all ones, and compares both bit for bit with the code that
// keeps none (every constant read from the pool): exp's and logistic's
// shortcut tests, tanh, a division and square root, and a row program
// with folds, over inputs with the special values.
func TestPinnedConstants(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	fill := poison(t)
	c := func(v float32) Value { return Value{Op: Const, Value: v} }
	progs := map[string]*Program{
		"exp":      {Inputs: 1, Values: []Value{{Op: Input}, {Op: Exp, Args: [3]int{0}}}},
		"logistic": {Inputs: 1, Values: []Value{{Op: Input}, {Op: Logistic, Args: [3]int{0}}}},
		"chain10": {Inputs: 1, Values: []Value{{Op: Input}, c(0.5), {Op: Mul, Args: [3]int{0, 1}},
			{Op: Add, Args: [3]int{2, 0}}, {Op: Tanh, Args: [3]int{3}}, {Op: Mul, Args: [3]int{4, 4}},
			{Op: Sub, Args: [3]int{5, 1}}, {Op: Exp, Args: [3]int{6}}, {Op: Mul, Args: [3]int{7, 4}},
			{Op: Abs, Args: [3]int{8}}, {Op: Sqrt, Args: [3]int{9}}, {Op: Sub, Args: [3]int{10, 2}}}},
		"softmax rows": {Inputs: 2, Scalars: 1, RowLen: 1000, RowScalars: []int{0}, Values: []Value{{Op: Input},
			{Op: Splat, Arg: 0}, {Op: Sub, Args: [3]int{0, 1}}, {Op: Exp, Args: [3]int{2}}, {Op: Input, Arg: 1},
			{Op: Div, Args: [3]int{3, 4}}}, Outputs: []int{3, 5},
			RowFolds: []RowFold{{Op: Add, Value: 3}, {Op: Max, Value: 4}}},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for name, p := range progs {
		saved := maxPinned
		maxPinned = 0
		plain, err := Compile(p)
		maxPinned = saved
		if err != nil {
			t.Fatal(err)
		}
		f, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		if wideCode && bytes.Equal(f.code, plain.code) {
			t.Fatalf("%s: the wide code keeps no constant in a register", name)
		}
		n := 4000
		ins := make([][]float32, p.Inputs)
		for k := range ins {
			ins[k] = testInput(rng, n, 30)
		}
		outs := len(p.outputs())
		var mx []float32
		if p.RowLen > 0 {
			mx = testInput(rng, n/p.RowLen, 3)
		}
		run := func(f *Func, before func()) [][]float32 {
			got := make([][]float32, outs)
			for k := range got {
				got[k] = make([]float32, n)
			}
			before()
			if p.RowLen > 0 {
				rows := n / p.RowLen
				folds := [][]float32{make([]float32, rows*f.FoldWidth()), make([]float32, rows*f.FoldWidth())}
				f.RunRowsFold(f32s(got...), f32s(ins...), []float32{0}, [][]float32{mx}, folds, false)
				return append(got, folds...)
			}
			f.Run(f32s(got...), f32s(ins...), nil, false)
			return got
		}
		want := run(plain, func() {})
		for _, bits := range []uint32{0, 0xffffffff, 0x7fc00000} {
			got := run(f, func() { fill(bits) })
			for k := range want {
				if p.RowLen > 0 && k >= outs {
					samePartials(t, name+": partials", got[k], want[k])
					continue
				}
				sameBits(t, name, got[k], want[k])
			}
		}
	}
}
