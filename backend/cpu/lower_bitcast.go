package cpu

import (
	"unsafe"

	"github.com/axle-ml/axle/hlo"
)

// bitcast-convert and reduce-precision work on bit patterns.
//
// bitcast-convert between whole-byte types is a byte copy: the evaluator
// splits a wide element into little-endian parts (part 0 least
// significant) along a new minor dimension, which is the wide element's
// own memory order on a little-endian machine. reduce-precision rounds
// f64, f32, f16 and bf16 patterns in their own layout as the evaluator
// does; the 8- and 4-bit floats go through a table of all their patterns
// computed at lowering by the evaluator's route (via f32).

// littleEndian: the host stores the least significant byte first.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// lowerBitcastConvert returns a kernel for a bitcast-convert between
// whole-byte, non-complex, non-pred types, or false.
func lowerBitcastConvert(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpBitcastConvert || len(in.Operands) != 1 || !littleEndian {
		return nil, false
	}
	x := in.Operands[0].Shape
	if !plainArray(x) || !plainArray(in.Shape) || !bitcastable(x.DType) || !bitcastable(in.Shape.DType) {
		return nil, false
	}
	n := x.NumElements() * int64(x.DType.Bits())
	if n != in.Shape.NumElements()*int64(in.Shape.DType.Bits()) {
		return nil, false
	}
	size := int(n / 8)
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, src := bytesOf(out)[:size], bytesOf(ops[0])[:size]
		splitRange(size, size, threads, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
		return nil
	}, true
}

// bitcastable: t's elements are whole bytes stored as their bit pattern.
func bitcastable(t hlo.DType) bool {
	w := t.Bits()
	return !t.IsPred() && !t.IsComplex() && w%8 == 0 && storageWidth(t) == w/8
}

// precision is reduce-precision's rounding of one source format.
type precision struct {
	signMask, expMask, mantMask uint64
	// rounding (mb < srcMant): keep the bits above shift, to nearest even
	round       bool
	shift       uint
	last        uint64
	clampExp    bool // eb < srcExp
	maxE, minE  uint64
	nanKeepsBit bool // mb > 0: a NaN keeps its pattern
}

func newPrecision(srcExp, srcMant, eb, mb int) precision {
	total := 1 + srcExp + srcMant
	p := precision{
		signMask: uint64(1) << (total - 1),
		expMask:  (uint64(1)<<srcExp - 1) << srcMant,
		mantMask: uint64(1)<<srcMant - 1,
		round:    mb < srcMant, clampExp: eb < srcExp, nanKeepsBit: mb > 0,
	}
	if p.round {
		p.shift = uint(srcMant - mb)
		p.last = uint64(1) << p.shift
	}
	if p.clampExp {
		srcBias := uint64(1)<<(srcExp-1) - 1
		newBias := uint64(1)<<(eb-1) - 1
		p.maxE = (srcBias + newBias) << srcMant
		p.minE = (srcBias - newBias) << srcMant
	}
	return p
}

// apply is the evaluator's reducePrecisionBits.
func (p *precision) apply(x uint64) uint64 {
	isNaN := x&p.expMask == p.expMask && x&p.mantMask != 0
	if isNaN {
		if p.nanKeepsBit {
			return x
		}
		return x&p.signMask | p.expMask
	}
	if p.round {
		bias := p.last>>1 - 1 + (x>>p.shift)&1
		x = (x + bias) &^ (p.last - 1)
		x &= p.signMask<<1 - 1
	}
	if p.clampExp {
		switch e := x & p.expMask; {
		case e > p.maxE:
			x = x&p.signMask | p.expMask
		case e <= p.minE:
			x &= p.signMask
		}
	}
	return x
}

// lowerReducePrecision returns a kernel for reduce-precision of a float
// type, or false.
func lowerReducePrecision(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpReducePrecision || len(in.Operands) != 1 {
		return nil, false
	}
	x := in.Operands[0].Shape
	t := x.DType
	eb, ok1 := in.Int("exponent_bits")
	mb, ok2 := in.Int("mantissa_bits")
	if !ok1 || !ok2 || eb < 1 || mb < 0 || !plainArray(x) || !plainArray(in.Shape) || in.Shape.DType != t || !t.IsFloat() {
		return nil, false
	}
	switch t {
	case hlo.F64:
		return precisionKernel[uint64](newPrecision(11, 52, int(eb), int(mb)), threads), true
	case hlo.F32:
		return precisionKernel[uint32](newPrecision(8, 23, int(eb), int(mb)), threads), true
	case hlo.F16:
		return precisionKernel[uint16](newPrecision(5, 10, int(eb), int(mb)), threads), true
	case hlo.BF16:
		return precisionKernel[uint16](newPrecision(8, 7, int(eb), int(mb)), threads), true
	}
	if storageWidth(t) != 1 {
		return nil, false
	}
	tab, ok := precisionTable(t, newPrecision(8, 23, int(eb), int(mb)))
	if !ok {
		return nil, false
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, src := wordsOf[uint8](out), wordsOf[uint8](ops[0])
		splitRange(len(dst), len(dst), threads, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dst[i] = tab[src[i]]
			}
		})
		return nil
	}, true
}

func precisionKernel[W uint16 | uint32 | uint64](p precision, threads int) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, src := wordsOf[W](out), wordsOf[W](ops[0])
		splitRange(len(dst), len(dst), threads, func(lo, hi int) {
			q := p
			for i := lo; i < hi; i++ {
				dst[i] = W(q.apply(uint64(src[i])))
			}
		})
		return nil
	}
}

// precisionTable is the result of every byte pattern of a one-byte float
// type t, by the evaluator's route: widen to f32, round, convert back.
func precisionTable(t hlo.DType, p precision) (*[256]uint8, bool) {
	var tab [256]uint8
	l := hlo.NewLiteral(hlo.ArrayShape(t, 256))
	for b := range 256 {
		l.SetBits(b, uint64(b))
	}
	wide, err := l.Convert(hlo.F32)
	if err != nil {
		return nil, false
	}
	for i := range 256 {
		wide.SetBits(i, p.apply(wide.Bits(i)))
	}
	back, err := wide.Convert(t)
	if err != nil {
		return nil, false
	}
	raw := wordsOf[uint8](back)
	for b := range 256 {
		// The storage byte b holds the pattern SetBits kept of b.
		tab[b] = raw[b]
	}
	return &tab, true
}
