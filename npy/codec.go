package npy

import (
	"encoding/binary"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// decode turns raw elements (row-major, e's layout) into the literal
// storage of e.dtype. len(b) is a multiple of e.size.
func decode(e elemType, b []byte) any {
	o := e.order
	switch e.dtype {
	case hlo.Pred:
		return each(b, 1, func(p []byte) bool { return p[0] != 0 })
	case hlo.S8:
		return each(b, 1, func(p []byte) int8 { return int8(p[0]) })
	case hlo.U8:
		return each(b, 1, func(p []byte) uint8 { return p[0] })
	case hlo.S16:
		return each(b, 2, func(p []byte) int16 { return int16(o.Uint16(p)) })
	case hlo.S32:
		return each(b, 4, func(p []byte) int32 { return int32(o.Uint32(p)) })
	case hlo.S64:
		return each(b, 8, func(p []byte) int64 { return int64(o.Uint64(p)) })
	case hlo.U16, hlo.F16, hlo.BF16:
		return each(b, 2, o.Uint16)
	case hlo.U32:
		return each(b, 4, o.Uint32)
	case hlo.U64:
		return each(b, 8, o.Uint64)
	case hlo.F32:
		return each(b, 4, func(p []byte) float32 { return math.Float32frombits(o.Uint32(p)) })
	case hlo.F64:
		return each(b, 8, func(p []byte) float64 { return math.Float64frombits(o.Uint64(p)) })
	case hlo.C64:
		return each(b, 8, func(p []byte) complex64 {
			return complex(math.Float32frombits(o.Uint32(p)), math.Float32frombits(o.Uint32(p[4:])))
		})
	case hlo.C128:
		return each(b, 16, func(p []byte) complex128 {
			return complex(math.Float64frombits(o.Uint64(p)), math.Float64frombits(o.Uint64(p[8:])))
		})
	}
	return nil
}

// each applies f to every size-byte element of b.
func each[T any](b []byte, size int, f func([]byte) T) []T {
	out := make([]T, len(b)/size)
	for i := range out {
		out[i] = f(b[i*size : (i+1)*size])
	}
	return out
}

// encode is the little-endian bytes of a literal's storage (data as
// Literal.Data returns it); nil for a storage type it does not know.
func encode(data any) []byte {
	le := binary.LittleEndian
	switch d := data.(type) {
	case []bool:
		return put(d, 1, func(p []byte, v bool) {
			if v {
				p[0] = 1
			}
		})
	case []int8:
		return put(d, 1, func(p []byte, v int8) { p[0] = byte(v) })
	case []uint8:
		return put(d, 1, func(p []byte, v uint8) { p[0] = v })
	case []int16:
		return put(d, 2, func(p []byte, v int16) { le.PutUint16(p, uint16(v)) })
	case []int32:
		return put(d, 4, func(p []byte, v int32) { le.PutUint32(p, uint32(v)) })
	case []int64:
		return put(d, 8, func(p []byte, v int64) { le.PutUint64(p, uint64(v)) })
	case []uint16:
		return put(d, 2, le.PutUint16)
	case []uint32:
		return put(d, 4, le.PutUint32)
	case []uint64:
		return put(d, 8, le.PutUint64)
	case []float32:
		return put(d, 4, func(p []byte, v float32) { le.PutUint32(p, math.Float32bits(v)) })
	case []float64:
		return put(d, 8, func(p []byte, v float64) { le.PutUint64(p, math.Float64bits(v)) })
	case []complex64:
		return put(d, 8, func(p []byte, v complex64) {
			le.PutUint32(p, math.Float32bits(real(v)))
			le.PutUint32(p[4:], math.Float32bits(imag(v)))
		})
	case []complex128:
		return put(d, 16, func(p []byte, v complex128) {
			le.PutUint64(p, math.Float64bits(real(v)))
			le.PutUint64(p[8:], math.Float64bits(imag(v)))
		})
	}
	return nil
}

// put writes every element of d with f, size bytes each.
func put[T any](d []T, size int, f func([]byte, T)) []byte {
	out := make([]byte, len(d)*size)
	for i, v := range d {
		f(out[i*size:(i+1)*size], v)
	}
	return out
}

// fortranToC reorders elements of size bytes from column-major order of
// dims (the first index varies fastest) to row-major order.
func fortranToC(b []byte, dims []int64, size int) []byte {
	n := len(b) / size
	if len(dims) < 2 || n == 0 {
		return b
	}
	stride := make([]int, len(dims)) // in column-major order, in elements
	s := 1
	for d := range dims {
		stride[d] = s
		s *= int(dims[d])
	}
	out := make([]byte, len(b))
	idx := make([]int, len(dims))
	from := 0 // column-major position of idx
	for i := range n {
		copy(out[i*size:(i+1)*size], b[from*size:(from+1)*size])
		for d := len(dims) - 1; d >= 0; d-- {
			idx[d]++
			from += stride[d]
			if idx[d] < int(dims[d]) {
				break
			}
			from -= idx[d] * stride[d]
			idx[d] = 0
		}
	}
	return out
}
