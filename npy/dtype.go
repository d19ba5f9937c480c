package npy

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// elemType is how a descr's elements are laid out.
type elemType struct {
	dtype hlo.DType
	size  int              // bytes per element
	order binary.ByteOrder // of multi-byte elements (and of each complex part)
}

// kinds maps NumPy's type letter and size ("f4") to the element type.
var kinds = map[string]hlo.DType{
	"b1": hlo.Pred,
	"i1": hlo.S8, "i2": hlo.S16, "i4": hlo.S32, "i8": hlo.S64,
	"u1": hlo.U8, "u2": hlo.U16, "u4": hlo.U32, "u8": hlo.U64,
	"f2": hlo.F16, "f4": hlo.F32, "f8": hlo.F64,
	"c8": hlo.C64, "c16": hlo.C128,
	// ml_dtypes' bfloat16 has kind 'V': np.save writes it as "<V2" and
	// jnp.load turns a V2 array back into bfloat16.
	"V2": hlo.BF16,
}

// descrs is the descr this package writes for each element type; the
// first character is the byte order NumPy records ('|' for one byte).
var descrs = map[hlo.DType]string{
	hlo.Pred: "|b1",
	hlo.S8:   "|i1", hlo.S16: "<i2", hlo.S32: "<i4", hlo.S64: "<i8",
	hlo.U8: "|u1", hlo.U16: "<u2", hlo.U32: "<u4", hlo.U64: "<u8",
	hlo.F16: "<f2", hlo.F32: "<f4", hlo.F64: "<f8",
	hlo.C64: "<c8", hlo.C128: "<c16",
	hlo.BF16: "<V2",
}

// parseDescr maps a header's descr ("<f4", "|b1", ">i8") to its element
// type.
func parseDescr(descr string) (elemType, error) {
	if descr == "bfloat16" {
		// What str(array.dtype) gives, which hand-written headers use.
		return elemType{hlo.BF16, 2, binary.LittleEndian}, nil
	}
	var order binary.ByteOrder = binary.LittleEndian
	code := descr
	if code != "" && strings.IndexByte("<>|=", code[0]) >= 0 {
		if code[0] == '>' {
			order = binary.BigEndian
		}
		code = code[1:]
	}
	if code != "" && code[0] == 'O' {
		return elemType{}, fmt.Errorf("dtype %q is an object array (pickled Python objects): not supported", descr)
	}
	t, ok := kinds[code]
	if !ok {
		return elemType{}, fmt.Errorf("unsupported dtype %q (supported: bool, int8-64, uint8-64, float16/32/64, complex64/128, bfloat16 as <V2)", descr)
	}
	return elemType{t, t.Bits() / 8, order}, nil
}

// descrFor is the descr written for elements of type t.
func descrFor(t hlo.DType) (string, error) {
	d, ok := descrs[t]
	if !ok {
		return "", fmt.Errorf("element type %s has no NumPy dtype", t)
	}
	return d, nil
}
