package eval

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalConvert, hlo.OpConvert)
	register(evalBitcastConvert, hlo.OpBitcastConvert)
	register(evalReducePrecision, hlo.OpReducePrecision)
}

// evalConvert follows XLA's convert: float to integer truncates toward
// zero and saturates (NaN gives 0), integer narrowing wraps, float
// narrowing rounds to nearest even. The common float32/float64/int32
// pairs run a typed loop; the rest go through Literal.Convert.
func evalConvert(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	out := hlo.NewLiteral(in.Shape)
	switch s := x.Data().(type) {
	case []float32:
		switch d := out.Data().(type) {
		case []float64:
			convertT(d, s)
			return out, nil
		case []float32:
			copy(d, s)
			return out, nil
		}
	case []float64:
		switch d := out.Data().(type) {
		case []float32:
			convertT(d, s)
			return out, nil
		case []float64:
			copy(d, s)
			return out, nil
		}
	case []int32:
		switch d := out.Data().(type) {
		case []float32:
			convertT(d, s)
			return out, nil
		case []float64:
			convertT(d, s)
			return out, nil
		}
	}
	return x.Convert(in.Shape.DType)
}

func convertT[D float32 | float64, S float32 | float64 | int32](dst []D, src []S) {
	for i, v := range src {
		dst[i] = D(v)
	}
}

// evalBitcastConvert reinterprets the little-endian bytes of each element.
// Between widths, the narrower side has one more, minor-most dimension of
// size (wide width / narrow width), its index 0 the least significant part
// (operation_semantics, BitcastConvertType). A complex element is its real
// part's bytes then its imaginary part's (the StableHLO reference
// interpreter's layout), so it is handled as two words of its component
// type.
func evalBitcastConvert(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	out := hlo.NewLiteral(in.Shape)
	src, dst := bitcastWords(x), bitcastWords(out)
	wf, wt := src.width, dst.width
	switch {
	case wf == wt:
		for i := range dst.n {
			dst.set(i, src.get(i))
		}
	case wf > wt:
		k, mask := wf/wt, uint64(math.MaxUint64)>>(64-wt)
		for i := range src.n {
			b := src.get(i)
			for j := range k {
				dst.set(i*k+j, b>>(j*wt)&mask)
			}
		}
	default:
		k := wt / wf
		for i := range dst.n {
			var b uint64
			for j := range k {
				b |= src.get(i*k+j) << (j * wf)
			}
			dst.set(i, b)
		}
	}
	return out, nil
}

// words is a literal seen as a flat sequence of bit patterns of one width:
// its elements, or for complex types the real and imaginary parts in turn.
type words struct {
	n, width int
	get      func(i int) uint64
	set      func(i int, b uint64)
}

func bitcastWords(l *hlo.Literal) words {
	switch d := l.Data().(type) {
	case []complex64:
		// No float32 ↔ float64 conversion on the way: it would quiet a
		// signaling NaN's bits.
		return words{2 * len(d), 32,
			func(i int) uint64 {
				if i%2 == 0 {
					return uint64(math.Float32bits(real(d[i/2])))
				}
				return uint64(math.Float32bits(imag(d[i/2])))
			},
			func(i int, b uint64) {
				z, v := d[i/2], math.Float32frombits(uint32(b))
				if i%2 == 0 {
					d[i/2] = complex(v, imag(z))
				} else {
					d[i/2] = complex(real(z), v)
				}
			}}
	case []complex128:
		return words{2 * len(d), 64,
			func(i int) uint64 {
				if i%2 == 0 {
					return math.Float64bits(real(d[i/2]))
				}
				return math.Float64bits(imag(d[i/2]))
			},
			func(i int, b uint64) {
				z, v := d[i/2], math.Float64frombits(b)
				if i%2 == 0 {
					d[i/2] = complex(v, imag(z))
				} else {
					d[i/2] = complex(real(z), v)
				}
			}}
	}
	return words{l.Len(), l.DType().Bits(), l.Bits, l.SetBits}
}

// floatBits is the exponent and mantissa field widths of the float types
// reduce-precision works on directly.
var floatBits = map[hlo.DType][2]int{
	hlo.F64: {11, 52}, hlo.F32: {8, 23}, hlo.F16: {5, 10}, hlo.BF16: {8, 7},
}

// evalReducePrecision rounds each value to a float format with the given
// exponent and mantissa widths and back, in the operand's own bit layout:
// the mantissa rounded to nearest even, exponents beyond the narrow range
// overflowing to infinity or flushing to zero, NaN staying NaN (infinity if
// no mantissa bits are left to hold one).
func evalReducePrecision(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	eb, _ := in.Int("exponent_bits")
	mb, _ := in.Int("mantissa_bits")
	src, ok := floatBits[x.DType()]
	if !ok {
		// The f8 and f4 types: work in f32, which holds them exactly.
		wide, err := x.Convert(hlo.F32)
		if err != nil {
			return nil, err
		}
		r, err := reducePrecisionLiteral(wide, floatBits[hlo.F32], int(eb), int(mb))
		if err != nil {
			return nil, err
		}
		return r.Convert(x.DType())
	}
	return reducePrecisionLiteral(x, src, int(eb), int(mb))
}

func reducePrecisionLiteral(x *hlo.Literal, src [2]int, eb, mb int) (*hlo.Literal, error) {
	if eb < 1 || mb < 0 {
		return nil, fmt.Errorf("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got %d and %d", eb, mb)
	}
	out := hlo.NewLiteral(x.Shape())
	for i := range x.Len() {
		out.SetBits(i, reducePrecisionBits(x.Bits(i), src[0], src[1], eb, mb))
	}
	return out, nil
}

func reducePrecisionBits(x uint64, srcExp, srcMant, eb, mb int) uint64 {
	total := 1 + srcExp + srcMant
	signMask := uint64(1) << (total - 1)
	expMask := (uint64(1)<<srcExp - 1) << srcMant
	mantMask := uint64(1)<<srcMant - 1
	isNaN := x&expMask == expMask && x&mantMask != 0
	orig := x
	if mb < srcMant {
		// Round to nearest even at the new last mantissa bit; a carry out
		// of the mantissa correctly bumps the exponent.
		shift := srcMant - mb
		last := uint64(1) << shift
		bias := last>>1 - 1 + (x>>shift)&1
		x = (x + bias) &^ (last - 1)
		x &= signMask<<1 - 1
	}
	if eb < srcExp {
		srcBias := uint64(1)<<(srcExp-1) - 1
		newBias := uint64(1)<<(eb-1) - 1
		maxExp := (srcBias + newBias) << srcMant
		minExp := (srcBias - newBias) << srcMant
		e := x & expMask
		switch {
		case e > maxExp:
			x = x&signMask | expMask
		case e <= minExp:
			x &= signMask
		}
	}
	if isNaN {
		if mb > 0 {
			return orig
		}
		return orig&signMask | expMask
	}
	return x
}
