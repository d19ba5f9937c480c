package cpu

import (
	"cmp"
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// topk without a comparator orders each last-dimension row by the
// evaluator's keys (IEEE total order of the value widened to float64 for
// floats, so NaN is largest and -0 < +0; integers by value), descending
// for largest=true, ties to the lower index. With the index as the last
// tie-break that is a strict total order, so any selection finds the
// evaluator's k first elements: each row's keys are mapped once to
// uint64s where larger goes first, and a min-heap of the k best seen so
// far is replaced at its root only by a strictly larger key (scanning in
// index order, an equal key later never wins), then sorted.
//
// A to_apply comparator is not a total order in general (IEEE compares
// with NaN), and the evaluator's answer is then what its stable merge
// sort of the whole row gives; the kernel runs the same sort with the
// same three-way outcomes (see lower_topk_sort.go).

// topkPlan is one topk, resolved at compile time.
type topkPlan struct {
	rows, n, k int
	keys       func(dst []uint64, x *hlo.Literal, at int) // a row's keys, larger first
	move       func(dst, src *hlo.Literal, perm []int, base int)
	// sorted, for a comparator, stable-sorts every row of x and passes
	// each row's order to emit.
	sorted  func(x *hlo.Literal, emit func(row int, perm []int)) error
	threads int
}

// lowerTopK compiles topk.
func lowerTopK(in *hlo.Instruction, threads int) (kernel, bool) {
	p, ok := planTopK(in, threads)
	if !ok {
		return nil, false
	}
	return pairKernel(in.Shape, p.run), true
}

// pairKernel is the kernel of an instruction of shape, a pair of arrays
// that run computes from operand 0: into the pair the caller passes in,
// or a new one.
func pairKernel(shape hlo.Shape, run func(a, b, x *hlo.Literal) error) kernel {
	return func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil || len(out.Elements()) != 2 {
			out = newTuple(shape)
		}
		e := out.Elements()
		return out, run(e[0], e[1], ops[0])
	}
}

func planTopK(in *hlo.Instruction, threads int) (*topkPlan, bool) {
	if in.Opcode != hlo.OpTopK || len(in.Operands) != 1 || !in.Shape.IsTuple() || len(in.Shape.Tuple) != 2 {
		return nil, false
	}
	s, vs, is := in.Operands[0].Shape, in.Shape.Tuple[0], in.Shape.Tuple[1]
	r := s.Rank()
	if !plainArray(s) || !plainArray(vs) || !plainArray(is) || r == 0 || vs.DType != s.DType || is.DType != hlo.S32 ||
		vs.Rank() != r || !slices.Equal(vs.Dims, is.Dims) || !slices.Equal(vs.Dims[:r-1], s.Dims[:r-1]) {
		return nil, false
	}
	p := &topkPlan{n: int(s.Dims[r-1]), k: int(vs.Dims[r-1]), rows: 1, threads: threads}
	for _, d := range s.Dims[:r-1] {
		p.rows *= int(d)
	}
	if p.k > p.n {
		return nil, false
	}
	if p.move = sortMove(s.DType, 1); p.move == nil {
		return nil, false
	}
	largest := !in.HasAttr("largest") || in.Bool("largest")
	if c := in.Computation("to_apply"); c != nil {
		if p.keys = topkLexKeys(c, s.DType); p.keys != nil {
			return p, true
		}
		p.sorted = topkComparator(c, s.DType, p)
		return p, p.sorted != nil
	}
	p.keys = topkKeys(s.DType, largest)
	return p, p.keys != nil
}

// run writes the k first elements of every row and their indices.
func (p *topkPlan) run(vals, idxs, x *hlo.Literal) error {
	if p.rows == 0 || p.k == 0 {
		return nil
	}
	ind := idxs.Data().([]int32)
	// emit writes row's results from perm, positions in x first to last.
	emit := func(row int, perm []int) {
		base := row * p.n
		for j, q := range perm[:p.k] {
			ind[row*p.k+j] = int32(q - base)
		}
		p.move(vals, x, perm[:p.k], row*p.k)
	}
	if p.sorted != nil {
		return p.sorted(x, emit)
	}
	splitRange(p.rows, p.rows*p.n, p.threads, func(lo, hi int) {
		keys := make([]uint64, p.n)
		heap := make([]topkEntry, p.k)
		perm := make([]int, p.k)
		for row := lo; row < hi; row++ {
			p.keys(keys, x, row*p.n)
			selectTopK(keys, heap)
			for j, e := range heap {
				perm[j] = row*p.n + int(e.idx)
			}
			emit(row, perm)
		}
	})
	return nil
}

// topkEntry is a candidate: its key and its index in the row.
type topkEntry struct {
	key uint64
	idx int32
}

// worse says a goes after b: a smaller key, or an equal key later.
func worse(a, b topkEntry) bool { return a.key < b.key || a.key == b.key && a.idx > b.idx }

// selectTopK leaves in heap (of length k) the k first entries of keys,
// first to last.
func selectTopK(keys []uint64, heap []topkEntry) {
	k := len(heap)
	for i := range heap {
		heap[i] = topkEntry{keys[i], int32(i)}
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(heap, i)
	}
	for i := k; i < len(keys); i++ {
		if keys[i] > heap[0].key {
			heap[0] = topkEntry{keys[i], int32(i)}
			siftDown(heap, 0)
		}
	}
	slices.SortFunc(heap, func(a, b topkEntry) int {
		if c := cmp.Compare(b.key, a.key); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
}

// siftDown restores the min-heap (worst entry at the root) below i.
func siftDown(h []topkEntry, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && worse(h[c+1], h[c]) {
			c++
		}
		if !worse(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// topkKeys returns the function writing a row's keys (larger first) for
// element type t: the evaluator's order mapped to unsigned integers,
// complemented for largest=false.
func topkKeys(t hlo.DType, largest bool) func(dst []uint64, x *hlo.Literal, at int) {
	var flip uint64
	if !largest {
		flip = math.MaxUint64
	}
	switch t {
	case hlo.F32:
		return func(dst []uint64, x *hlo.Literal, at int) {
			for j, v := range x.Data().([]float32)[at : at+len(dst)] {
				dst[j] = floatKey(float64(v), flip)
			}
		}
	case hlo.F64:
		return func(dst []uint64, x *hlo.Literal, at int) {
			for j, v := range x.Data().([]float64)[at : at+len(dst)] {
				dst[j] = floatKey(v, flip)
			}
		}
	case hlo.Pred:
		return func(dst []uint64, x *hlo.Literal, at int) {
			for j, v := range x.Data().([]bool)[at : at+len(dst)] {
				dst[j] = flip
				if v {
					dst[j] = 1 ^ flip
				}
			}
		}
	}
	if t.IsFloat() {
		f, ok := minifloat.ByName(t.String())
		if !ok {
			return nil
		}
		// One key per bit pattern (at most 2^16).
		tab := f.Values()
		kt := make([]uint64, len(tab))
		for b, v := range tab {
			kt[b] = floatKey(v, flip)
		}
		if storageWidth(t) == 2 {
			return tableKeys[uint16](kt)
		}
		return tableKeys[uint8](kt)
	}
	// Signed values order as unsigned ones once the sign bit is flipped.
	off := flip
	if t.IsSigned() {
		off ^= 1 << 63
	}
	switch t {
	case hlo.S2, hlo.S4, hlo.S8:
		return intKeys[int8](off)
	case hlo.S16:
		return intKeys[int16](off)
	case hlo.S32:
		return intKeys[int32](off)
	case hlo.S64:
		return intKeys[int64](off)
	case hlo.U2, hlo.U4, hlo.U8:
		return intKeys[uint8](off)
	case hlo.U16:
		return intKeys[uint16](off)
	case hlo.U32:
		return intKeys[uint32](off)
	case hlo.U64:
		return intKeys[uint64](off)
	}
	return nil
}

// floatKey is the evaluator's key of a float64 value (negative values'
// bits complemented, positive ones' sign bit set), xor flip.
func floatKey(v float64, flip uint64) uint64 {
	b := math.Float64bits(v)
	return b ^ (uint64(int64(b)>>63) | 1<<63) ^ flip
}

// tableKeys looks the keys of narrow float patterns up.
func tableKeys[W uint8 | uint16](kt []uint64) func(dst []uint64, x *hlo.Literal, at int) {
	return func(dst []uint64, x *hlo.Literal, at int) {
		for j, b := range wordsOf[W](x)[at : at+len(dst)] {
			dst[j] = kt[b]
		}
	}
}

// intKeys widens integers (sign-extending signed ones) and flips them
// into unsigned order.
func intKeys[W int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](off uint64) func(dst []uint64, x *hlo.Literal, at int) {
	return func(dst []uint64, x *hlo.Literal, at int) {
		for j, v := range x.Data().([]W)[at : at+len(dst)] {
			dst[j] = uint64(int64(v)) ^ off
		}
	}
}
