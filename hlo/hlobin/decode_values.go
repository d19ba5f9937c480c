package hlobin

import (
	"unsafe"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/pages"
)

// maxDepth bounds nested tuple shapes and literals: deeper is corruption
// (and unbounded recursion).
const maxDepth = 64

func (d *decoder) shape() hlo.Shape { return d.shapeAt(0) }

func (d *decoder) shapeAt(depth int) hlo.Shape {
	if depth > maxDepth {
		d.fail("shapes nested deeper than %d", maxDepth)
		return hlo.Shape{}
	}
	t := d.uvarint()
	if dt := hlo.DType(t); t >= 256 || !dt.IsArrayType() && dt != hlo.Tuple && dt != hlo.Token && dt != hlo.Opaque && dt != hlo.Buffer {
		d.fail("element type %d", t)
		return hlo.Shape{}
	}
	s := hlo.Shape{DType: hlo.DType(t), Dims: d.ints()}
	if n := d.count(1); n > 0 {
		s.Dynamic = make([]bool, n)
		for i := range s.Dynamic {
			s.Dynamic[i] = d.bool()
		}
	}
	if d.bool() {
		s.Layout = &hlo.Layout{MinorToMajor: d.ints()}
		if n := d.count(2); n > 0 {
			s.Layout.Items = make([]hlo.LayoutItem, n)
			for i := range s.Layout.Items {
				s.Layout.Items[i] = hlo.LayoutItem{Tag: d.str(), Body: d.str()}
			}
		}
	}
	if n := d.count(3); n > 0 {
		s.Tuple = make([]hlo.Shape, n)
		for i := range s.Tuple {
			s.Tuple[i] = d.shapeAt(depth + 1)
		}
	}
	return s
}

func (d *decoder) shapes() []hlo.Shape {
	n := d.count(3)
	if n == 0 {
		return nil
	}
	out := make([]hlo.Shape, n)
	for i := range out {
		out[i] = d.shape()
	}
	return out
}

// literal reads a literal; its stored bytes must be exactly its shape's.
func (d *decoder) literal(depth int) *hlo.Literal {
	if depth > maxDepth {
		d.fail("literals nested deeper than %d", maxDepth)
		return nil
	}
	s := d.shape()
	if d.err != nil {
		return nil
	}
	if s.IsTuple() {
		elems := make([]*hlo.Literal, d.count(3))
		for i := range elems {
			if elems[i] = d.literal(depth + 1); elems[i] == nil {
				return nil
			}
		}
		if len(elems) != len(s.Tuple) {
			d.fail("a tuple literal of %d elements for %d", len(elems), len(s.Tuple))
			return nil
		}
		return hlo.MakeTupleLiteral(elems...)
	}
	b := d.bytes()
	n, err := s.ByteSize()
	if err != nil || s.IsDynamic() || n != int64(len(b)) || !littleEndian {
		d.fail("a literal of shape %s with %d bytes", s.HumanString(), len(b))
		return nil
	}
	mem := d.store(len(b))
	copy(mem, b)
	l, err := hlo.ViewBytes(s, mem)
	if err != nil {
		d.fail("a literal of shape %s: %v", s.HumanString(), err)
		return nil
	}
	return l
}

// chunkBytes is the size of the blocks literals are copied into.
const chunkBytes = 1 << 20

// store returns n bytes, 64-byte aligned, for a literal's values: cut
// from a block shared by many literals and populated at once (package
// pages), rather than an allocation each whose pages then fault one at
// a time as they are copied (a 13.8 MB plan's constants: 3,400 faults,
// most of its decoding time).
func (d *decoder) store(n int) []byte {
	const align = 64
	if n+align > len(d.chunk) {
		// The literals still to come fit in the bytes left: a small
		// module's block is small.
		size := max(min(chunkBytes, len(d.b)+align), n+align)
		d.chunk = make([]byte, size)
		pages.Populate(d.chunk)
	}
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(d.chunk))) & (align - 1))
	mem := d.chunk[off : off+n : off+n]
	d.chunk = d.chunk[min(off+n, len(d.chunk)):]
	return mem
}

// littleEndian: the stored bytes are this machine's (every platform Axle
// builds for is little-endian; a big-endian one is refused, not misread).
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

func (d *decoder) attrs(ins []*hlo.Instruction) []hlo.Attr {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	out := make([]hlo.Attr, n)
	for i := range out {
		out[i].Name = d.str()
		out[i].Value = d.value(ins)
		if d.err != nil {
			return nil
		}
	}
	return out
}

func (d *decoder) value(ins []*hlo.Instruction) any {
	switch tag := d.byte(); tag {
	case tagInt:
		return d.int()
	case tagBool:
		return d.bool()
	case tagFloat:
		return d.float()
	case tagInts:
		return d.ints()
	case tagBools:
		out := make([]bool, d.count(1))
		for i := range out {
			out[i] = d.bool()
		}
		return out
	case tagIntLists:
		out := make([][]int64, d.count(1))
		for i := range out {
			out[i] = d.ints()
		}
		return out
	default:
		return d.namedValue(tag, ins)
	}
}

func (d *decoder) namedValue(tag byte, ins []*hlo.Instruction) any {
	switch tag {
	case tagEnum:
		return hlo.Enum(d.str())
	case tagString:
		return d.str()
	case tagRaw:
		return hlo.Raw(d.str())
	case tagIotaGroups:
		return hlo.IotaReplicaGroups(d.str())
	case tagEnums:
		out := make([]hlo.Enum, d.count(1))
		for i := range out {
			out[i] = hlo.Enum(d.str())
		}
		return out
	case tagNilComputation:
		return (*hlo.Computation)(nil)
	case tagComputation:
		return d.comp(d.int())
	case tagComputations:
		out := make([]*hlo.Computation, d.count(1))
		for i := range out {
			out[i] = d.comp(d.int())
		}
		return out
	case tagInstructions:
		return d.refs(ins)
	default:
		return d.structValue(tag)
	}
}

func (d *decoder) structValue(tag byte) any {
	switch tag {
	case tagWindow:
		if !d.bool() {
			return (*hlo.Window)(nil)
		}
		w := &hlo.Window{Dims: make([]hlo.WindowDim, d.count(8))}
		for i := range w.Dims {
			v := d.fixed(6)
			w.Dims[i] = hlo.WindowDim{Size: v[0], Stride: v[1], PadLo: v[2], PadHi: v[3], LhsDilation: v[4], RhsDilation: v[5], Reversal: d.bool()}
		}
		return w
	case tagConvDims:
		if !d.bool() {
			return (*hlo.ConvDimNumbers)(nil)
		}
		v := d.fixed(6)
		return &hlo.ConvDimNumbers{InputBatch: v[0], InputFeature: v[1], KernelInput: v[2], KernelOutput: v[3], OutputBatch: v[4], OutputFeature: v[5],
			InputSpatial: d.ints(), KernelSpatial: d.ints(), OutputSpatial: d.ints()}
	case tagPadding:
		out := make(hlo.PaddingConfig, d.count(4))
		for i := range out {
			v := d.fixed(3)
			out[i] = hlo.PadDim{Lo: v[0], Hi: v[1], Interior: v[2]}
		}
		return out
	case tagSlices:
		out := make([]hlo.SliceDim, d.count(4))
		for i := range out {
			v := d.fixed(3)
			out[i] = hlo.SliceDim{Start: v[0], Limit: v[1], Stride: v[2]}
		}
		return out
	case tagShape:
		return d.shape()
	case tagShapes:
		return d.shapes()
	case tagLiteral:
		if !d.bool() {
			return (*hlo.Literal)(nil)
		}
		return d.literal(0)
	}
	d.fail("attribute tag %d", tag)
	return nil
}

// fixed reads a list of exactly n ints.
func (d *decoder) fixed(n int) []int64 {
	v := d.ints()
	if len(v) != n {
		d.fail("%d numbers where %d belong", len(v), n)
		return make([]int64, n)
	}
	return v
}
