package minifloat

import "math"

// Slice conversions, for kernels that compute narrow floats in f32. bf16
// takes a fast path (it is f32's top half: decoding is a shift, encoding
// rounds the bit pattern), every other format goes through Values and
// FromFloat32, so both give exactly the per-element results.

// DecodeFloat32 sets dst[i] to the value of src[i] (len(dst) >= len(src)).
func (f Format) DecodeFloat32(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	if f == BF16 {
		for i, b := range src {
			dst[i] = math.Float32frombits(uint32(b) << 16)
		}
		return
	}
	if f == F16 {
		for i, b := range src {
			dst[i] = f16ToF32(b)
		}
		return
	}
	tab := f.Values()
	for i, b := range src {
		dst[i] = float32(tab[b])
	}
}

// EncodeFloat32 sets dst[i] to src[i] rounded to f, nearest even (len(dst)
// >= len(src)).
func (f Format) EncodeFloat32(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	if f == F16 {
		for i, v := range src {
			dst[i] = f32ToF16(v)
		}
		return
	}
	if f != BF16 {
		for i, v := range src {
			dst[i] = f.FromFloat32(v)
		}
		return
	}
	for i, v := range src {
		if v != v {
			dst[i] = BF16.FromFloat32(v) // the canonical NaN
			continue
		}
		b := math.Float32bits(v)
		dst[i] = uint16((b + 0x7fff + (b>>16)&1) >> 16)
	}
}
