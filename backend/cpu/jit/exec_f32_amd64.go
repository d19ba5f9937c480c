//go:build linux && amd64 && !purego

package jit

import (
	"runtime"
	"unsafe"
)

// RunF32 is Run for a program whose arrays are all f32 and which has one
// output, with ordinary stores: out is the output, ins[k] input k (read
// from its start, as long as out plus the input's displacement), as
// slices. For a call over a few hundred elements (a recurrent step's gate
// fusion) Run's Array values, five slices each and copied a few times a
// call, cost more than the code: this takes addresses straight from the
// slices. The code and its spans are Run's, so are the bits.
func (f *Func) RunF32(out []float32, ins [][]float32, scalars []float32) {
	n := len(out)
	if n == 0 {
		return
	}
	if !f.f32 || len(ins) != f.inputs || len(scalars) < f.scalars {
		panic("jit: RunF32 of a program that does not take these f32 arrays")
	}
	for k, x := range ins {
		if len(x) < n+f.offs[k] {
			panic("jit: RunF32 input shorter than the output")
		}
	}
	fr := getFrame()
	a := fr.a
	for k := range f.scalars {
		a.splat[k] = splat16(scalars[k])
	}
	body := n &^ 7
	a.rows = 1 // a strided program's one row (others do not read it)
	if body > 0 {
		fr.setOut(0, unsafe.Pointer(&out[0]))
		for k, x := range ins {
			fr.setIn(k, unsafe.Pointer(&x[0]))
		}
		a.n = uintptr(body)
		fr.setPool(f.pool)
		call(uintptr(unsafe.Pointer(&f.code[0])), unsafe.Pointer(a))
	}
	if body < n {
		f.tailF32(fr, out, ins, body, n)
	}
	fr.putArrays(1, len(ins))
	runtime.KeepAlive(f)
}

// tailF32 is tail for RunF32's slices.
func (f *Func) tailF32(fr *frame, out []float32, ins [][]float32, lo, hi int) {
	var arrs [MaxInputs]Array
	for k, x := range ins {
		arrs[k].F32 = x
	}
	outs := [1]Array{{F32: out}}
	f.tail(fr, outs[:], arrs[:len(ins)], lo, hi)
}

// splat16 is a vector slot's 16 copies of v.
func splat16(v float32) [16]float32 {
	return [16]float32{v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v}
}

// putArrays is put for a frame whose only Go pointers are its first outs
// outputs' and ins inputs' (and the pool's): clearing those is enough.
func (fr *frame) putArrays(outs, ins int) {
	clear(fr.keep[keepOut : keepOut+outs])
	clear(fr.keep[keepIn : keepIn+ins])
	fr.keep[keepPool] = nil
	frames.Put(fr)
}
