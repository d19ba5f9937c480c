package onnx

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// ElemType is an ONNX tensor element type: the TensorProto.DataType code.
type ElemType int32

// The element types; String has no HLO counterpart.
const (
	Undefined   ElemType = 0
	Float       ElemType = 1
	Uint8       ElemType = 2
	Int8        ElemType = 3
	Uint16      ElemType = 4
	Int16       ElemType = 5
	Int32       ElemType = 6
	Int64       ElemType = 7
	String      ElemType = 8
	Bool        ElemType = 9
	Float16     ElemType = 10
	Double      ElemType = 11
	Uint32      ElemType = 12
	Uint64      ElemType = 13
	Complex64   ElemType = 14
	Complex128  ElemType = 15
	BFloat16    ElemType = 16
	F8E4M3FN    ElemType = 17
	F8E4M3FNUZ  ElemType = 18
	F8E5M2      ElemType = 19
	F8E5M2FNUZ  ElemType = 20
	Uint4       ElemType = 21
	Int4        ElemType = 22
	Float4E2M1  ElemType = 23
	Float8E8M0  ElemType = 24
	Uint2       ElemType = 25
	Int2        ElemType = 26
	numElemType          = 27
)

var toHLO = [numElemType]hlo.DType{
	Float: hlo.F32, Uint8: hlo.U8, Int8: hlo.S8, Uint16: hlo.U16, Int16: hlo.S16,
	Int32: hlo.S32, Int64: hlo.S64, Bool: hlo.Pred, Float16: hlo.F16, Double: hlo.F64,
	Uint32: hlo.U32, Uint64: hlo.U64, Complex64: hlo.C64, Complex128: hlo.C128,
	BFloat16: hlo.BF16, F8E4M3FN: hlo.F8E4M3FN, F8E4M3FNUZ: hlo.F8E4M3FNUZ,
	F8E5M2: hlo.F8E5M2, F8E5M2FNUZ: hlo.F8E5M2FNUZ, Uint4: hlo.U4, Int4: hlo.S4,
	Float4E2M1: hlo.F4E2M1FN, Float8E8M0: hlo.F8E8M0FNU, Uint2: hlo.U2, Int2: hlo.S2,
}

// HLO is the HLO element type that holds t, or hlo.Invalid for String and
// codes Axle does not know.
func (t ElemType) HLO() hlo.DType {
	if t < 0 || t >= numElemType {
		return hlo.Invalid
	}
	return toHLO[t]
}

// ElemTypeOf is the ONNX element type of an HLO element type (Undefined if
// ONNX has none).
func ElemTypeOf(d hlo.DType) ElemType {
	for t, h := range toHLO {
		if h == d && h != hlo.Invalid {
			return ElemType(t)
		}
	}
	return Undefined
}

// String is the type's name as ONNX's TensorProto.DataType spells it,
// lower-cased (float, int64, bfloat16, ...).
func (t ElemType) String() string {
	name, ok := onnxpb.TensorProto_DataType_name[int32(t)]
	if !ok {
		return fmt.Sprintf("elem_type(%d)", int32(t))
	}
	return lower(name)
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
