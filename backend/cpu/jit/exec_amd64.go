//go:build linux && amd64 && !purego

package jit

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Available says whether generated code runs here.
var Available = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("AXLE_JIT") != "off"

// wideCode says whether programs of f32 arrays are generated as 16-lane
// AVX-512 code: on machines with AVX-512 F and DQ (VPMOVM2D, VPMOVD2M,
// the float logic ops), unless AXLE_KERNELS=avx2 asks for AVX2 only, as
// it does of the kernels. It gives the 8-lane code's bits.
var wideCode = Available && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && os.Getenv("AXLE_KERNELS") != "avx2"

// WideCode reports whether programs with row folds are generated as
// 16-lane code here. A fold of two vectors an iteration (no more than
// one exp, tanh or logistic in the program) then keeps 32 partial
// results a row, the 32 lanes of the row kernels' sums, and a fused sum
// gives the unfused one's bits; the 8-lane code's folds keep 16, so its
// fused sums differ from the unfused ones in the last bits.
func WideCode() bool { return wideCode }

//go:noescape
func call(code uintptr, args unsafe.Pointer)

// args is the block the generated code reads (gen.go's arg offsets). The
// code reads splats and spills as whole vectors (32 bytes, or 64 in wide
// code), which must not straddle cache lines (on the stack, 8-byte
// aligned, the block made gelu's loop five times slower), so a block
// lives in a pointer-free buffer at a 64-byte boundary (a frame's), and
// its addresses are uintptrs whose Go pointers the frame keeps.
type args struct {
	outs     [MaxOutputs]uintptr
	n        uintptr
	pool     uintptr
	ins      [MaxInputs]uintptr
	_        [argSplat - argIns - 8*MaxInputs]byte
	splat    [MaxScalars][16]float32
	spill    [maxSpill][16]float32
	rows     uintptr
	rowPtrs  [MaxScalars]uintptr
	strides  [MaxArrays]uintptr // a strided program's, in bytes
	_        [argFolds - argStrides - 8*MaxArrays]byte
	folds    [MaxRowFolds * maxUnroll][16]float32
	foldPtrs [MaxRowFolds]uintptr
	mask     [16]int32 // -1 eight times, then 0 (argMask)
	bound    int64     // the loops' bound where inputs are read through R13 (argBound)
	// tailIn and tailOut stage the last partial vector.
	tailIn, tailOut [MaxArrays][8]float32
}

// The vector slots sit at multiples of 64 bytes from the block's start,
// where gen.go's offsets say.
var (
	_ [-(unsafe.Offsetof(args{}.splat) % 64)]struct{}
	_ [-(unsafe.Offsetof(args{}.spill) % 64)]struct{}
	_ [-(unsafe.Offsetof(args{}.splat) - argSplat)]struct{}
	_ [-(unsafe.Offsetof(args{}.spill) - argSpill)]struct{}
	_ [-(unsafe.Offsetof(args{}.rows) - argRows)]struct{}
	_ [-(unsafe.Offsetof(args{}.strides) - argStrides)]struct{}
	_ [-(unsafe.Offsetof(args{}.folds) - argFolds)]struct{}
	_ [-(unsafe.Offsetof(args{}.foldPtrs) - argFoldPtrs)]struct{}
	_ [-(unsafe.Offsetof(args{}.mask) - argMask)]struct{}
	_ [-(unsafe.Offsetof(args{}.bound) - argBound)]struct{}
)

// frame is one call's argument block and the Go pointers behind its
// addresses: holding them here keeps the arrays alive and, as a frame is
// on the heap, makes escape analysis keep them off goroutine stacks,
// which move.
type frame struct {
	a    *args
	raw  []byte
	keep [MaxOutputs + MaxInputs + MaxScalars + 1 + MaxRowFolds]unsafe.Pointer
}

const (
	keepOut  = 0
	keepIn   = keepOut + MaxOutputs
	keepRow  = keepIn + MaxInputs
	keepPool = keepRow + MaxScalars
	keepFold = keepPool + 1
)

var frames = sync.Pool{New: func() any {
	raw := make([]byte, unsafe.Sizeof(args{})+64)
	off := (64 - uintptr(unsafe.Pointer(&raw[0]))%64) % 64
	a := (*args)(unsafe.Pointer(&raw[off]))
	for i := range 8 {
		a.mask[i] = -1
	}
	return &frame{a: a, raw: raw}
}}

func getFrame() *frame { return frames.Get().(*frame) }

// put returns fr to the pool without its pointers, which would keep the
// caller's arrays alive while it waits there.
func (fr *frame) put() {
	fr.keep = [len(fr.keep)]unsafe.Pointer{}
	frames.Put(fr)
}

func (fr *frame) setOut(k int, p unsafe.Pointer) { fr.keep[keepOut+k], fr.a.outs[k] = p, uintptr(p) }
func (fr *frame) setIn(k int, p unsafe.Pointer)  { fr.keep[keepIn+k], fr.a.ins[k] = p, uintptr(p) }
func (fr *frame) setRowPtr(k int, p unsafe.Pointer) {
	fr.keep[keepRow+k], fr.a.rowPtrs[k] = p, uintptr(p)
}
func (fr *frame) setFoldPtr(k int, p unsafe.Pointer) {
	fr.keep[keepFold+k], fr.a.foldPtrs[k] = p, uintptr(p)
}
func (fr *frame) setPool(p []uint32) {
	fr.keep[keepPool], fr.a.pool = unsafe.Pointer(&p[0]), uintptr(unsafe.Pointer(&p[0]))
}

// Func is a compiled program: its code in executable memory (released
// when the Func is garbage), and its constants.
type Func struct {
	prog    *Program
	code    []byte // the mapping, read-only and executable
	pool    []uint32
	inputs  int
	outputs int
	scalars int
	rowLen  int
	rowVals []int // the row scalars, in RunRows' order
	folds   int   // row folds (Program.RowFolds)
	// foldWidth is the partial results a row each fold leaves.
	foldWidth int
	wide      bool // the code is 16-lane (usesWide)
	strided   bool // the code loops over a block's rows (Program.Strided)
	tails     bool // the code computes rows' partial vectors (Program.tails)
	f32       bool // every array is f32 (Program.onlyF32)
	// target is what the code was made for: the streaming loop is made
	// for it too, whatever the settings when it is made.
	target target
	// offs is, per input, the largest displacement of its reads
	// (Value.Off): its arrays are that much longer than the outputs.
	offs []int
	// The same loop with non-temporal stores, made on the first call
	// that streams (most programs never do), or at once while recording.
	ntOnce sync.Once
	codeNT []byte
	poolNT []uint32
	ntErr  error
}

// Compile returns p's code: from the code book where it holds p,
// otherwise generated, where a generator is installed (InstallGenerator;
// with none, a program the book lacks is an error wrapping
// ErrUnsupported, and the caller keeps its tile program).
func Compile(p *Program) (*Func, error) {
	if !Available {
		return nil, ErrUnsupported
	}
	t := targetOf(p)
	if !runnable(featuresOf(p, t)) {
		// F16C's conversions, say: every AVX2 machine we know of has
		// them, but AVX2 does not imply them.
		return nil, fmt.Errorf("jit: this machine lacks a feature of %s: %w", featuresOf(p, t), ErrUnsupported)
	}
	f := &Func{prog: p, inputs: p.Inputs, outputs: len(p.outputs()), scalars: p.Scalars,
		rowLen: p.RowLen, rowVals: p.RowScalars, folds: len(p.RowFolds), wide: t.wide, strided: p.Strided, tails: p.tails(),
		target: t, f32: p.onlyF32()}
	var err error
	if f.code, f.pool, f.foldWidth, err = load(p, false, t); err != nil {
		return nil, err
	}
	f.offs = p.inputOffs() // p is valid: load checked it
	runtime.SetFinalizer(f, func(f *Func) {
		syscall.Munmap(f.code)
		if f.codeNT != nil {
			syscall.Munmap(f.codeNT)
		}
	})
	if Recording() {
		// A recorded book serves runs that may stream, which this
		// compile may never reach: the streaming loop is made now.
		f.streaming()
	}
	return f, nil
}

// FoldCode returns code that folds its one input along the rows as f's
// row fold k folds its value, leaving the same partial results (the
// same lanes, unroll and order), and copies the input to its output,
// which its loop needs: a tile program folds with it the rows whose
// fold f's code did not make (a thread's first tile, where an ahead fold
// made the others), and so gets f's bits whichever tiles a thread takes.
func (f *Func) FoldCode(k int) (*Func, error) {
	if k < 0 || k >= f.folds {
		return nil, fmt.Errorf("jit: fold %d of %d", k, f.folds)
	}
	lanes := 8
	if f.wide {
		lanes = 16
	}
	c, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}}, Outputs: []int{0}, RowLen: f.rowLen,
		RowFolds: []RowFold{{Op: f.prog.RowFolds[k].Op, Value: 0}}, lanes: lanes, unroll: f.foldWidth / lanes})
	if err == nil && c.foldWidth != f.foldWidth {
		err = fmt.Errorf("jit: the fold's code folds %d lanes, f's %d", c.foldWidth, f.foldWidth)
	}
	return c, err
}

// streaming returns the non-temporal loop, making it on first use.
func (f *Func) streaming() ([]byte, []uint32, error) {
	f.ntOnce.Do(func() {
		var width int
		f.codeNT, f.poolNT, width, f.ntErr = load(f.prog, true, f.target)
		if f.ntErr == nil && width != f.foldWidth {
			// Both loops must leave their partial results alike.
			f.ntErr = fmt.Errorf("jit: the streaming loop folds %d lanes, the other %d", width, f.foldWidth)
		}
	})
	return f.codeNT, f.poolNT, f.ntErr
}

// Run sets outs[k] at i to the program's k-th output at i, reading ins[k]
// at i for its inputs and scalars[k] for its splats. Each array holds the
// element type the program gives it; the outputs have one length and
// every input is at least as long. With stream, whole aligned vectors of
// f32 outputs are stored non-temporally (for results far larger than the
// caches).
func (f *Func) Run(outs, ins []Array, scalars []float32, stream bool) {
	n := outs[0].Len()
	if n == 0 {
		return
	}
	fr := getFrame()
	defer fr.put()
	f.prepare(fr.a, outs, ins, scalars, n)
	var codeNT []byte
	var poolNT []uint32
	if stream {
		var err error
		codeNT, poolNT, err = f.streaming()
		stream = err == nil // ordinary stores, then
	}
	head := 0
	if stream {
		// Non-temporal stores need the vector's alignment (32 or 64
		// bytes), at the same element in every f32 output.
		align := uintptr(f.vecBytes())
		mis := -1
		for k := range f.outputs {
			if outs[k].F32 == nil {
				continue
			}
			m := int(uintptr(outs[k].ptr(0)) % align)
			if mis >= 0 && m != mis {
				stream = false
			}
			mis = m
		}
		if stream && mis >= 0 {
			head = min(n, (int(align)-mis)%int(align)/4)
		}
	}
	if stream {
		f.span(fr, f.code, f.pool, outs, ins, 0, head)
		f.span(fr, codeNT, poolNT, outs, ins, head, n)
	} else {
		f.span(fr, f.code, f.pool, outs, ins, 0, n)
	}
	runtime.KeepAlive(f)
}

// Runner runs a Func over many spans with the same scalars (an epilogue
// over a block's part rows, say): the argument block is taken and the
// scalars splatted once, not for every span, which for spans of a few
// hundred elements cost more than their arithmetic.
type Runner struct {
	f  *Func
	fr *frame
}

// Runner returns a Runner for f with these scalars; Close returns its
// frame.
func (f *Func) Runner(scalars []float32) Runner {
	fr := getFrame()
	for k := range f.scalars {
		for j := range fr.a.splat[k] {
			fr.a.splat[k][j] = scalars[k]
		}
	}
	return Runner{f: f, fr: fr}
}

// Run is Func.Run with the Runner's scalars and ordinary stores.
func (r *Runner) Run(outs, ins []Array) {
	n := outs[0].Len()
	if n == 0 {
		return
	}
	f := r.f
	for k := range f.outputs {
		_ = outs[k].ptr(n - 1)
	}
	for k := range f.inputs {
		_ = ins[k].ptr(n - 1 + f.offs[k])
	}
	f.span(r.fr, f.code, f.pool, outs, ins, 0, n)
	runtime.KeepAlive(f)
}

// Close releases the Runner's frame; the Runner is not used after.
func (r *Runner) Close() {
	r.fr.put()
	r.fr = nil
}

// RunStrided runs a strided program (Program.Strided) with the Runner's
// scalars over rows rows of cols elements: row r of output k is
// elements [r·outStrides[k], r·outStrides[k]+cols) of outs[k], and the
// same for the inputs with inStrides. A stride of 0 reads or writes the
// same elements for every row. Strides are not negative, and rows of
// an output do not overlap.
func (r *Runner) RunStrided(outs, ins []Array, rows, cols int, outStrides, inStrides []int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	f, fr := r.f, r.fr
	if !f.strided {
		panic("jit: RunStrided of a program that is not strided")
	}
	check := func(x Array, stride int) {
		if stride < 0 {
			panic("jit: negative stride")
		}
		_ = x.ptr((rows-1)*stride + cols - 1)
	}
	for k := range f.outputs {
		check(outs[k], outStrides[k])
	}
	for k := range f.inputs {
		check(ins[k], inStrides[k])
	}
	body := cols &^ 7
	if f.tails {
		body = cols // the code computes each row's last partial vector
	}
	if body > 0 {
		for k := range f.outputs {
			fr.setOut(k, outs[k].ptr(0))
			fr.a.strides[k] = uintptr(outStrides[k] * f.prog.outputType(k).size())
		}
		for k := range f.inputs {
			fr.setIn(k, ins[k].ptr(0))
			fr.a.strides[f.outputs+k] = uintptr(inStrides[k] * f.prog.inputType(k).size())
		}
		fr.a.n, fr.a.rows = uintptr(body), uintptr(rows)
		fr.setPool(f.pool)
		call(uintptr(unsafe.Pointer(&f.code[0])), unsafe.Pointer(fr.a))
	}
	if body < cols { // each row's last partial vector
		var rowOuts [MaxOutputs]Array
		var rowIns [MaxInputs]Array
		for i := range rows {
			for k := range f.outputs {
				rowOuts[k] = outs[k].Slice(i*outStrides[k], i*outStrides[k]+cols)
			}
			for k := range f.inputs {
				rowIns[k] = ins[k].Slice(i*inStrides[k], i*inStrides[k]+cols)
			}
			f.tail(fr, rowOuts[:f.outputs], rowIns[:f.inputs], cols&^7, cols)
		}
	}
	runtime.KeepAlive(f)
}

// span runs code over elements [lo, hi): the whole vectors of 8 in one
// call, the rest through tail.
func (f *Func) span(fr *frame, code []byte, pool []uint32, outs, ins []Array, lo, hi int) {
	body := lo + (hi-lo)&^7
	fr.a.rows = 1 // a strided program's one row (others do not read it)
	if body > lo {
		for k := range f.outputs {
			fr.setOut(k, outs[k].ptr(lo))
		}
		fr.a.n = uintptr(body - lo)
		fr.setPool(pool)
		for k := range f.inputs {
			fr.setIn(k, ins[k].ptr(lo))
		}
		call(uintptr(unsafe.Pointer(&code[0])), unsafe.Pointer(fr.a))
	}
	f.tail(fr, outs, ins, body, hi)
}

// vecBytes is the size of the vectors f's main loops store.
func (f *Func) vecBytes() int {
	if f.wide {
		return 64
	}
	return 32
}

// RunRows runs a program with rows (Program.RowLen): the arrays hold
// whole rows, and rowVals[j] holds, for each row, the value of scalar
// RowScalars[j] (the other scalars are as in Run). With stream, the
// outputs are stored non-temporally when they are all f32 and start at
// boundaries of the code's vectors, and rows are whole vectors, so that
// every store is aligned; otherwise ordinarily.
func (f *Func) RunRows(outs, ins []Array, scalars []float32, rowVals [][]float32, stream bool) {
	f.RunRowsFold(outs, ins, scalars, rowVals, nil, stream)
}

// FoldWidth is how many partial results of each row fold RunRowsFold
// leaves a row.
func (f *Func) FoldWidth() int { return f.foldWidth }

// RunRowsFold is RunRows for a program with row folds: folds[j] gets,
// for each row r, FoldWidth partial results of fold j at
// [r·FoldWidth, (r+1)·FoldWidth), which the row's fold is the fold of.
func (f *Func) RunRowsFold(outs, ins []Array, scalars []float32, rowVals, folds [][]float32, stream bool) {
	rows := outs[0].Len() / f.rowLen
	if rows == 0 {
		return
	}
	fr := getFrame()
	defer fr.put()
	f.prepare(fr.a, outs, ins, scalars, rows*f.rowLen)
	code, pool := f.code, f.pool
	if stream && alignedF32(outs[:f.outputs], f.vecBytes()) && f.rowLen*4%f.vecBytes() == 0 {
		if c, p, err := f.streaming(); err == nil {
			code, pool = c, p
		}
	}
	for k := range f.outputs {
		fr.setOut(k, outs[k].ptr(0))
	}
	for k := range f.inputs {
		fr.setIn(k, ins[k].ptr(0))
	}
	for j, k := range f.rowVals {
		_ = rowVals[j][rows-1]
		fr.setRowPtr(k, unsafe.Pointer(&rowVals[j][0]))
	}
	for j := range f.folds {
		_ = folds[j][rows*f.foldWidth-1]
		fr.setFoldPtr(j, unsafe.Pointer(&folds[j][0]))
	}
	fr.a.n, fr.a.rows = uintptr(f.rowLen), uintptr(rows)
	fr.setPool(pool)
	call(uintptr(unsafe.Pointer(&code[0])), unsafe.Pointer(fr.a))
	runtime.KeepAlive(f)
}

// alignedF32 reports whether every array is f32 and starts at an
// align-byte boundary.
func alignedF32(xs []Array, align int) bool {
	for _, x := range xs {
		if x.F32 == nil || uintptr(x.ptr(0))%uintptr(align) != 0 {
			return false
		}
	}
	return true
}

// prepare checks that every array holds n elements and splats the
// scalars into a's slots.
func (f *Func) prepare(a *args, outs, ins []Array, scalars []float32, n int) {
	for k := range f.outputs {
		_ = outs[k].ptr(n - 1)
	}
	for k := range f.inputs {
		_ = ins[k].ptr(n - 1 + f.offs[k])
	}
	for k := range f.scalars {
		for j := range a.splat[k] {
			a.splat[k][j] = scalars[k]
		}
	}
}

// ptr is the address of element i.
func (x Array) ptr(i int) unsafe.Pointer {
	switch {
	case x.F32 != nil:
		return unsafe.Pointer(&x.F32[i])
	case x.I32 != nil:
		return unsafe.Pointer(&x.I32[i])
	case x.U8 != nil:
		return unsafe.Pointer(&x.U8[i])
	case x.S8 != nil:
		return unsafe.Pointer(&x.S8[i])
	case x.F16 != nil:
		return unsafe.Pointer(&x.F16[i])
	}
	return unsafe.Pointer(&x.BF16[i])
}

// stage copies elements [lo, hi) of x (at most 8) to the staging vector
// at p, or back from it with out: the bytes they take either way.
func (x Array) stage(p unsafe.Pointer, lo, hi int, out bool) {
	n := hi - lo
	size := 4
	switch {
	case x.BF16 != nil, x.F16 != nil:
		size = 2
	case x.U8 != nil, x.S8 != nil:
		size = 1
	}
	mem := unsafe.Slice((*byte)(x.ptr(lo)), n*size)
	vec := unsafe.Slice((*byte)(p), n*size)
	if out {
		copy(mem, vec)
	} else {
		copy(vec, mem)
	}
}

// tail computes elements [lo, hi) (fewer than 8) through the frame's
// staging vectors, so they get the same instructions; it leaves the
// frame's array addresses and length for the caller to set again.
func (f *Func) tail(fr *frame, outs, ins []Array, lo, hi int) {
	if lo == hi {
		return
	}
	a := fr.a
	for k := range f.inputs { // f32, or bf16 or f16 in the first half
		if f.offs[k] > 0 { // f32 (validate): staged where each read reaches
			buf := make([]float32, f.offs[k]+8)
			for _, v := range f.prog.Values {
				if v.Op == Input && v.Arg == k {
					copy(buf[v.Off:v.Off+hi-lo], ins[k].F32[lo+v.Off:hi+v.Off])
				}
			}
			fr.setIn(k, unsafe.Pointer(&buf[0]))
			continue
		}
		ins[k].stage(unsafe.Pointer(&a.tailIn[k]), lo, hi, false)
		fr.setIn(k, unsafe.Pointer(&a.tailIn[k]))
	}
	for k := range f.outputs {
		fr.setOut(k, unsafe.Pointer(&a.tailOut[k]))
	}
	a.n, a.rows = 8, 1
	fr.setPool(f.pool)
	call(uintptr(unsafe.Pointer(&f.code[0])), unsafe.Pointer(a))
	for k := range f.outputs {
		outs[k].stage(unsafe.Pointer(&a.tailOut[k]), lo, hi, true)
	}
}
