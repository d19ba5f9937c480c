//go:build linux && amd64 && !purego

package jit

import (
	"runtime"
	"unsafe"
)

// Calls over f32 arrays given as slices. For a call over a few hundred
// elements (a recurrent step's gate fusion, an epilogue's block) Run's
// Array values, five slices each and copied a few times a call, cost
// more than the code: these take the addresses straight from the slices.
// The code and the spans it runs over are Run's and RunStrided's, so the
// bits are theirs.

// RunF32 is Run for a flat program whose arrays are all f32, with
// ordinary stores: outs[k] is output k, ins[k] input k (read from its
// start, as long as the outputs plus the input's displacement).
func (f *Func) RunF32(outs, ins [][]float32, scalars []float32) {
	n := len(outs[0])
	if n == 0 {
		return
	}
	if !f.f32 || f.strided || f.rowLen > 0 {
		panic("jit: RunF32 of a program that is not flat over f32 arrays")
	}
	f.checkF32(outs, ins, scalars, n)
	fr := getFrame()
	a := fr.a
	f.splat(a, scalars)
	body := n &^ 7
	a.rows = 1 // a strided program's one row (others do not read it)
	if body > 0 {
		f.setF32(fr, outs, ins)
		a.n = uintptr(body)
		fr.setPool(f.pool)
		call(uintptr(unsafe.Pointer(&f.code[0])), unsafe.Pointer(a))
	}
	if body < n {
		f.tailF32(fr, outs, ins, body, n)
	}
	fr.putArrays(len(outs), len(ins))
	runtime.KeepAlive(f)
}

// RunStridedF32 is RunStrided for a strided program whose arrays are all
// f32, with these scalars: one call for the block, each row's last
// partial vector computed by the code.
func (f *Func) RunStridedF32(outs, ins [][]float32, scalars []float32, rows, cols int, outStrides, inStrides []int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if !f.f32 || !f.strided || !f.tails {
		panic("jit: RunStridedF32 of a program that is not strided over f32 arrays")
	}
	if len(outStrides) < f.outputs || len(inStrides) < f.inputs {
		panic("jit: RunStridedF32 without a stride for each array")
	}
	for k := range f.outputs {
		if outStrides[k] < 0 || len(outs[k]) < (rows-1)*outStrides[k]+cols {
			panic("jit: RunStridedF32 output shorter than its rows")
		}
	}
	for k := range f.inputs {
		if inStrides[k] < 0 || len(ins[k]) < (rows-1)*inStrides[k]+cols {
			panic("jit: RunStridedF32 input shorter than its rows")
		}
	}
	f.checkF32(outs, ins, scalars, 0)
	fr := getFrame()
	a := fr.a
	f.splat(a, scalars)
	f.setF32(fr, outs, ins)
	for k := range f.outputs {
		a.strides[k] = uintptr(outStrides[k] * 4)
	}
	for k := range f.inputs {
		a.strides[f.outputs+k] = uintptr(inStrides[k] * 4)
	}
	a.n, a.rows = uintptr(cols), uintptr(rows)
	fr.setPool(f.pool)
	call(uintptr(unsafe.Pointer(&f.code[0])), unsafe.Pointer(a))
	fr.putArrays(len(outs), len(ins))
	runtime.KeepAlive(f)
}

// checkF32 checks that the call has f's arrays and scalars and, where n
// > 0, that each array holds n elements (an input n plus its
// displacement).
func (f *Func) checkF32(outs, ins [][]float32, scalars []float32, n int) {
	if len(outs) != f.outputs || len(ins) != f.inputs || len(scalars) < f.scalars {
		panic("jit: a call with other arrays or scalars than its program's")
	}
	for _, x := range outs {
		if len(x) < max(n, 1) {
			panic("jit: output shorter than the call")
		}
	}
	for k, x := range ins {
		if len(x) < max(n+f.offs[k], 1) {
			panic("jit: input shorter than the call")
		}
	}
}

// splat fills the argument block's scalar slots.
func (f *Func) splat(a *args, scalars []float32) {
	for k := range f.scalars {
		v := scalars[k]
		a.splat[k] = [16]float32{v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v}
	}
}

// setF32 points the frame's arrays at the slices' first elements.
func (f *Func) setF32(fr *frame, outs, ins [][]float32) {
	for k, x := range outs {
		fr.setOut(k, unsafe.Pointer(&x[0]))
	}
	for k, x := range ins {
		fr.setIn(k, unsafe.Pointer(&x[0]))
	}
}

// tailF32 is tail for RunF32's slices.
func (f *Func) tailF32(fr *frame, outs, ins [][]float32, lo, hi int) {
	var outArrs [MaxOutputs]Array
	var inArrs [MaxInputs]Array
	for k, x := range outs {
		outArrs[k].F32 = x
	}
	for k, x := range ins {
		inArrs[k].F32 = x
	}
	f.tail(fr, outArrs[:len(outs)], inArrs[:len(ins)], lo, hi)
}

// putArrays is put for a frame whose only Go pointers are its first outs
// outputs' and ins inputs' (and the pool's): clearing those is enough.
func (fr *frame) putArrays(outs, ins int) {
	clear(fr.keep[keepOut : keepOut+outs])
	clear(fr.keep[keepIn : keepIn+ins])
	fr.keep[keepPool] = nil
	frames.Put(fr)
}
