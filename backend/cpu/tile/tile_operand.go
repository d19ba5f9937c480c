package tile

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// What a tile program reads: its operands, f32 or narrow, tiles of them
// gathered through index maps, and values rounded to their element type.

// operand is one fusion operand: f32 values, narrow bit patterns
// decoded per tile through tab, or integers converted per tile (ints; an
// s32 one also as i32, which generated code reads).
type operand struct {
	f32    []float32
	pred   []bool // held in tiles as masks (see tile_compare.go)
	bits   []uint16
	tab    []float64
	format *minifloat.Format // an element of minifloat.All: an operand is copied per call, so small
	ints   intValues
	i32    []int32
}

func newOperand(l *hlo.Literal) (operand, error) {
	var o operand
	err := o.set(l)
	return o, err
}

// set makes o the operand of l, in place: newOperands fills its caller's
// array without copying a returned operand (those copies were a fifth of
// a scalar call).
func (o *operand) set(l *hlo.Literal) error {
	switch d := l.Data().(type) {
	case []float32:
		o.f32 = d
		return nil
	case []uint16:
		if f := minifloat.Find(l.DType().String()); f != nil {
			o.bits, o.tab, o.format = d, f.Values(), f
			return nil
		}
		if l.DType() == hlo.U16 {
			o.ints = intSlice[uint16](d)
			return nil
		}
	case []bool:
		o.pred = d
		return nil
	case []int32:
		o.ints, o.i32 = intSlice[int32](d), d
		return nil
	case []int8:
		o.ints = intSlice[int8](d)
		return nil
	case []uint8:
		o.ints = intSlice[uint8](d)
		return nil
	case []int16:
		o.ints = intSlice[int16](d)
		return nil
	case []uint32:
		o.ints = intSlice[uint32](d)
		return nil
	}
	return fmt.Errorf("fusion operand of type %s has no tile form", l.DType())
}

// tile returns elements [lo, hi) as f32, decoding into buf if narrow.
func (o *operand) tile(lo, hi int, buf []float32) []float32 {
	if o.f32 != nil {
		return o.f32[lo:hi]
	}
	if o.ints != nil {
		return o.ints.tile(lo, hi, buf)
	}
	buf = buf[:hi-lo]
	if o.pred != nil {
		for i, b := range o.pred[lo:hi] {
			buf[i] = b2f(b)
		}
		return buf
	}
	DecodeNarrow(*o.format, buf, o.bits[lo:hi])
	return buf
}

func (o *operand) at(i int) float32 {
	if o.f32 != nil {
		return o.f32[i]
	}
	if o.pred != nil {
		return b2f(o.pred[i])
	}
	if o.ints != nil {
		return o.ints.at(i)
	}
	return float32(o.tab[o.bits[i]])
}

// newOperands appends the operands of args to dst (a caller's array, so
// that a call allocates nothing).
func newOperands(dst []operand, args []*hlo.Literal) ([]operand, error) {
	for _, a := range args {
		dst = append(dst, operand{})
		if err := dst[len(dst)-1].set(a); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// gather fills dst with the operand elements of output positions lo,
// lo+1, ... through the index map. It walks the output index like an
// odometer one run of the innermost dimension at a time, and a run is a
// fill (a broadcast dimension), a copy (a contiguous one) or a strided
// loop.
func gather(src *operand, dst []float32, lo int, m affineMap) []float32 {
	dims, strides := m.dims, m.strides
	r := len(dims)
	if r == 0 {
		kernels.Fill(dst, src.at(m.off))
		return dst
	}
	// Outer dimensions that are all broadcast repeat the inner ones: gather
	// one period and copy it (a bias row over a batch, say).
	if period := m.period(); period > 0 && period < len(dst) {
		gather(src, dst[:period], lo, m)
		for n := period; n < len(dst); n *= 2 {
			copy(dst[n:], dst[:n])
		}
		return dst
	}
	var small [8]int
	idx := small[:0]
	if r > len(small) {
		idx = make([]int, r)
	}
	idx = idx[:r]
	off, rem := m.off, lo
	for d := r - 1; d >= 0; d-- {
		idx[d] = rem % dims[d]
		rem /= dims[d]
		off += idx[d] * strides[d]
	}
	inner, step := dims[r-1], strides[r-1]
	for i := 0; i < len(dst); {
		n := min(inner-idx[r-1], len(dst)-i)
		run(src, dst[i:i+n], off, step)
		i += n
		// Advance the odometer by n along the innermost dimension.
		off += n * step
		idx[r-1] += n
		for d := r - 1; d > 0 && idx[d] == dims[d]; d-- {
			off -= idx[d] * strides[d]
			idx[d] = 0
			idx[d-1]++
			off += strides[d-1]
		}
	}
	return dst
}

// run reads len(dst) operand elements from off with the given stride.
func run(src *operand, dst []float32, off, step int) {
	switch {
	case step == 0:
		kernels.Fill(dst, src.at(off))
	case step == 1 && src.f32 != nil && len(dst) <= 16:
		s := src.f32[off : off+len(dst)]
		for i := range dst {
			dst[i] = s[i]
		}
	case step == 1 && src.f32 != nil:
		copy(dst, src.f32[off:off+len(dst)])
	case src.f32 != nil:
		for i := range dst {
			dst[i] = src.f32[off]
			off += step
		}
	case step == 1 && src.bits != nil:
		// A narrow run decodes by the vector kernels (a bias, a
		// reshaped residual of an fp16 model: per element through at,
		// twelve times the f32 fusion's time).
		DecodeNarrow(*src.format, dst, src.bits[off:off+len(dst)])
	case src.bits != nil:
		for i := range dst {
			dst[i] = float32(src.tab[src.bits[off]])
			off += step
		}
	default:
		for i := range dst {
			dst[i] = src.at(off)
			off += step
		}
	}
}

// roundTo rounds f32 values to t's precision in place (nothing for f32),
// so every fused op's result is the value its element type holds.
func roundTo(t hlo.DType, v []float32) {
	switch t {
	case hlo.BF16:
		for i, x := range v {
			v[i] = roundBF16(x)
		}
	case hlo.F16:
		for i, x := range v {
			v[i] = minifloat.RoundF16(x)
		}
	}
}

// roundBF16 rounds to the nearest bf16, ties to even, keeping NaN a NaN.
func roundBF16(x float32) float32 {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return math.Float32frombits(b | 0x400000) // quiet NaN, payload's top kept
	}
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}
