package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/axle-ml/axle/cbrng"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalRngBitGenerator, hlo.OpRngBitGenerator)
	register(evalRng, hlo.OpRng)
}

// ---- rng-bit-generator ----------------------------------------------------
//
// XLA's CPU and GPU backends lower rng-bit-generator with
// RngBitGeneratorExpander (rng_default becomes rng_philox there) into the
// generators of xla/hlo/builder/lib/prng.cc. This file reproduces their
// bits exactly:
//
// State. The operand is u64[n]; state[0] is always the 64-bit key, split
// into 32-bit key words k0 = low half, k1 = high half. The new state keeps
// the key and advances the counter:
//
//   - three-fry: the counter is state[1] (64 bits). It is split into
//     counter words x0 = low half, x1 = high half.
//   - philox, n >= 3: the counter is the 128-bit number state[1] (low) +
//     state[2]<<64, carries included; the new state is [key, low, high].
//   - philox, n == 2: XLA reverses the state, so the counter's low word is
//     state[1] and its high word is the key state[0]; only the low word is
//     written back (a carry out of it is lost, as in XLA).
//
// Layout of three-fry output:
//
//   - 64-bit elements: element i (row-major) is block(counter + i),
//     out0 | out1<<32; the counter advances by the element count.
//   - 32-bit and narrower elements: the shape is halved along a split
//     dimension (the first even one, else the first largest; a scalar is
//     treated as [1]); half-shape element h gets block(counter + h) and
//     its out0 goes to split coordinate 2*h_s, out1 to 2*h_s+1 (dropped
//     past an odd end). The counter advances by the half-shape's element
//     count. Narrower elements keep the low bits of the 32-bit value.
//
// Layout of philox output (blocks are 4 words of 32 bits):
//
//   - 32-bit and narrower: ceil(n/4) blocks at counters counter+0,
//     counter+1, ...; element i is word i%4 of block i/4 (truncated to
//     the element width).
//   - 64-bit: ceil(n/2) blocks; element i is block i/2's words (0,1) when
//     i is even, (2,3) when odd, low word first.
//   - The counter advances by the number of blocks.

func split64(v uint64) (lo, hi uint32) { return uint32(v), uint32(v >> 32) }

// threefryBits64 fills out from consecutive counters.
func threefryBits64(key, ctr uint64, out []uint64) uint64 {
	k0, k1 := split64(key)
	for i := range out {
		x0, x1 := split64(ctr + uint64(i))
		o0, o1 := cbrng.Threefry2x32(x0, x1, k0, k1)
		out[i] = uint64(o0) | uint64(o1)<<32
	}
	return ctr + uint64(len(out))
}

// threefryBits32 fills out (row-major over dims) by the halved layout.
func threefryBits32(key, ctr uint64, dims []int64, out []uint32) uint64 {
	k0, k1 := split64(key)
	if len(dims) == 0 {
		dims = []int64{1} // a scalar is generated as [1] and keeps out0
	}
	s := cbrng.ThreefrySplitDim(dims)
	outer, inner := 1, 1
	for _, n := range dims[:s] {
		outer *= int(n)
	}
	for _, n := range dims[s+1:] {
		inner *= int(n)
	}
	mid, half := int(dims[s]), int(dims[s]+1)/2
	for o := range outer {
		for h := range half {
			for i := range inner {
				x0, x1 := split64(ctr + uint64((o*half+h)*inner+i))
				o0, o1 := cbrng.Threefry2x32(x0, x1, k0, k1)
				out[(o*mid+2*h)*inner+i] = o0
				if 2*h+1 < mid {
					out[(o*mid+2*h+1)*inner+i] = o1
				}
			}
		}
	}
	return ctr + uint64(outer*half*inner)
}

// philoxBits32 fills out with the words of consecutive blocks. Blocks
// are independent (Philox is counter-based), so a large output (a dropout
// mask) is filled by two goroutines, with the same bits.
func philoxBits32(key uint64, ctr cbrng.U128, out []uint32) cbrng.U128 {
	k0, k1 := split64(key)
	blocks := (len(out) + 3) / 4
	full := len(out) / 4 // blocks whose four words all land in out
	fill := func(from, to int) {
		b := from
		for ; b+2 <= min(to, full); b += 2 {
			w, v := cbrng.Philox4x32x2(ctr.Add(uint64(b)).Words(), ctr.Add(uint64(b+1)).Words(), k0, k1)
			o := out[4*b : 4*b+8 : 4*b+8]
			o[0], o[1], o[2], o[3] = w[0], w[1], w[2], w[3]
			o[4], o[5], o[6], o[7] = v[0], v[1], v[2], v[3]
		}
		for ; b < to; b++ {
			w := cbrng.Philox4x32(ctr.Add(uint64(b)).Words(), k0, k1)
			copy(out[4*b:], w[:min(4, len(out)-4*b)])
		}
	}
	if blocks < parallelBlocks {
		fill(0, blocks)
	} else {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { fill(0, blocks/2); wg.Done() }()
		fill(blocks/2, blocks)
		wg.Wait()
	}
	return ctr.Add(uint64(blocks))
}

// parallelBlocks is the Philox block count from which two goroutines
// share the work (about a millisecond of it).
const parallelBlocks = 1 << 15

// philoxBits64 fills out with word pairs of consecutive blocks.
func philoxBits64(key uint64, ctr cbrng.U128, out []uint64) cbrng.U128 {
	k0, k1 := split64(key)
	blocks := (len(out) + 1) / 2
	for b := range blocks {
		w := cbrng.Philox4x32(ctr.Add(uint64(b)).Words(), k0, k1)
		out[2*b] = uint64(w[0]) | uint64(w[1])<<32
		if 2*b+1 < len(out) {
			out[2*b+1] = uint64(w[2]) | uint64(w[3])<<32
		}
	}
	return ctr.Add(uint64(blocks))
}

// rngAlgorithm resolves the algorithm attribute; rng_default is philox,
// as on XLA's CPU and GPU backends.
func rngAlgorithm(in *hlo.Instruction) (string, error) {
	a, _ := in.EnumAttr("algorithm")
	switch strings.ToLower(string(a)) {
	case "", "rng_default", "rng_philox":
		return "philox", nil
	case "rng_three_fry":
		return "three_fry", nil
	}
	return "", fmt.Errorf("rng-bit-generator algorithm %q: %w", a, ErrUnimplemented)
}

func evalRngBitGenerator(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	alg, err := rngAlgorithm(in)
	if err != nil {
		return nil, err
	}
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) != 2 {
		return nil, fmt.Errorf("rng-bit-generator result %s is not (state, bits)", in.Shape)
	}
	st := ops[0]
	if st.Shape().Rank() != 1 || st.DType().Bits() != 64 || st.Len() < 2 {
		return nil, fmt.Errorf("rng-bit-generator state %s must be a 64-bit vector of at least 2 elements", st.Shape())
	}
	data := hlo.NewLiteral(in.Shape.Tuple[1])
	newState := st.Clone()
	w := data.DType().Bits()
	if !data.Shape().IsArray() || data.DType().IsPred() || data.DType().IsComplex() || (w > 32 && w != 64) {
		return nil, fmt.Errorf("rng-bit-generator of %s: %w", data.Shape(), ErrUnimplemented)
	}
	key := st.Bits(0)
	if w == 64 {
		out := make([]uint64, data.Len())
		rngFill64(alg, key, st, newState, out)
		storeBits64(data, out)
	} else if out, ok := data.Data().([]uint32); ok {
		rngFill32(alg, key, st, newState, data.Shape().Dims, out) // in place
	} else {
		out := make([]uint32, data.Len())
		rngFill32(alg, key, st, newState, data.Shape().Dims, out)
		storeBits32(data, out)
	}
	return hlo.MakeTupleLiteral(newState, data), nil
}

// philoxCounter reads the 128-bit counter (see the state notes above).
func philoxCounter(st *hlo.Literal) cbrng.U128 {
	if st.Len() >= 3 {
		return cbrng.U128{Lo: st.Bits(1), Hi: st.Bits(2)}
	}
	return cbrng.U128{Lo: st.Bits(1), Hi: st.Bits(0)}
}

func writePhiloxCounter(ns *hlo.Literal, c cbrng.U128) {
	ns.SetBits(1, c.Lo)
	if ns.Len() >= 3 {
		ns.SetBits(2, c.Hi)
	}
}

func rngFill32(alg string, key uint64, st, ns *hlo.Literal, dims []int64, out []uint32) {
	if alg == "three_fry" {
		ns.SetBits(1, threefryBits32(key, st.Bits(1), dims, out))
		return
	}
	writePhiloxCounter(ns, philoxBits32(key, philoxCounter(st), out))
}

func rngFill64(alg string, key uint64, st, ns *hlo.Literal, out []uint64) {
	if alg == "three_fry" {
		ns.SetBits(1, threefryBits64(key, st.Bits(1), out))
		return
	}
	writePhiloxCounter(ns, philoxBits64(key, philoxCounter(st), out))
}

// storeBits32 writes 32-bit patterns; narrower types keep the low bits
// (XLA converts u32 to the unsigned type of the width, which truncates).
func storeBits32(l *hlo.Literal, b []uint32) {
	switch d := l.Data().(type) {
	case []uint32:
		copy(d, b)
	case []int32:
		for i, v := range b {
			d[i] = int32(v)
		}
	case []float32:
		for i, v := range b {
			d[i] = math.Float32frombits(v)
		}
	default:
		for i, v := range b {
			l.SetBits(i, uint64(v))
		}
	}
}

func storeBits64(l *hlo.Literal, b []uint64) {
	switch d := l.Data().(type) {
	case []uint64:
		copy(d, b)
	case []int64:
		for i, v := range b {
			d[i] = int64(v)
		}
	case []float64:
		for i, v := range b {
			d[i] = math.Float64frombits(v)
		}
	default:
		for i, v := range b {
			l.SetBits(i, v)
		}
	}
}

// ---- rng ------------------------------------------------------------------
//
// rng's values are implementation-defined. Each rng evaluation draws from
// its own PCG stream keyed by the Evaluator's Seed and the number of rng
// evaluations that Evaluator has done before, so a run is reproducible
// from the Seed while repeated evaluations (a loop body) differ.

func (e *Evaluator) rngStream() *rand.Rand {
	n := e.rngCalls
	e.rngCalls++
	return rand.New(rand.NewPCG(e.Seed, n^0x9E3779B97F4A7C15))
}

func evalRng(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) != 2 || ops[0].Len() != 1 || ops[1].Len() != 1 {
		return nil, fmt.Errorf("rng takes two scalar operands")
	}
	out := hlo.NewLiteral(in.Shape)
	t := out.DType()
	dist, _ := in.EnumAttr("distribution")
	r := e.rngStream()
	switch {
	case dist == "rng_uniform" && t.IsFloat():
		uniformFloats(out, ops[0].GetFloat64(0), ops[1].GetFloat64(0), r)
	case dist == "rng_uniform" && !t.IsComplex():
		uniformInts(out, ops[0], ops[1], r)
	case dist == "rng_normal" && t.IsFloat():
		mu, sigma := ops[0].GetFloat64(0), ops[1].GetFloat64(0)
		for i := range out.Len() {
			out.SetFloat64(i, mu+sigma*r.NormFloat64())
		}
	default:
		return nil, fmt.Errorf("rng %s of %s: %w", dist, t, ErrUnimplemented)
	}
	return out, nil
}

// uniformFloats draws from [a, b). Rounding a + (b-a)*u to the element
// type can reach b; such draws are redrawn (a few tries, then a), so the
// half-open bound holds in every type.
func uniformFloats(out *hlo.Literal, a, b float64, r *rand.Rand) {
	for i := range out.Len() {
		out.SetFloat64(i, a)
		if !(a < b) {
			continue // empty or NaN range: a, as XLA's evaluator
		}
		for try := 0; try < 8; try++ {
			out.SetFloat64(i, a+(b-a)*r.Float64())
			if out.GetFloat64(i) < b {
				break
			}
			out.SetFloat64(i, a)
		}
	}
}

// uniformInts draws from [a, b) (a alone when the range is empty),
// comparing and subtracting in the operands' signedness; pred counts as
// 0 and 1.
func uniformInts(out, lo, hi *hlo.Literal, r *rand.Rand) {
	a, b := lo.Bits(0), hi.Bits(0)
	if !lo.DType().IsUnsigned() && !lo.DType().IsPred() {
		a, b = uint64(lo.GetInt64(0)), uint64(hi.GetInt64(0))
		if int64(a) >= int64(b) {
			b = a
		}
	} else if a >= b {
		b = a
	}
	span := b - a
	for i := range out.Len() {
		v := a
		if span > 0 {
			v += r.Uint64N(span)
		}
		out.SetBits(i, v)
	}
}
