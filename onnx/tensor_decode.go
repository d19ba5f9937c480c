package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// maxTensorElems bounds a decoded tensor's element count, so that a
// corrupt dims field asks for an error, not for all of memory.
const maxTensorElems = 1 << 34

// DecodeTensor turns a TensorProto into a Tensor. dir is the folder that
// external-data locations are relative to ("" refuses external data).
func DecodeTensor(p *onnxpb.TensorProto, dir string) (*Tensor, error) {
	t, err := decodeTensor(p, dir)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", p.GetName(), err)
	}
	return t, nil
}

func decodeTensor(p *onnxpb.TensorProto, dir string) (*Tensor, error) {
	if p.Segment != nil {
		return nil, fmt.Errorf("segmented tensors are not supported")
	}
	dims := p.GetDims()
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in %v", dims)
		}
		if d > 0 && n > maxTensorElems/d {
			return nil, fmt.Errorf("dims %v: too many elements", dims)
		}
		n *= d
	}
	et := ElemType(p.GetDataType())
	if et == String {
		if int64(len(p.StringData)) != n {
			return nil, fmt.Errorf("%d strings for dims %v", len(p.StringData), dims)
		}
		strs := make([]string, n)
		for i, s := range p.StringData {
			strs[i] = string(s)
		}
		return NewStringTensor(strs, dims...)
	}
	ht := et.HLO()
	if ht == hlo.Invalid {
		return nil, fmt.Errorf("unsupported element type %v", et)
	}
	raw := p.RawData
	if p.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		var err error
		if raw, err = readExternal(p, dir); err != nil {
			return nil, err
		}
	}
	if n > 0 && raw == nil && p.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
		// The typed fields give the count: check it before allocating, so
		// that a corrupt dims field cannot ask for all of memory.
		if b := ht.Bits(); b < 8 {
			if want := (n*int64(b) + 7) / 8; int64(len(p.Int32Data)) != want {
				return nil, fmt.Errorf("%d int32_data bytes for %d %v elements (%d needed)", len(p.Int32Data), n, et, want)
			}
		} else if got := typedCount(p, ht); got != n {
			return nil, fmt.Errorf("%d values for %d %v elements", got, n, et)
		}
	}
	if raw != nil {
		if want := (n*int64(ht.Bits()) + 7) / 8; int64(len(raw)) != want {
			return nil, fmt.Errorf("raw_data holds %d bytes, %d %v elements need %d", len(raw), n, et, want)
		}
	}
	lit := hlo.NewLiteral(hlo.ArrayShape(ht, dims...))
	if n == 0 {
		return TensorOf(lit), nil
	}
	if raw != nil || p.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		if err := fillRaw(lit, raw, int(n)); err != nil {
			return nil, err
		}
		return TensorOf(lit), nil
	}
	if err := fillTyped(lit, p, int(n)); err != nil {
		return nil, err
	}
	return TensorOf(lit), nil
}

// typedCount is how many elements the typed field for t holds.
func typedCount(p *onnxpb.TensorProto, t hlo.DType) int64 {
	switch t {
	case hlo.F32:
		return int64(len(p.FloatData))
	case hlo.C64:
		return int64(len(p.FloatData) / 2)
	case hlo.F64:
		return int64(len(p.DoubleData))
	case hlo.C128:
		return int64(len(p.DoubleData) / 2)
	case hlo.S64:
		return int64(len(p.Int64Data))
	case hlo.U64, hlo.U32:
		return int64(len(p.Uint64Data))
	}
	return int64(len(p.Int32Data))
}

// readExternal reads an external-data tensor's bytes: location (relative
// to dir, never outside it), offset and length.
func readExternal(p *onnxpb.TensorProto, dir string) ([]byte, error) {
	var loc string
	var off, length int64 = 0, -1
	for _, kv := range p.ExternalData {
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset", "length":
			v, err := strconv.ParseInt(kv.GetValue(), 10, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("external data %s %q is not a byte count", kv.GetKey(), kv.GetValue())
			}
			if kv.GetKey() == "offset" {
				off = v
			} else {
				length = v
			}
		}
	}
	if loc == "" {
		return nil, fmt.Errorf("external data without a location")
	}
	if dir == "" {
		return nil, fmt.Errorf("external data %q: the model was not read from a file", loc)
	}
	clean := filepath.Clean(loc)
	if filepath.IsAbs(clean) || clean == ".." || len(clean) > 2 && clean[:3] == ".."+string(filepath.Separator) {
		return nil, fmt.Errorf("external data location %q leaves the model's folder", loc)
	}
	path := filepath.Join(dir, clean)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	if length < 0 {
		length = st.Size() - off
	}
	if off > st.Size() || length > st.Size()-off {
		return nil, fmt.Errorf("external data %s: bytes [%d, %d) past its end (%d bytes)", path, off, off+length, st.Size())
	}
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("external data %s: %w", path, err)
	}
	return buf, nil
}

// fillRaw decodes raw_data: little-endian, fixed width; sub-byte types
// packed from the low bits up.
func fillRaw(lit *hlo.Literal, raw []byte, n int) error {
	t := lit.DType()
	bits := t.Bits()
	want := (n*bits + 7) / 8
	if len(raw) != want {
		return fmt.Errorf("raw_data holds %d bytes, %d %v elements need %d", len(raw), n, ElemTypeOf(t), want)
	}
	switch d := lit.Data().(type) {
	case []bool:
		for i := range d {
			d[i] = raw[i] != 0
		}
	case []int8:
		if bits < 8 {
			unpackSigned(d, raw, bits)
		} else {
			for i := range d {
				d[i] = int8(raw[i])
			}
		}
	case []uint8:
		if bits < 8 {
			unpackUnsigned(d, raw, bits)
		} else {
			copy(d, raw)
		}
	case []int16:
		for i := range d {
			d[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case []uint16:
		for i := range d {
			d[i] = binary.LittleEndian.Uint16(raw[2*i:])
		}
	case []int32:
		for i := range d {
			d[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case []uint32:
		for i := range d {
			d[i] = binary.LittleEndian.Uint32(raw[4*i:])
		}
	case []int64:
		for i := range d {
			d[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case []uint64:
		for i := range d {
			d[i] = binary.LittleEndian.Uint64(raw[8*i:])
		}
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case []complex64:
		for i := range d {
			d[i] = complex(math.Float32frombits(binary.LittleEndian.Uint32(raw[8*i:])),
				math.Float32frombits(binary.LittleEndian.Uint32(raw[8*i+4:])))
		}
	case []complex128:
		for i := range d {
			d[i] = complex(math.Float64frombits(binary.LittleEndian.Uint64(raw[16*i:])),
				math.Float64frombits(binary.LittleEndian.Uint64(raw[16*i+8:])))
		}
	default:
		return fmt.Errorf("raw_data of %v is not supported", t)
	}
	return nil
}

func unpackUnsigned(d []uint8, raw []byte, bits int) {
	per := 8 / bits
	mask := byte(1)<<bits - 1
	for i := range d {
		d[i] = raw[i/per] >> (bits * (i % per)) & mask
	}
}

func unpackSigned(d []int8, raw []byte, bits int) {
	per := 8 / bits
	mask := byte(1)<<bits - 1
	shift := 8 - bits
	for i := range d {
		v := raw[i/per] >> (bits * (i % per)) & mask
		d[i] = int8(v<<shift) >> shift
	}
}

// fillTyped decodes the typed repeated fields (float_data, int32_data, ...)
// as TensorProto documents them per element type.
func fillTyped(lit *hlo.Literal, p *onnxpb.TensorProto, n int) error {
	t := lit.DType()
	count := func(got int) error {
		if got != n {
			return fmt.Errorf("%d values for %d %v elements", got, n, ElemTypeOf(t))
		}
		return nil
	}
	switch d := lit.Data().(type) {
	case []float32:
		if err := count(len(p.FloatData)); err != nil {
			return err
		}
		copy(d, p.FloatData)
	case []float64:
		if err := count(len(p.DoubleData)); err != nil {
			return err
		}
		copy(d, p.DoubleData)
	case []complex64:
		if err := count(len(p.FloatData) / 2); err != nil || len(p.FloatData)%2 != 0 {
			return fmt.Errorf("%d floats for %d complex64 elements", len(p.FloatData), n)
		}
		for i := range d {
			d[i] = complex(p.FloatData[2*i], p.FloatData[2*i+1])
		}
	case []complex128:
		if err := count(len(p.DoubleData) / 2); err != nil || len(p.DoubleData)%2 != 0 {
			return fmt.Errorf("%d doubles for %d complex128 elements", len(p.DoubleData), n)
		}
		for i := range d {
			d[i] = complex(p.DoubleData[2*i], p.DoubleData[2*i+1])
		}
	case []int64:
		if err := count(len(p.Int64Data)); err != nil {
			return err
		}
		copy(d, p.Int64Data)
	case []uint64:
		if err := count(len(p.Uint64Data)); err != nil {
			return err
		}
		copy(d, p.Uint64Data)
	case []uint32:
		if err := count(len(p.Uint64Data)); err != nil {
			return err
		}
		for i, v := range p.Uint64Data {
			d[i] = uint32(v)
		}
	default:
		return fillInt32Data(lit, p.Int32Data, n)
	}
	return nil
}

// fillInt32Data decodes int32_data: one element per entry, or for the
// 4- and 2-bit types one packed byte per entry.
func fillInt32Data(lit *hlo.Literal, src []int32, n int) error {
	t := lit.DType()
	if bits := t.Bits(); bits < 8 {
		raw := make([]byte, len(src))
		for i, v := range src {
			raw[i] = byte(v)
		}
		return fillRaw(lit, raw, n)
	}
	if len(src) != n {
		return fmt.Errorf("%d int32_data values for %d %v elements", len(src), n, ElemTypeOf(t))
	}
	switch d := lit.Data().(type) {
	case []bool:
		for i, v := range src {
			d[i] = v != 0
		}
	case []int8:
		for i, v := range src {
			d[i] = int8(v)
		}
	case []uint8:
		for i, v := range src {
			d[i] = uint8(v)
		}
	case []int16:
		for i, v := range src {
			d[i] = int16(v)
		}
	case []uint16:
		for i, v := range src {
			d[i] = uint16(v)
		}
	case []int32:
		copy(d, src)
	default:
		return fmt.Errorf("int32_data cannot hold %v", ElemTypeOf(t))
	}
	return nil
}
