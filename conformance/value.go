package conformance

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Literal decodes the value into a literal: row-major, little-endian
// elements of the element type's width (pred one byte).
func (v Value) Literal() (*hlo.Literal, error) {
	if v.IsTuple {
		elems := make([]*hlo.Literal, len(v.Tuple))
		for i, e := range v.Tuple {
			l, err := e.Literal()
			if err != nil {
				return nil, fmt.Errorf("tuple element %d: %w", i, err)
			}
			elems[i] = l
		}
		return hlo.MakeTupleLiteral(elems...), nil
	}
	sh, err := hlotext.ParseShape(v.Shape)
	if err != nil {
		return nil, fmt.Errorf("shape %q: %w", v.Shape, err)
	}
	data, err := base64.StdEncoding.DecodeString(v.Data)
	if err != nil {
		return nil, fmt.Errorf("data of %s: %w", v.Shape, err)
	}
	width := byteWidth(sh.DType)
	if width == 0 {
		return nil, fmt.Errorf("element type %s has no byte encoding in the case format", sh.DType)
	}
	n := int(sh.NumElements())
	if len(data) != n*width {
		return nil, fmt.Errorf("%s needs %d bytes of data, got %d", v.Shape, n*width, len(data))
	}
	lit := hlo.NewLiteral(sh)
	for i := 0; i < n; i++ {
		b := data[i*width : (i+1)*width]
		switch sh.DType {
		case hlo.C64:
			re := math.Float32frombits(binary.LittleEndian.Uint32(b))
			im := math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
			lit.SetComplex128(i, complex(float64(re), float64(im)))
		case hlo.C128:
			re := math.Float64frombits(binary.LittleEndian.Uint64(b))
			im := math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
			lit.SetComplex128(i, complex(re, im))
		default:
			var bits uint64
			for k := width - 1; k >= 0; k-- {
				bits = bits<<8 | uint64(b[k])
			}
			lit.SetBits(i, bits)
		}
	}
	return lit, nil
}

// byteWidth is the encoded size of one element; 0 for types the case
// format does not encode.
func byteWidth(t hlo.DType) int {
	switch t {
	case hlo.Pred, hlo.S8, hlo.U8:
		return 1
	case hlo.S16, hlo.U16, hlo.F16, hlo.BF16:
		return 2
	case hlo.S32, hlo.U32, hlo.F32:
		return 4
	case hlo.S64, hlo.U64, hlo.F64, hlo.C64:
		return 8
	case hlo.C128:
		return 16
	}
	if t.IsF8() {
		return 1
	}
	return 0
}
