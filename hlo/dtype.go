package hlo

import "fmt"

// DType is an HLO primitive (element) type.
type DType uint8

// The primitive types XLA prints. Invalid is the zero value so that an
// uninitialised shape is recognisably wrong.
const (
	Invalid DType = iota
	Pred
	S2
	S4
	S8
	S16
	S32
	S64
	U2
	U4
	U8
	U16
	U32
	U64
	F16
	BF16
	F32
	F64
	C64
	C128
	F8E4M3FN
	F8E5M2
	F8E4M3FNUZ
	F8E5M2FNUZ
	F8E4M3B11FNUZ
	F8E3M4
	F8E4M3
	F8E8M0FNU
	F4E2M1FN
	// F6E2M3FN and F6E3M2FN are the OCP microscaling 6-bit floats
	// StableHLO has (XLA's HLO does not): Axle names them as HLO would.
	F6E2M3FN
	F6E3M2FN
	Token
	Tuple
	Opaque
	// Buffer is XLA's buffer type `b(shape)`: its one element shape is
	// Shape.Tuple[0].
	Buffer
	numDTypes
)

// dtypeInfo is one row of the element type table.
type dtypeInfo struct {
	name string
	bits int // storage width in bits; 0 for non-array types
	kind dtypeKind
}

type dtypeKind uint8

const (
	kindNone dtypeKind = iota
	kindPred
	kindSigned
	kindUnsigned
	kindFloat
	kindComplex
)

var dtypeTable = [numDTypes]dtypeInfo{
	Invalid:       {"invalid", 0, kindNone},
	Pred:          {"pred", 8, kindPred},
	S2:            {"s2", 2, kindSigned},
	S4:            {"s4", 4, kindSigned},
	S8:            {"s8", 8, kindSigned},
	S16:           {"s16", 16, kindSigned},
	S32:           {"s32", 32, kindSigned},
	S64:           {"s64", 64, kindSigned},
	U2:            {"u2", 2, kindUnsigned},
	U4:            {"u4", 4, kindUnsigned},
	U8:            {"u8", 8, kindUnsigned},
	U16:           {"u16", 16, kindUnsigned},
	U32:           {"u32", 32, kindUnsigned},
	U64:           {"u64", 64, kindUnsigned},
	F16:           {"f16", 16, kindFloat},
	BF16:          {"bf16", 16, kindFloat},
	F32:           {"f32", 32, kindFloat},
	F64:           {"f64", 64, kindFloat},
	C64:           {"c64", 64, kindComplex},
	C128:          {"c128", 128, kindComplex},
	F8E4M3FN:      {"f8e4m3fn", 8, kindFloat},
	F8E5M2:        {"f8e5m2", 8, kindFloat},
	F8E4M3FNUZ:    {"f8e4m3fnuz", 8, kindFloat},
	F8E5M2FNUZ:    {"f8e5m2fnuz", 8, kindFloat},
	F8E4M3B11FNUZ: {"f8e4m3b11fnuz", 8, kindFloat},
	F8E3M4:        {"f8e3m4", 8, kindFloat},
	F8E4M3:        {"f8e4m3", 8, kindFloat},
	F8E8M0FNU:     {"f8e8m0fnu", 8, kindFloat},
	F4E2M1FN:      {"f4e2m1fn", 4, kindFloat},
	F6E2M3FN:      {"f6e2m3fn", 6, kindFloat},
	F6E3M2FN:      {"f6e3m2fn", 6, kindFloat},
	Token:         {"token", 0, kindNone},
	Tuple:         {"tuple", 0, kindNone},
	Opaque:        {"opaque", 0, kindNone},
	Buffer:        {"b", 0, kindNone},
}

var dtypeByName = func() map[string]DType {
	m := make(map[string]DType, numDTypes)
	for t := Pred; t < numDTypes; t++ {
		if t != Tuple && t != Buffer {
			m[dtypeTable[t].name] = t
		}
	}
	return m
}()

// DTypeByName returns the element type spelled name in HLO text
// ("f32", "bf16", "token", ...).
func DTypeByName(name string) (DType, bool) {
	t, ok := dtypeByName[name]
	return t, ok
}

func (t DType) String() string {
	if t < numDTypes {
		return dtypeTable[t].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(t))
}

// Bits is the storage width of one element in bits (0 for token, tuple, opaque).
func (t DType) Bits() int { return dtypeTable[t].bits }

// IsArrayType reports whether t can be the element type of an array shape.
func (t DType) IsArrayType() bool { return t != Invalid && t < numDTypes && dtypeTable[t].bits > 0 }

// IsPred, IsSigned, IsUnsigned, IsInteger, IsFloat and IsComplex classify t.
func (t DType) IsPred() bool     { return dtypeTable[t].kind == kindPred }
func (t DType) IsSigned() bool   { return dtypeTable[t].kind == kindSigned }
func (t DType) IsUnsigned() bool { return dtypeTable[t].kind == kindUnsigned }
func (t DType) IsInteger() bool  { return t.IsSigned() || t.IsUnsigned() }
func (t DType) IsFloat() bool    { return dtypeTable[t].kind == kindFloat }
func (t DType) IsComplex() bool  { return dtypeTable[t].kind == kindComplex }

// IsF8 reports whether t is one of the 8-bit float formats.
func (t DType) IsF8() bool { return t >= F8E4M3FN && t <= F8E8M0FNU }

// ComplexComponent returns the real type of a complex type's parts.
func (t DType) ComplexComponent() DType {
	switch t {
	case C64:
		return F32
	case C128:
		return F64
	}
	return Invalid
}
