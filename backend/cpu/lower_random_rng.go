package cpu

import (
	"hash/fnv"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/axle-ml/axle/cbrng"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// rng (distribution=rng_uniform or rng_normal) has implementation-defined
// values in XLA. The kernel keeps the evaluator's distributions, types
// and range rules (uniform over [a, b) with the evaluator's redraws,
// a alone for an empty or NaN range; integers in the operands'
// signedness; normal as mu + sigma*N(0, 1)) but not its bits: the
// evaluator draws from one sequential PCG stream, which cannot be split
// among threads, and its call counter is private to it.
//
// The stream here is counter based, so every element is drawn
// independently and large outputs are filled in parallel: element i of
// the kernel's c-th execution, draw t, is the Philox-4x32-10 block at
// counter (i + t<<48, c) under the key Evaluator.Seed ^ FNV-1a(name of
// the instruction). Executions of one compiled kernel thus differ (c
// counts them, atomically, so concurrent executions differ too), two rng
// instructions of a module differ, and a fresh compilation replays the
// same values for the same Seed.

// rngDraw is what one element of an rng takes from its stream.
type rngDraw uint8

const (
	drawUniformFloat rngDraw = iota
	drawUniformInt
	drawNormal
)

// rngPlan is one rng, resolved at compile time.
type rngPlan struct {
	draw  rngDraw
	n     int
	name  uint64 // hash of the instruction's name
	calls atomic.Uint64
	// round is a float64 rounded to the element type (for the uniform
	// bound), storeF and storeU write float values or integer bit
	// patterns into the result.
	round   func(float64) float64
	storeF  func(out *hlo.Literal, at int, v []float64)
	storeU  func(out *hlo.Literal, at int, v []uint64)
	signed  bool // integer operands compare and subtract signed
	threads int
}

func lowerRng(in *hlo.Instruction, threads int) (kernel, bool) {
	p, ok := planRng(in, threads)
	if !ok {
		return nil, false
	}
	return func(ev *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil {
			out = hlo.NewLiteral(in.Shape)
		}
		var seed uint64
		if ev != nil {
			seed = ev.Seed
		}
		p.run(out, ops, seed)
		return out, nil
	}, true
}

func planRng(in *hlo.Instruction, threads int) (*rngPlan, bool) {
	if len(in.Operands) != 2 || !plainArray(in.Shape) {
		return nil, false
	}
	a, b := in.Operands[0].Shape, in.Operands[1].Shape
	if !a.IsArray() || !b.IsArray() || a.NumElements() != 1 || b.NumElements() != 1 || a.DType != b.DType {
		return nil, false
	}
	h := fnv.New64a()
	h.Write([]byte(in.Name))
	p := &rngPlan{n: int(in.Shape.NumElements()), name: h.Sum64(), threads: threads}
	t := in.Shape.DType
	dist, _ := in.EnumAttr("distribution")
	switch {
	case dist == "rng_uniform" && t.IsFloat():
		p.draw = drawUniformFloat
	case dist == "rng_uniform" && (t.IsInteger() || t.IsPred()) && (a.DType.IsInteger() || a.DType.IsPred()):
		p.draw = drawUniformInt
		p.signed = a.DType.IsSigned()
		p.storeU = bitsStore(t)
		return p, p.storeU != nil
	case dist == "rng_normal" && t.IsFloat():
		p.draw = drawNormal
	default:
		return nil, false
	}
	if !a.DType.IsFloat() && !a.DType.IsInteger() {
		return nil, false
	}
	p.round, p.storeF = floatStore(t)
	return p, p.storeF != nil
}

// floatStore returns rounding to t and the store of float64 values into
// t's elements, both as the evaluator's SetFloat64 rounds (f16 and bf16
// through float32).
func floatStore(t hlo.DType) (func(float64) float64, func(out *hlo.Literal, at int, v []float64)) {
	switch t {
	case hlo.F64:
		return func(x float64) float64 { return x }, func(out *hlo.Literal, at int, v []float64) {
			copy(out.Data().([]float64)[at:], v)
		}
	case hlo.F32:
		return func(x float64) float64 { return float64(float32(x)) }, func(out *hlo.Literal, at int, v []float64) {
			d := out.Data().([]float32)[at:]
			d = d[:len(v)]
			for i, x := range v {
				d[i] = float32(x)
			}
		}
	}
	f, ok := minifloat.ByName(t.String())
	if !ok {
		return nil, nil
	}
	tab := f.Values()
	enc := f.FromFloat64
	if t == hlo.F16 || t == hlo.BF16 {
		enc = func(x float64) uint16 { return f.FromFloat32(float32(x)) }
	}
	round := func(x float64) float64 { return tab[enc(x)] }
	switch storageWidth(t) {
	case 2:
		return round, func(out *hlo.Literal, at int, v []float64) {
			d := wordsOf[uint16](out)[at:]
			d = d[:len(v)]
			for i, x := range v {
				d[i] = enc(x)
			}
		}
	case 1:
		mask := uint16(1)<<t.Bits() - 1
		return round, func(out *hlo.Literal, at int, v []float64) {
			d := wordsOf[uint8](out)[at:]
			d = d[:len(v)]
			for i, x := range v {
				d[i] = uint8(enc(x) & mask)
			}
		}
	}
	return nil, nil
}

// bitsStore returns the store of integer bit patterns into t's
// elements, as the evaluator's SetBits: the low bits, sign-extended for
// the signed types stored one per int8, 0 or 1 for pred.
func bitsStore(t hlo.DType) func(out *hlo.Literal, at int, v []uint64) {
	sh := uint(64 - t.Bits())
	switch w := storageWidth(t); {
	case t.IsPred():
		return func(out *hlo.Literal, at int, v []uint64) {
			d := out.Data().([]bool)[at:]
			d = d[:len(v)]
			for i, x := range v {
				d[i] = x&1 != 0
			}
		}
	case w == 8:
		return func(out *hlo.Literal, at int, v []uint64) { copy(wordsOf[uint64](out)[at:], v) }
	case w == 4:
		return truncStore[uint32, uint64]
	case w == 2:
		return truncStore[uint16, uint64]
	case w == 1 && t.IsSigned():
		return func(out *hlo.Literal, at int, v []uint64) {
			d := wordsOf[uint8](out)[at:]
			d = d[:len(v)]
			for i, x := range v {
				d[i] = uint8(int64(x<<sh) >> sh)
			}
		}
	case w == 1:
		return lowBitsStore[uint8, uint64](sh)
	}
	return nil
}

// rngChunk is how many elements a worker draws before storing them.
const rngChunk = 256

// run draws every element of one execution.
func (p *rngPlan) run(out *hlo.Literal, ops []*hlo.Literal, seed uint64) {
	call := p.calls.Add(1) - 1
	key := seed ^ p.name
	k0, k1 := uint32(key), uint32(key>>32)
	s := stream{k0: k0, k1: k1, call: call}
	bg := bitGenPlan{threads: p.threads}
	switch p.draw {
	case drawUniformInt:
		lo, span := intRange(ops[0], ops[1], p.signed)
		bg.split(p.n, func(from, to int) {
			var v [rngChunk]uint64
			for i := from; i < to; i += rngChunk {
				c := v[:min(rngChunk, to-i)]
				for j := range c {
					c[j] = lo + s.below(i+j, span)
				}
				p.storeU(out, i, c)
			}
		})
	case drawUniformFloat:
		a, b := ops[0].GetFloat64(0), ops[1].GetFloat64(0)
		p.fill(out, func(i int) float64 { return s.uniform(i, a, b, p.round) })
	case drawNormal:
		mu, sigma := ops[0].GetFloat64(0), ops[1].GetFloat64(0)
		p.fill(out, func(i int) float64 { return mu + sigma*s.normal(i) })
	}
}

// fill computes every float element with draw, in parallel chunks.
func (p *rngPlan) fill(out *hlo.Literal, draw func(i int) float64) {
	bg := bitGenPlan{threads: p.threads}
	bg.split(p.n, func(from, to int) {
		var v [rngChunk]float64
		for i := from; i < to; i += rngChunk {
			c := v[:min(rngChunk, to-i)]
			for j := range c {
				c[j] = draw(i + j)
			}
			p.storeF(out, i, c)
		}
	})
}

// intRange is the evaluator's integer range: lo and the span b-a, both
// in the operands' signedness (pred is 0 or 1); an empty range has span
// 0 and gives lo.
func intRange(a, b *hlo.Literal, signed bool) (lo, span uint64) {
	if signed {
		x, y := a.GetInt64(0), b.GetInt64(0)
		if x >= y {
			return uint64(x), 0
		}
		return uint64(x), uint64(y) - uint64(x)
	}
	x, y := a.Bits(0), b.Bits(0)
	if x >= y {
		return x, 0
	}
	return x, y - x
}

// stream is one execution's counter-based stream (see the top of the
// file).
type stream struct {
	k0, k1 uint32
	call   uint64
}

// word64 is the t-th pair of 64-bit draws of element i.
func (s stream) word64(i, t int) (uint64, uint64) {
	w := cbrng.Philox4x32(cbrng.U128{Lo: uint64(i) + uint64(t)<<48, Hi: s.call}.Words(), s.k0, s.k1)
	return uint64(w[0]) | uint64(w[1])<<32, uint64(w[2]) | uint64(w[3])<<32
}

// unit is a 64-bit draw as a float64 in [0, 1), as math/rand's Float64.
func unit(x uint64) float64 { return float64(x>>11) * 0x1p-53 }

// uniform is the evaluator's uniformFloats for one element: draws
// rounding to b are redrawn (8 tries, then a).
func (s stream) uniform(i int, a, b float64, round func(float64) float64) float64 {
	if !(a < b) {
		return a
	}
	for t := range 8 {
		x, _ := s.word64(i, t)
		if v := round(a + (b-a)*unit(x)); v < b {
			return v
		}
	}
	return a
}

// normal is a standard normal draw (Box–Muller on one block's two
// 64-bit words; 1-u keeps the logarithm's argument in (0, 1]).
func (s stream) normal(i int) float64 {
	x, y := s.word64(i, 0)
	r := math.Sqrt(-2 * math.Log(1-unit(x)))
	return r * math.Cos(2*math.Pi*unit(y))
}

// below is an unbiased draw from [0, span) (0 for span 0) by Lemire's
// multiply-and-reject, the method of math/rand's Uint64N.
func (s stream) below(i int, span uint64) uint64 {
	if span == 0 {
		return 0
	}
	for t := 0; ; t++ {
		x, y := s.word64(i, t)
		for _, w := range [2]uint64{x, y} {
			// Only a low half below span can fall in the biased
			// region, so the division is rarely needed.
			if hi, lo := bits.Mul64(w, span); lo >= span || lo >= -span%span {
				return hi
			}
		}
	}
}
