package cpu

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// Convert follows hlo.Literal.Convert, the evaluator's rules: float to
// integer truncates toward zero and saturates (NaN gives 0), integers wrap,
// anything to pred is "non-zero", and f16/bf16 results are rounded from
// float32 (integers and f64 go through float32 first, as Eigen does).
// Go's own conversions give exactly these results for every other pair,
// so one generic cast per (source, destination) storage type does the work.

// number is the storage of the convertible types other than pred.
type number interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// numberMakers are a generic kernel maker's instantiations over
// number's types (nil: a type it does not take).
type numberMakers[P, K any] struct {
	f32, f64          func(P) K
	s8, s16, s32, s64 func(P) K
	u8, u16, u32, u64 func(P) K
}

// of applies to p the instantiation for elements of type t, or reports
// false.
func (m numberMakers[P, K]) of(t hlo.DType, p P) (K, bool) {
	pick := map[hlo.DType]func(P) K{hlo.F32: m.f32, hlo.F64: m.f64, hlo.S8: m.s8, hlo.S16: m.s16, hlo.S32: m.s32,
		hlo.S64: m.s64, hlo.U8: m.u8, hlo.U16: m.u16, hlo.U32: m.u32, hlo.U64: m.u64}[t]
	if pick == nil {
		var none K
		return none, false
	}
	return pick(p), true
}

// convPlan is what a conversion needs beyond the storage types.
type convPlan struct {
	srcTab []float64        // decodes a narrow-float source's bits
	dstFmt minifloat.Format // encodes a narrow-float destination
	narrow bool             // the destination is f16/bf16
	sat    bool             // float to integer: saturate
	signed bool             // the saturated destination is signed
	lo, hi float64          // its range, as floats, for the comparisons
	loI    int64            // and as integers
	hiI    int64
	hiU    uint64
}

// convertible are the element types whose storage holds them as plain
// values (or f16/bf16 bits); narrow integers, f8 and complex types fall
// back to the evaluator.
func convertible(t hlo.DType) bool {
	switch t {
	case hlo.Pred, hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U8, hlo.U16, hlo.U32, hlo.U64,
		hlo.F16, hlo.BF16, hlo.F32, hlo.F64:
		return true
	}
	return false
}

func narrowFloat(t hlo.DType) (minifloat.Format, bool) {
	switch t {
	case hlo.F16:
		return minifloat.F16, true
	case hlo.BF16:
		return minifloat.BF16, true
	}
	return minifloat.Format{}, false
}

// lowerConvert returns a kernel for convert between the convertible types.
func lowerConvert(in *hlo.Instruction) (kernelFunc, bool) {
	if len(in.Operands) != 1 {
		return nil, false
	}
	from, to := in.Operands[0].Shape.DType, in.Shape.DType
	if !plainArray(in.Shape) || !plainArray(in.Operands[0].Shape) || !in.Shape.SameDims(in.Operands[0].Shape) ||
		!convertible(from) || !convertible(to) {
		return nil, false
	}
	if from == to {
		p := &program{boxes: []box{newBox(0, []int64{in.Shape.NumElements()}, []int{1}, []int{1})}}
		return p.compile(to)
	}
	c := &convPlan{}
	if f, ok := narrowFloat(from); ok {
		c.srcTab = f.Values()
	}
	c.dstFmt, c.narrow = narrowFloat(to)
	if from.IsFloat() && to.IsInteger() {
		c.sat, c.signed = true, to.IsSigned()
		bits := to.Bits()
		if c.signed {
			c.loI, c.hiI = -1<<(bits-1), 1<<(bits-1)-1
			c.lo, c.hi = float64(c.loI), float64(c.hiI)
		} else {
			c.hiU = math.MaxUint64 >> (64 - bits)
			c.hi = float64(c.hiU)
		}
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c.run(out.Data(), ops[0].Data())
		return nil
	}, true
}

// decodeChunk bounds the float64 buffer a narrow source is decoded into.
const decodeChunk = 256

func (c *convPlan) run(dst, src any) {
	switch s := src.(type) {
	case []bool:
		convertFrom(dst, 0, unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), c)
	case []int8:
		convertFrom(dst, 0, s, c)
	case []int16:
		convertFrom(dst, 0, s, c)
	case []int32:
		convertFrom(dst, 0, s, c)
	case []int64:
		convertFrom(dst, 0, s, c)
	case []uint8:
		if d, ok := dst.([]float32); ok && !c.sat {
			kernels.U8ToF32(d, s)
			return
		}
		convertFrom(dst, 0, s, c)
	case []uint16:
		if c.srcTab == nil {
			convertFrom(dst, 0, s, c)
			return
		}
		var buf [decodeChunk]float64
		for at := 0; at < len(s); at += decodeChunk {
			part := s[at:min(at+decodeChunk, len(s))]
			for i, b := range part {
				buf[i] = c.srcTab[b]
			}
			convertFrom(dst, at, buf[:len(part)], c)
		}
	case []uint32:
		convertFrom(dst, 0, s, c)
	case []uint64:
		convertFrom(dst, 0, s, c)
	case []float32:
		convertFrom(dst, 0, s, c)
	case []float64:
		convertFrom(dst, 0, s, c)
	}
}

// convertFrom converts src into dst[off:off+len(src)].
func convertFrom[S number](dst any, off int, src []S, c *convPlan) {
	switch d := dst.(type) {
	case []bool:
		d = d[off : off+len(src)]
		for i, v := range src {
			d[i] = v != 0 // NaN too
		}
	case []int8:
		castInto(d[off:], src, c)
	case []int16:
		castInto(d[off:], src, c)
	case []int32:
		castInto(d[off:], src, c)
	case []int64:
		castInto(d[off:], src, c)
	case []uint8:
		castInto(d[off:], src, c)
	case []uint16:
		if !c.narrow {
			castInto(d[off:], src, c)
			return
		}
		d = d[off : off+len(src)]
		for i, v := range src {
			d[i] = c.dstFmt.FromFloat32(float32(v))
		}
	case []uint32:
		castInto(d[off:], src, c)
	case []uint64:
		castInto(d[off:], src, c)
	case []float32:
		castInto(d[off:], src, c)
	case []float64:
		castInto(d[off:], src, c)
	}
}

func castInto[D, S number](dst []D, src []S, c *convPlan) {
	dst = dst[:len(src)]
	if !c.sat {
		for i, v := range src {
			dst[i] = D(v)
		}
		return
	}
	for i, v := range src {
		x := float64(v)
		switch {
		case x != x:
			dst[i] = 0
		case x >= c.hi:
			if c.signed {
				dst[i] = D(c.hiI)
			} else {
				dst[i] = D(c.hiU)
			}
		case c.signed && x <= c.lo:
			dst[i] = D(c.loI)
		case !c.signed && x <= 0:
			dst[i] = 0
		case c.signed:
			dst[i] = D(int64(x))
		default:
			dst[i] = D(uint64(x))
		}
	}
}

// lowerConvertAny converts between the types lowerConvert leaves out
// (sub-byte integers, f4 and other narrow floats, complex to real) with
// the literal library's conversion, the one the evaluator calls for
// them: the same bits, one allocation per call. Those types are rare
// enough that a faster path has not paid.
func lowerConvertAny(in *hlo.Instruction) (kernelFunc, bool) {
	if in.Opcode != hlo.OpConvert || len(in.Operands) != 1 || !plainArray(in.Shape) ||
		!plainArray(in.Operands[0].Shape) || !in.Shape.SameDims(in.Operands[0].Shape) || in.Shape.IsDynamic() {
		return nil, false
	}
	t := in.Shape.DType
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		l, err := ops[0].Convert(t)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		if l.Len() != out.Len() || !sameStorageType(l, out) {
			return fmt.Errorf("%s: converted storage does not match %s", in.Name, in.Shape)
		}
		copyLanes(out, l, nil)
		return nil
	}, true
}

// sameStorageType reports whether a and b store their elements alike.
func sameStorageType(a, b *hlo.Literal) bool {
	return reflect.TypeOf(a.Data()) == reflect.TypeOf(b.Data())
}
