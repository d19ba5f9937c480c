package cpu

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/axle-ml/axle/cbrng"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// rng-bit-generator gives the evaluator's bits exactly (eval/rng.go is
// the specification: XLA's CPU expansion of three-fry and philox, with
// rng_default meaning philox). Both generators are counter based, so the
// output is cut into ranges of blocks computed in parallel, each block
// from its own counter; the plan (algorithm, layout, how elements are
// stored) is fixed at compile time and a run allocates only its result.
//
// rng (the deprecated stateful op) lives in lower_random_rng.go.

// lowerRandom compiles rng-bit-generator and rng.
func lowerRandom(in *hlo.Instruction, threads int) (kernel, bool) {
	switch in.Opcode {
	case hlo.OpRngBitGenerator:
		return lowerRngBitGenerator(in, threads)
	case hlo.OpRng:
		return lowerRng(in, threads)
	case hlo.OpRngGetAndUpdateState:
		return lowerRngState(in)
	}
	return nil, false
}

// lowerRngState returns the execution's rng state (two words, from its
// evaluator: the state lives as long as the execution's evaluator, as
// on the interp backend) and advances it by delta.
func lowerRngState(in *hlo.Instruction) (kernel, bool) {
	if !plainArray(in.Shape) || in.Shape.NumElements() != 2 || storageWidth(in.Shape.DType) != 8 {
		return nil, false
	}
	delta, _ := in.Int("delta")
	return func(ev *runState, out *hlo.Literal, _ []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil || out.Len() != 2 {
			out = hlo.NewLiteral(in.Shape)
		}
		state := ev.RngGetAndUpdateState(delta)
		out.SetUint64(0, state[0])
		out.SetUint64(1, state[1])
		return out, nil
	}, true
}

// bitGenPlan is one rng-bit-generator, resolved at compile time.
type bitGenPlan struct {
	threefry bool
	n        int // output elements
	wide     bool
	// The three-fry halved layout of narrow output (eval's
	// threefryBits32): the split dimension of size mid is halved, outer
	// and inner are the element counts before and after it.
	outer, mid, half, inner int
	store                   func(out *hlo.Literal, at int, words []uint32)
	threads                 int
}

func lowerRngBitGenerator(in *hlo.Instruction, threads int) (kernel, bool) {
	p, ok := planBitGen(in, threads)
	if !ok {
		return nil, false
	}
	return pairKernel(in.Shape, func(a, b, x *hlo.Literal) error {
		p.run(a, b, x)
		return nil
	}), true
}

// planBitGen checks what the evaluator accepts (a 64-bit state vector of
// at least two words; bits of 64 or at most 32 bits that are neither
// pred nor complex) and fixes the layout.
func planBitGen(in *hlo.Instruction, threads int) (*bitGenPlan, bool) {
	p := &bitGenPlan{threads: threads}
	a, _ := in.EnumAttr("algorithm")
	switch strings.ToLower(string(a)) {
	case "", "rng_default", "rng_philox":
	case "rng_three_fry":
		p.threefry = true
	default:
		return nil, false
	}
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) != 2 || len(in.Operands) != 1 {
		return nil, false
	}
	st, ns, bits := in.Operands[0].Shape, in.Shape.Tuple[0], in.Shape.Tuple[1]
	if !plainArray(st) || st.Rank() != 1 || st.DType.Bits() != 64 || st.Dims[0] < 2 || st.DType.IsComplex() ||
		!plainArray(ns) || ns.DType != st.DType || !slices.Equal(ns.Dims, st.Dims) || !plainArray(bits) {
		return nil, false
	}
	t := bits.DType
	w := t.Bits()
	if t.IsPred() || t.IsComplex() || (w > 32 && w != 64) {
		return nil, false
	}
	p.n, p.wide = int(bits.NumElements()), w == 64
	if !p.wide {
		if p.store = wordStore(t); p.store == nil {
			return nil, false
		}
	}
	if p.threefry && !p.wide {
		dims := bits.Dims
		if len(dims) == 0 {
			dims = []int64{1} // a scalar is generated as [1]
		}
		s := cbrng.ThreefrySplitDim(dims)
		p.outer, p.inner = 1, 1
		for _, d := range dims[:s] {
			p.outer *= int(d)
		}
		for _, d := range dims[s+1:] {
			p.inner *= int(d)
		}
		p.mid, p.half = int(dims[s]), int(dims[s]+1)/2
	}
	return p, true
}

// wordStore returns the function writing 32-bit words into elements of
// type t from element at on: the low bits, sign-extended for the signed
// types stored one per int8 (s2, s4), as the evaluator's SetBits does.
func wordStore(t hlo.DType) func(out *hlo.Literal, at int, words []uint32) {
	sh := uint(32 - t.Bits())
	switch storageWidth(t) {
	case 4:
		return func(out *hlo.Literal, at int, words []uint32) { copy(wordsOf[uint32](out)[at:], words) }
	case 2:
		return truncStore[uint16, uint32]
	case 1:
		if t.IsSigned() {
			return func(out *hlo.Literal, at int, words []uint32) {
				d := wordsOf[uint8](out)[at:]
				d = d[:len(words)]
				for i, v := range words {
					d[i] = uint8(int32(v<<sh) >> sh)
				}
			}
		}
		return lowBitsStore[uint8, uint32](sh)
	}
	return nil
}

// truncStore stores words v into elements D wide from element at on:
// the words' low bits.
func truncStore[D uint8 | uint16 | uint32, S uint32 | uint64](out *hlo.Literal, at int, v []S) {
	d := wordsOf[D](out)[at:]
	d = d[:len(v)]
	for i, x := range v {
		d[i] = D(x)
	}
}

// lowBitsStore is truncStore for unsigned elements narrower than their
// storage (u4, u2): the word's top sh bits, above the element's, are
// cleared.
func lowBitsStore[D uint8 | uint16 | uint32, S uint32 | uint64](sh uint) func(out *hlo.Literal, at int, v []S) {
	return func(out *hlo.Literal, at int, v []S) {
		d := wordsOf[D](out)[at:]
		d = d[:len(v)]
		for i, x := range v {
			d[i] = D(x << sh >> sh)
		}
	}
}

// genChunk is how many words a worker generates before storing them.
const genChunk = 512

// minGenBlocks is the block count from which generation is split among
// the threads (tens of microseconds of work).
const minGenBlocks = 4096

// run writes the bits and the new state.
func (p *bitGenPlan) run(ns, bits, st *hlo.Literal) {
	s := wordsOf[uint64](st)
	n := wordsOf[uint64](ns)
	copy(n, s)
	key := s[0]
	if p.threefry {
		ctr := s[1]
		if p.wide {
			n[1] = p.threefry64(key, ctr, wordsOf[uint64](bits))
		} else {
			n[1] = p.threefry32(key, ctr, bits)
		}
		return
	}
	ctr := cbrng.U128{Lo: s[1], Hi: s[0]} // a two-word state: the key is the counter's high word
	if len(s) >= 3 {
		ctr.Hi = s[2]
	}
	if p.wide {
		ctr = p.philox64(key, ctr, wordsOf[uint64](bits))
	} else {
		ctr = p.philox32(key, ctr, bits)
	}
	n[1] = ctr.Lo
	if len(n) >= 3 {
		n[2] = ctr.Hi // (with two words the carry out of the low one is lost, as in XLA)
	}
}

// split runs part over [0, blocks) cut into one range per thread when
// the work is large enough.
func (p *bitGenPlan) split(blocks int, part func(lo, hi int)) {
	if p.threads <= 1 || blocks < minGenBlocks {
		part(0, blocks)
		return
	}
	t := p.threads
	kernels.Parallel(t, func(i int) { part(blocks*i/t, blocks*(i+1)/t) })
}

// threefry64: element i is block(ctr+i), low word first.
func (p *bitGenPlan) threefry64(key, ctr uint64, out []uint64) uint64 {
	k0, k1 := uint32(key), uint32(key>>32)
	p.split(len(out), func(lo, hi int) {
		i := lo
		for ; i+2 <= hi; i += 2 {
			a, b := ctr+uint64(i), ctr+uint64(i+1)
			a0, a1, b0, b1 := cbrng.Threefry2x32x2(uint32(a), uint32(a>>32), uint32(b), uint32(b>>32), k0, k1)
			out[i], out[i+1] = uint64(a0)|uint64(a1)<<32, uint64(b0)|uint64(b1)<<32
		}
		for ; i < hi; i++ {
			c := ctr + uint64(i)
			o0, o1 := cbrng.Threefry2x32(uint32(c), uint32(c>>32), k0, k1)
			out[i] = uint64(o0) | uint64(o1)<<32
		}
	})
	return ctr + uint64(len(out))
}

// threefry32 fills the halved layout: block b = (o*half+h)*inner+i is
// generated at counter ctr+b, its first word goes to split coordinate
// 2h and its second to 2h+1 (dropped past an odd end). Consecutive
// blocks fill consecutive elements of two rows, so a chunk of them is
// two contiguous stores.
func (p *bitGenPlan) threefry32(key, ctr uint64, bits *hlo.Literal) uint64 {
	k0, k1 := uint32(key), uint32(key>>32)
	blocks := p.outer * p.half * p.inner
	p.split(blocks, func(lo, hi int) {
		var w0, w1 [genChunk]uint32
		for b := lo; b < hi; {
			row, i := b/p.inner, b%p.inner
			c := min(hi-b, p.inner-i, genChunk)
			threefryRange(k0, k1, ctr+uint64(b), w0[:c], w1[:c])
			o, h := row/p.half, row%p.half
			at := (o*p.mid+2*h)*p.inner + i
			p.store(bits, at, w0[:c])
			if 2*h+1 < p.mid {
				p.store(bits, at+p.inner, w1[:c])
			}
			b += c
		}
	})
	return ctr + uint64(blocks)
}

// threefryRange puts the two words of blocks ctr, ctr+1, ... in w0, w1.
func threefryRange(k0, k1 uint32, ctr uint64, w0, w1 []uint32) {
	j := 0
	for ; j+2 <= len(w0); j += 2 {
		a, b := ctr+uint64(j), ctr+uint64(j+1)
		w0[j], w1[j], w0[j+1], w1[j+1] = cbrng.Threefry2x32x2(uint32(a), uint32(a>>32), uint32(b), uint32(b>>32), k0, k1)
	}
	for ; j < len(w0); j++ {
		c := ctr + uint64(j)
		w0[j], w1[j] = cbrng.Threefry2x32(uint32(c), uint32(c>>32), k0, k1)
	}
}

// philox32: element i is word i%4 of block ctr+i/4. Words of 32-bit
// elements are generated in place, narrower ones through a buffer.
func (p *bitGenPlan) philox32(key uint64, ctr cbrng.U128, bits *hlo.Literal) cbrng.U128 {
	k0, k1 := uint32(key), uint32(key>>32)
	blocks := (p.n + 3) / 4
	var direct []uint32
	if storageWidth(bits.Shape().DType) == 4 {
		direct = wordsOf[uint32](bits)
	}
	p.split(blocks, func(lo, hi int) {
		if direct != nil {
			kernels.PhiloxWords(k0, k1, ctr.Add(uint64(lo)), direct[4*lo:min(4*hi, p.n)])
			return
		}
		var w [genChunk]uint32
		for b := lo; b < hi; {
			c := min(hi-b, genChunk/4)
			words := w[:min(4*c, p.n-4*b)]
			kernels.PhiloxWords(k0, k1, ctr.Add(uint64(b)), words)
			p.store(bits, 4*b, words)
			b += c
		}
	})
	return ctr.Add(uint64(blocks))
}

// philox64: element i is words (0,1) of block ctr+i/2 when i is even,
// (2,3) when odd, low word first: the elements' words, low first, are
// the blocks' words in order, as philox32 lays them out (on the
// little-endian targets Axle builds for).
func (p *bitGenPlan) philox64(key uint64, ctr cbrng.U128, out []uint64) cbrng.U128 {
	k0, k1 := uint32(key), uint32(key>>32)
	blocks := (len(out) + 1) / 2
	words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(out))), 2*len(out))
	p.split(blocks, func(lo, hi int) {
		kernels.PhiloxWords(k0, k1, ctr.Add(uint64(lo)), words[4*lo:min(4*hi, len(words))])
	})
	return ctr.Add(uint64(blocks))
}
