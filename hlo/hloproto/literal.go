package hloproto

import (
	"encoding/binary"
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// literalToProto converts a literal as XLA's LiteralProto holds it: the
// elements in row-major order, one repeated field or byte string per
// element type (16-bit types little-endian, sub-byte types one per byte).
// An elided literal has its shape and no data.
func literalToProto(l *hlo.Literal) (*LiteralProto, error) {
	sp, err := shapeToProto(l.Shape())
	if err != nil {
		return nil, err
	}
	p := &LiteralProto{Shape: sp}
	for _, e := range l.Elements() {
		ep, err := literalToProto(e)
		if err != nil {
			return nil, err
		}
		p.TupleLiterals = append(p.TupleLiterals, ep)
	}
	if l.IsElided() || !l.Shape().IsArray() {
		return p, nil
	}
	t := l.DType()
	switch d := l.Data().(type) {
	case []bool:
		p.Preds = d
	case []int8:
		b := make([]byte, len(d))
		for i, v := range d {
			b[i] = byte(v)
		}
		*bytesField(p, t) = b
	case []uint8:
		*bytesField(p, t) = append([]byte{}, d...)
	case []int16:
		b := make([]byte, 2*len(d))
		for i, v := range d {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
		p.S16S = b
	case []uint16:
		b := make([]byte, 2*len(d))
		for i, v := range d {
			binary.LittleEndian.PutUint16(b[2*i:], v)
		}
		*bytesField(p, t) = b
	case []int32:
		p.S32S = d
	case []int64:
		p.S64S = d
	case []uint32:
		p.U32S = d
	case []uint64:
		p.U64S = d
	case []float32:
		p.F32S = d
	case []float64:
		p.F64S = d
	case []complex64:
		for _, v := range d {
			p.C64S = append(p.C64S, real(v), imag(v))
		}
	case []complex128:
		for _, v := range d {
			p.C128S = append(p.C128S, real(v), imag(v))
		}
	default:
		return nil, fmt.Errorf("literal of %s has no storage Axle can write", l.Shape())
	}
	return p, nil
}

// bytesField is the byte-string field of LiteralProto for t; a dummy for a
// type with none.
func bytesField(p *LiteralProto, t hlo.DType) *[]byte {
	switch t {
	case hlo.S2:
		return &p.S2S
	case hlo.S4:
		return &p.S4S
	case hlo.S8:
		return &p.S8S
	case hlo.U2:
		return &p.U2S
	case hlo.U4:
		return &p.U4S
	case hlo.U8:
		return &p.U8S
	case hlo.U16:
		return &p.U16S
	case hlo.F16:
		return &p.F16S
	case hlo.BF16:
		return &p.Bf16S
	case hlo.F8E4M3FN:
		return &p.F8E4M3Fns
	case hlo.F8E5M2:
		return &p.F8E5M2S
	case hlo.F8E4M3FNUZ:
		return &p.F8E4M3Fnuzs
	case hlo.F8E5M2FNUZ:
		return &p.F8E5M2Fnuzs
	case hlo.F8E4M3B11FNUZ:
		return &p.F8E4M3B11Fnuzs
	case hlo.F8E3M4:
		return &p.F8E3M4S
	case hlo.F8E4M3:
		return &p.F8E4M3S
	case hlo.F8E8M0FNU:
		return &p.F8E8M0Fnus
	case hlo.F4E2M1FN:
		return &p.F4E2M1Fns
	}
	var none []byte
	return &none
}

// literalFromProto converts a LiteralProto; an array with elements but no
// data is read as elided (what Axle writes for `{...}`).
func literalFromProto(p *LiteralProto, where string) (*hlo.Literal, error) {
	s, err := shapeFromProto(p.Shape, where+" literal")
	if err != nil {
		return nil, err
	}
	if s.IsTuple() {
		if len(p.TupleLiterals) != len(s.Tuple) {
			return nil, fmt.Errorf("%s: literal has %d tuple_literals for a %d-tuple", where, len(p.TupleLiterals), len(s.Tuple))
		}
		elems := make([]*hlo.Literal, len(s.Tuple))
		for i, e := range p.TupleLiterals {
			if elems[i], err = literalFromProto(e, fmt.Sprintf("%s element %d", where, i)); err != nil {
				return nil, err
			}
		}
		return hlo.MakeTupleLiteral(elems...), nil
	}
	if !s.IsArray() {
		return hlo.NewLiteral(s), nil
	}
	if s.IsUnbounded() {
		return nil, fmt.Errorf("%s: literal shape %s has an unbounded dimension", where, s)
	}
	data, n := literalData(p, s.DType)
	if n == 0 && s.NumElements() > 0 {
		return hlo.NewElidedLiteral(s), nil
	}
	if int64(n) != s.NumElements() {
		return nil, fmt.Errorf("%s: literal of shape %s has %d elements of data, want %d", where, s, n, s.NumElements())
	}
	return hlo.NewLiteralFromData(s, data)
}

// literalData decodes p's elements of type t into Axle's storage type, and
// counts them.
func literalData(p *LiteralProto, t hlo.DType) (any, int) {
	switch t {
	case hlo.Pred:
		return append([]bool{}, p.Preds...), len(p.Preds)
	case hlo.S2, hlo.S4, hlo.S8:
		b := *bytesField(p, t)
		d := make([]int8, len(b))
		for i, v := range b {
			d[i] = int8(v)
		}
		return d, len(d)
	case hlo.S16:
		d := make([]int16, len(p.S16S)/2)
		for i := range d {
			d[i] = int16(binary.LittleEndian.Uint16(p.S16S[2*i:]))
		}
		return d, oddBytes(len(p.S16S), 2)
	case hlo.U16, hlo.F16, hlo.BF16:
		b := *bytesField(p, t)
		d := make([]uint16, len(b)/2)
		for i := range d {
			d[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		return d, oddBytes(len(b), 2)
	case hlo.S32:
		return append([]int32{}, p.S32S...), len(p.S32S)
	case hlo.S64:
		return append([]int64{}, p.S64S...), len(p.S64S)
	case hlo.U32:
		return append([]uint32{}, p.U32S...), len(p.U32S)
	case hlo.U64:
		return append([]uint64{}, p.U64S...), len(p.U64S)
	case hlo.F32:
		return append([]float32{}, p.F32S...), len(p.F32S)
	case hlo.F64:
		return append([]float64{}, p.F64S...), len(p.F64S)
	case hlo.C64:
		d := make([]complex64, len(p.C64S)/2)
		for i := range d {
			d[i] = complex(p.C64S[2*i], p.C64S[2*i+1])
		}
		return d, oddBytes(len(p.C64S), 2)
	case hlo.C128:
		d := make([]complex128, len(p.C128S)/2)
		for i := range d {
			d[i] = complex(p.C128S[2*i], p.C128S[2*i+1])
		}
		return d, oddBytes(len(p.C128S), 2)
	}
	// The remaining array types store one element per byte.
	b := *bytesField(p, t)
	return append([]uint8{}, b...), len(b)
}

// oddBytes is n/w, or -1 when n is not a multiple of w (which no element
// count matches).
func oddBytes(n, w int) int {
	if n%w != 0 {
		return -1
	}
	return n / w
}
