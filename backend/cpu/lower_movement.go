package cpu

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Data movement compiles to a program of boxes: each copies a strided box
// of elements from one source (an operand or a compile-time constant) into
// the result. Movement copies bits, so the copy loops are instantiated per
// element width, not per type: one uint32 loop moves f32, s32 and u32
// alike, and bf16 bit patterns travel untouched as uint16.

// word is one element's storage viewed as raw bits.
type word interface {
	uint8 | uint16 | uint32 | uint64 | [2]uint64
}

// byWidth applies to p the instantiation, among a generic maker's k1,
// k2, k4, k8 and k16 over the words of 1 to 16 bytes, for elements w
// bytes wide; false for another width.
func byWidth[P, K any](w int, p P, k1, k2, k4, k8, k16 func(P) K) (K, bool) {
	switch w {
	case 1:
		return k1(p), true
	case 2:
		return k2(p), true
	case 4:
		return k4(p), true
	case 8:
		return k8(p), true
	case 16:
		return k16(p), true
	}
	var none K
	return none, false
}

// wordsOf views an array literal's storage as elements of width W.
func wordsOf[W word](l *hlo.Literal) []W {
	b := bytesOf(l)
	var z W
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*W)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// storageWidth is the bytes one element of t occupies in a literal.
func storageWidth(t hlo.DType) int {
	if !t.IsArrayType() || t == hlo.Tuple || t == hlo.Token {
		return 0
	}
	return len(bytesOf(hlo.NewLiteral(hlo.ArrayShape(t, 1))))
}

// box copies dims elements: index idx goes from src[srcOff + Σ idx·srcStrides]
// to dst[dstOff + Σ idx·dstStrides]. A source stride of 0 repeats an
// element (broadcast, fill), a negative one walks backwards (reverse).
type box struct {
	src                    int // operand index, or -1-k for constant k
	dims                   []int
	dstStrides, srcStrides []int
	dstOff, srcOff         int
	// tiled says the last two dimensions are a transpose: one is
	// contiguous in the destination, the other in the source, so they are
	// copied in square tiles that keep both sides in cache.
	tiled bool
	// moved says the run-time start indices of dynamic-(update-)slice
	// shift the box; inPlace that the box copies operand 0 whole, which
	// an in-place dynamic-update-slice skips.
	moved, inPlace bool
}

// transposeTile is the side of a transpose tile: 32 rows of 32 elements
// of both sides fit in L1 for every element width.
const transposeTile = 32

func newBox(src int, dims []int64, dstStrides, srcStrides []int) box {
	b := box{src: src, dims: make([]int, len(dims)), dstStrides: dstStrides, srcStrides: srcStrides}
	for i, d := range dims {
		b.dims[i] = int(d)
	}
	return b
}

// finish drops unit dimensions, merges neighbours contiguous on both
// sides so inner runs are long, and moves the source-contiguous dimension
// of a transpose next to the innermost one for tiling. It reports false
// for an empty box (which copies nothing).
func (b *box) finish() bool {
	var dims, ds, ss []int
	for i, n := range b.dims {
		if n <= 0 {
			return false
		}
		if n == 1 {
			continue
		}
		k := len(dims) - 1
		if k >= 0 && ds[k] == b.dstStrides[i]*n && ss[k] == b.srcStrides[i]*n {
			dims[k] *= n
			ds[k], ss[k] = b.dstStrides[i], b.srcStrides[i]
			continue
		}
		dims, ds, ss = append(dims, n), append(ds, b.dstStrides[i]), append(ss, b.srcStrides[i])
	}
	b.dims, b.dstStrides, b.srcStrides = dims, ds, ss
	last := len(dims) - 1
	if last < 1 || ds[last] != 1 || ss[last] == 1 || ss[last] == 0 || dims[last] < transposeTile/2 {
		// Not a transpose: contiguous runs or fills already.
		return true
	}
	for k := last - 1; k >= 0; k-- {
		if ss[k] == 1 && dims[k] >= transposeTile/2 {
			// Loop order is free for a copy: every element is written once.
			for _, s := range [][]int{b.dims, b.dstStrides, b.srcStrides} {
				v := s[k]
				copy(s[k:], s[k+1:last])
				s[last-1] = v
			}
			b.tiled = true
			break
		}
	}
	return true
}

// count is the number of elements the box copies.
func (b *box) count() int {
	n := 1
	for _, d := range b.dims {
		n *= d
	}
	return n
}

// copyBox performs b from src into dst.
func copyBox[W word](dst, src []W, b *box) {
	if len(b.dims) == 0 {
		dst[b.dstOff] = src[b.srcOff]
		return
	}
	cols := b.dims[len(b.dims)-1]
	if !b.tiled || len(b.dims) == 2 {
		copyDims(dst, src, b, 0, b.dstOff, b.srcOff, 0, cols)
		return
	}
	// A transpose under outer dimensions (a convolution's input relaid
	// with its examples innermost, NHWC [256,28,28,32] to [32,28,28,256])
	// runs a band of tile columns at a time through all of them: a tile
	// reads its rows from 32 pages of the source and writes 32 of the
	// destination; with the outer dimensions inside the band those pages
	// stay the same tile after tile, where a whole row of tiles touched
	// 8 times as many (BenchmarkTransposeConvInput, alternated: 3.3–3.5
	// → 4.0–4.2 GB/s on one thread, 6–13 → 15–17 on two).
	for j0 := 0; j0 < cols; j0 += transposeTile {
		copyDims(dst, src, b, 0, b.dstOff, b.srcOff, j0, min(j0+transposeTile, cols))
	}
}

// copyDims copies dimensions k... of b from offsets d and s; a tiled
// transpose only columns [j0, j1) of its last dimension.
func copyDims[W word](dst, src []W, b *box, k, d, s, j0, j1 int) {
	last := len(b.dims) - 1
	switch {
	case k == last:
		copyRun(dst, src, d, s, b.dims[k], b.dstStrides[k], b.srcStrides[k])
	case k == last-1 && !b.tiled && b.dstStrides[last] == 1 && b.srcStrides[last] == 1 &&
		b.dims[last] <= vectorRuns && kernels.CopyRuns(dst, src, d, s, b.dims[k], b.dims[last], b.dstStrides[k], b.srcStrides[k]):
	case k == last-1 && !b.tiled && b.dims[last] <= shortRun && b.dstStrides[last] == 1 && b.srcStrides[last] == 1:
		copyShortRuns(dst, src, d, s, b.dims[k], b.dims[last], b.dstStrides[k], b.srcStrides[k])
	case k == last-1 && !b.tiled && b.dims[last] <= shortRun:
		copyShortStrided(dst, src, d, s, b.dims[k], b.dims[last], b.dstStrides[k], b.srcStrides[k], b.dstStrides[last], b.srcStrides[last])
	case k == last-1 && b.tiled:
		copyTiled(dst, src, b, d, s, j0, j1)
	default:
		for range b.dims[k] {
			copyDims(dst, src, b, k+1, d, s, j0, j1)
			d += b.dstStrides[k]
			s += b.srcStrides[k]
		}
	}
}

// shortRun is the longest contiguous innermost run copyShortRuns copies
// element by element rather than through a call per run.
const shortRun = 8

// vectorRuns is the longest contiguous innermost run (elements) copied
// by kernels.CopyRuns, all the runs of a dimension in one call, rather
// than a call to copy per run: a U-Net's skip concatenation (runs of 16
// and 8 floats, 1,024 of each) took 17 µs through copy and copyShortRuns.
// Longer runs amortise copy's call.
const vectorRuns = 256

// copyShortRuns copies rows runs of n ≤ shortRun contiguous elements,
// the runs ds and ss apart: an interleaving transpose (a detector's
// depth-to-space, [1,160,160,1,2,2] to [1,1,160,2,160,2], runs of 2)
// spent most of its time in a call and a copy per run.
func copyShortRuns[W word](dst, src []W, d, s, rows, n, ds, ss int) {
	for range rows {
		dr, sr := dst[d:d+n], src[s:s+n]
		for i := range dr {
			dr[i] = sr[i]
		}
		d += ds
		s += ss
	}
}

// copyShortStrided is copyShortRuns for runs of n ≤ shortRun elements
// dsi and ssi apart within a run: a pixel shuffle's last two dimensions
// ([1,11,11,2,2,6] to [1,6,11,2,11,2], runs of 2 read 6 apart) took a
// call through copyRun and its case analysis for every two elements,
// 8.5 ns an element.
func copyShortStrided[W word](dst, src []W, d, s, rows, n, ds, ss, dsi, ssi int) {
	for range rows {
		di, si := d, s
		for range n {
			dst[di] = src[si]
			di += dsi
			si += ssi
		}
		d += ds
		s += ss
	}
}

// copyRun copies n elements with the given strides; contiguous runs use
// copy and repeated sources a fill.
func copyRun[W word](dst, src []W, d, s, n, ds, ss int) {
	switch {
	case ds == 1 && ss == 1:
		copy(dst[d:d+n], src[s:s+n])
	case ds == 1 && ss == 0:
		v := src[s]
		run := dst[d : d+n]
		for i := range run {
			run[i] = v
		}
	default:
		for range n {
			dst[d] = src[s]
			d += ds
			s += ss
		}
	}
}

// copyTiled copies the last two dimensions of b tile by tile: i is
// contiguous in the source, j in the destination. A tile's source and
// destination lines stay in L1 while it is copied (kernels.Transpose
// moves it through registers).
func copyTiled[W word](dst, src []W, b *box, d, s, c0, c1 int) {
	const t = transposeTile
	r := len(b.dims) - 2
	rows := b.dims[r]
	dr, sc := b.dstStrides[r], b.srcStrides[r+1] // the other strides are 1
	for i0 := 0; i0 < rows; i0 += t {
		i1 := min(i0+t, rows)
		for j0 := c0; j0 < c1; j0 += t {
			j1 := min(j0+t, c1)
			kernels.Transpose(dst[d+i0*dr+j0:], src[s+i0+j0*sc:], i1-i0, j1-j0, dr, sc)
		}
	}
}

// program is a compiled data-movement instruction: boxes run in order
// (later ones overwrite earlier ones, as pad's interior does its fill).
type program struct {
	boxes  []box
	consts []*hlo.Literal
	// dyn reads the run-time start indices that shift moved boxes.
	dyn     *dynStarts
	threads int
}

// parallelCopy is the element count from which a box is split across
// threads: below it the copy is over before the workers wake.
const parallelCopy = kernels.MinParallelWork

// compile returns the program's kernel, instantiated for the element width.
func (p *program) compile(t hlo.DType) (kernelFunc, bool) {
	var keep []box
	for _, b := range p.boxes {
		// Starts only add to the offsets, so moved boxes finish too.
		if b.finish() {
			keep = append(keep, b)
		}
	}
	p.boxes = keep
	return byWidth(storageWidth(t), p, runProgram[uint8], runProgram[uint16], runProgram[uint32], runProgram[uint64],
		runProgram[[2]uint64])
}

func runProgram[W word](p *program) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst := wordsOf[W](out)
		inPlace := len(ops) > 0 && sameStorage(out, ops[0])
		for i := range p.boxes {
			b := &p.boxes[i]
			switch {
			case b.inPlace && inPlace:
				continue
			case b.moved:
				moved := *b // the program is shared by concurrent calls
				off := p.dyn.offset(ops)
				if p.dyn.dst {
					moved.dstOff += off
				} else {
					moved.srcOff += off
				}
				b = &moved
			}
			splitCopy(dst, wordsOf[W](p.source(b.src, ops)), b, p.threads)
		}
		return nil
	}
}

func (p *program) source(i int, ops []*hlo.Literal) *hlo.Literal {
	if i < 0 {
		return p.consts[-1-i]
	}
	return ops[i]
}

// splitCopy runs one box, split over its outermost dimension when it is big.
func splitCopy[W word](dst, src []W, b *box, threads int) {
	if threads <= 1 || len(b.dims) == 0 || b.dims[0] < threads || b.count() < parallelCopy {
		copyBox(dst, src, b)
		return
	}
	kernels.Parallel(threads, func(t int) {
		lo, hi := b.dims[0]*t/threads, b.dims[0]*(t+1)/threads
		part := *b
		part.dims = slices.Clone(b.dims)
		part.dims[0] = hi - lo
		part.dstOff += lo * b.dstStrides[0]
		part.srcOff += lo * b.srcStrides[0]
		copyBox(dst, src, &part)
	})
}

// movable reports whether the instruction and its operands are static
// arrays with default layouts of one element type, which movement needs.
func movable(in *hlo.Instruction, operands ...int) bool {
	if !plainArray(in.Shape) {
		return false
	}
	for _, i := range operands {
		if i >= len(in.Operands) {
			return false
		}
		o := in.Operands[i].Shape
		if !plainArray(o) || o.DType != in.Shape.DType {
			return false
		}
	}
	return storageWidth(in.Shape.DType) > 0
}

// plainArray: a static array. Literals hold their elements in logical
// row-major order whatever the layout says, so only bitcast (which
// reinterprets the physical order) cares about layouts.
func plainArray(s hlo.Shape) bool {
	return s.IsArray() && !s.IsDynamic() && !s.IsUnbounded()
}

// lowerMovement returns a compiled kernel for a data-movement
// instruction, or false when it has none.
func lowerMovement(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	switch in.Opcode {
	case hlo.OpBitcast:
		if !movable(in, 0) || in.Operands[0].Shape.NumElements() != in.Shape.NumElements() ||
			!defaultLayout(in.Shape) || !defaultLayout(in.Operands[0].Shape) {
			return lowerBitcastRelayout(in)
		}
	case hlo.OpSelect:
		return lowerSelect(in)
	case hlo.OpConvert:
		return lowerConvert(in)
	}
	plan := movementPlans[in.Opcode]
	if plan == nil {
		return nil, false
	}
	p := plan(in)
	if p == nil {
		return nil, false
	}
	p.threads = threads
	return p.compile(in.Shape.DType)
}

// movementPlans are the ops whose kernel is a program of box copies,
// each with its planner (a bitcast that keeps the layout is a copy).
var movementPlans = map[hlo.Opcode]func(*hlo.Instruction) *program{
	hlo.OpCopy: planCopy, hlo.OpReshape: planCopy, hlo.OpBitcast: planCopy,
	hlo.OpBroadcast: planBroadcast, hlo.OpTranspose: planTranspose, hlo.OpReverse: planReverse,
	hlo.OpSlice: planSlice, hlo.OpConcatenate: planConcat, hlo.OpPad: planPad, hlo.OpIota: planIota,
	hlo.OpDynamicSlice: planDynamicSlice, hlo.OpDynamicUpdateSlice: planDynamicUpdateSlice,
}

func planCopy(in *hlo.Instruction) *program {
	if !movable(in, 0) || in.Operands[0].Shape.NumElements() != in.Shape.NumElements() {
		return nil
	}
	n := in.Shape.NumElements()
	return &program{boxes: []box{newBox(0, []int64{n}, []int{1}, []int{1})}}
}

// planBroadcast maps operand dimension k to result dimension dimensions[k];
// the other result dimensions repeat it (source stride 0).
func planBroadcast(in *hlo.Instruction) *program {
	if !movable(in, 0) {
		return nil
	}
	o := in.Operands[0].Shape
	dims := in.Dimensions()
	if len(dims) != o.Rank() {
		return nil
	}
	srcStrides := make([]int, in.Shape.Rank())
	opStrides := hlo.RowMajorStrides(o.Dims)
	for k, d := range dims {
		if d < 0 || int(d) >= in.Shape.Rank() || in.Shape.Dims[d] != o.Dims[k] {
			return nil
		}
		srcStrides[d] = opStrides[k]
	}
	return &program{boxes: []box{newBox(0, in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)}}
}

// planTranspose: result dimension i is operand dimension dimensions[i].
func planTranspose(in *hlo.Instruction) *program {
	if !movable(in, 0) {
		return nil
	}
	o := in.Operands[0].Shape
	perm := in.Dimensions()
	if len(perm) != o.Rank() || in.Shape.Rank() != o.Rank() {
		return nil
	}
	opStrides := hlo.RowMajorStrides(o.Dims)
	srcStrides := make([]int, len(perm))
	for i, p := range perm {
		if p < 0 || int(p) >= o.Rank() || o.Dims[p] != in.Shape.Dims[i] {
			return nil
		}
		srcStrides[i] = opStrides[p]
	}
	return &program{boxes: []box{newBox(0, in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)}}
}

// planReverse reads reversed dimensions from their end (negative stride).
func planReverse(in *hlo.Instruction) *program {
	if !movable(in, 0) || !in.Shape.SameDims(in.Operands[0].Shape) {
		return nil
	}
	dims := in.Shape.Dims
	srcStrides := hlo.RowMajorStrides(dims)
	b := newBox(0, dims, hlo.RowMajorStrides(dims), srcStrides)
	flipped := make([]bool, len(dims))
	for _, d := range in.Dimensions() {
		if d < 0 || int(d) >= len(dims) || flipped[d] {
			return nil
		}
		flipped[d] = true
		b.srcOff += int(max(dims[d]-1, 0)) * srcStrides[d]
		srcStrides[d] = -srcStrides[d]
	}
	return &program{boxes: []box{b}}
}

// planIota broadcasts the vector 0..n-1, converted to the element type at
// compile time exactly as the evaluator converts it, along the iota
// dimension.
func planIota(in *hlo.Instruction) *program {
	d, ok := in.Int("iota_dimension")
	if !movable(in) || !ok || d < 0 || int(d) >= in.Shape.Rank() {
		return nil
	}
	vec := hlo.NewLiteral(hlo.ArrayShape(in.Shape.DType, in.Shape.Dims[d]))
	for i := range vec.Len() {
		vec.SetInt64(i, int64(i))
	}
	srcStrides := make([]int, in.Shape.Rank())
	srcStrides[d] = 1
	b := newBox(-1, in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)
	return &program{boxes: []box{b}, consts: []*hlo.Literal{vec}}
}

// lowerSelect picks elements by a pred array or scalar; either value
// operand may be a scalar too (the evaluator broadcasts all three).
func lowerSelect(in *hlo.Instruction) (kernelFunc, bool) {
	if len(in.Operands) != 3 || !movable(in, 1, 2) {
		return nil, false
	}
	step := func(s hlo.Shape) (int, bool) {
		switch {
		case !plainArray(s):
			return 0, false
		case s.Rank() == 0:
			return 0, true
		}
		return 1, s.SameDims(in.Shape)
	}
	ps, ok0 := step(in.Operands[0].Shape)
	as, ok1 := step(in.Operands[1].Shape)
	bs, ok2 := step(in.Operands[2].Shape)
	if !ok0 || !ok1 || !ok2 || in.Operands[0].Shape.DType != hlo.Pred {
		return nil, false
	}
	switch storageWidth(in.Shape.DType) {
	case 1:
		return selectKernel[uint8](ps, as, bs), true
	case 2:
		return selectKernel[uint16](ps, as, bs), true
	case 4:
		return selectKernel[uint32](ps, as, bs), true
	case 8:
		return selectKernel[uint64](ps, as, bs), true
	case 16:
		return selectKernel[[2]uint64](ps, as, bs), true
	}
	return nil, false
}

// selectKernel's steps are 1 for a full operand, 0 for a scalar.
func selectKernel[W word](ps, as, bs int) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst := wordsOf[W](out)
		if len(dst) == 0 {
			return nil
		}
		p := ops[0].Data().([]bool)
		a, b := wordsOf[W](ops[1]), wordsOf[W](ops[2])
		if ps == 0 {
			src, s := a, as
			if !p[0] {
				src, s = b, bs
			}
			copyRun(dst, src, 0, 0, len(dst), 1, s)
			return nil
		}
		for i := range dst {
			if p[i] {
				dst[i] = a[i*as]
			} else {
				dst[i] = b[i*bs]
			}
		}
		return nil
	}
}

// lowerBitcastRelayout compiles a bitcast between layouts that are not
// both row-major: it reinterprets the physical order, so the elements go
// operand logical → physical (one box copy into scratch) → result logical
// (another), as the evaluator moves them.
func lowerBitcastRelayout(in *hlo.Instruction) (kernelFunc, bool) {
	if len(in.Operands) != 1 || !movable(in, 0) {
		return nil, false
	}
	o := in.Operands[0].Shape
	if o.DType != in.Shape.DType || o.NumElements() != in.Shape.NumElements() {
		return nil, false
	}
	toPhys := newBox(0, o.Dims, o.LayoutStrides(), hlo.RowMajorStrides(o.Dims))
	fromPhys := newBox(0, in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), in.Shape.LayoutStrides())
	n := int(o.NumElements())
	switch storageWidth(o.DType) {
	case 1:
		return bitcastMove[uint8](toPhys, fromPhys, n), true
	case 2:
		return bitcastMove[uint16](toPhys, fromPhys, n), true
	case 4:
		return bitcastMove[uint32](toPhys, fromPhys, n), true
	case 8:
		return bitcastMove[uint64](toPhys, fromPhys, n), true
	case 16:
		return bitcastMove[[2]uint64](toPhys, fromPhys, n), true
	}
	return nil, false
}

func bitcastMove[W word](toPhys, fromPhys box, n int) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		src, dst := wordsOf[W](ops[0]), wordsOf[W](out)
		if len(src) != n || len(dst) != n {
			return fmt.Errorf("bitcast: storage does not match %d elements", n)
		}
		if n == 0 {
			return nil
		}
		buf := make([]W, n)
		a, b := toPhys, fromPhys // per call: copyBox moves the offsets
		copyBox(buf, src, &a)
		copyBox(dst, buf, &b)
		return nil
	}
}
