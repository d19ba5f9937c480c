// Package hlobin is a compact binary form of an hlo.Module: what an
// ahead-of-time plan stores. It writes every field of the IR as it is
// (names, shapes with layouts, attributes, literals' bytes), so a module
// read back prints and compiles as the one written; it is Axle's own
// format, not an interchange one (that is HloModuleProto, package
// hloproto), and it is small: a binary reading it links no protobuf
// runtime. Literals are stored little-endian, as every platform Axle
// builds for keeps them.
package hlobin

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// magic starts every encoded module; the digit is the format's version.
const magic = "AXLEHLO1"

// Attribute value tags.
const (
	tagInt byte = iota + 1
	tagBool
	tagFloat
	tagInts
	tagBools
	tagIntLists
	tagEnum
	tagString
	tagRaw
	tagComputation
	tagComputations
	tagWindow
	tagConvDims
	tagPadding
	tagSlices
	tagEnums
	tagShape
	tagShapes
	tagLiteral
	tagIotaGroups
	tagInstructions
	tagNilComputation
)

// Encode writes m.
func Encode(m *hlo.Module) ([]byte, error) {
	e := &encoder{comps: map[*hlo.Computation]int{}}
	for i, c := range m.Computations {
		e.comps[c] = i
	}
	e.buf = append(e.buf, magic...)
	e.str(m.Name)
	e.bool(m.IsScheduled)
	e.int(m.ReplicaCount)
	e.int(m.NumPartitions)
	e.str(m.StackFrameIndex)
	e.bool(m.EntryLayout != nil)
	if p := m.EntryLayout; p != nil {
		e.shapes(p.Params)
		e.strs(p.ParamNames)
		e.shape(p.Result)
	}
	e.attrs(m.Attrs, nil)
	e.uint(len(m.Computations))
	for _, c := range m.Computations {
		e.computation(c)
	}
	e.int(int64(e.index(m.Entry)))
	return e.buf, e.err
}

type encoder struct {
	buf   []byte
	comps map[*hlo.Computation]int
	instr map[*hlo.Instruction]int // the current computation's
	err   error
}

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("hlobin: "+format, args...)
	}
}

func (e *encoder) uint(n int)  { e.buf = binary.AppendUvarint(e.buf, uint64(n)) }
func (e *encoder) int(n int64) { e.buf = binary.AppendVarint(e.buf, n) }
func (e *encoder) byte(b byte) { e.buf = append(e.buf, b) }
func (e *encoder) float(f float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
}

func (e *encoder) bool(b bool) {
	if b {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

func (e *encoder) str(s string) {
	e.uint(len(s))
	e.buf = append(e.buf, s...)
}

func (e *encoder) strs(ss []string) {
	e.uint(len(ss))
	for _, s := range ss {
		e.str(s)
	}
}

// ints writes a list, nil apart from empty: the parser keeps an empty
// `dimensions={}`, which prints, and nil, which does not.
func (e *encoder) ints(xs []int64) {
	if xs == nil {
		e.uint(0)
		return
	}
	e.uint(len(xs) + 1)
	for _, x := range xs {
		e.int(x)
	}
}

// index is c's position in the module, -1 for nil, and a failure for a
// computation not in the module.
func (e *encoder) index(c *hlo.Computation) int {
	if c == nil {
		return -1
	}
	i, ok := e.comps[c]
	if !ok {
		e.fail("computation %s is not in the module", c.Name)
	}
	return i
}

func (e *encoder) computation(c *hlo.Computation) {
	e.str(c.Name)
	e.bool(c.IsEntry)
	e.str(c.ExecutionThread)
	e.instr = make(map[*hlo.Instruction]int, len(c.Instructions))
	for i, in := range c.Instructions {
		e.instr[in] = i
	}
	e.uint(len(c.Instructions))
	for _, in := range c.Instructions {
		e.instruction(in)
	}
	e.int(int64(e.ref(c.Root)))
	e.uint(len(c.Params))
	for _, p := range c.Params {
		e.int(int64(e.ref(p)))
	}
}

// ref is in's position in the current computation (-1: nil).
func (e *encoder) ref(in *hlo.Instruction) int {
	if in == nil {
		return -1
	}
	i, ok := e.instr[in]
	if !ok {
		e.fail("instruction %s is not in its computation", in.Name)
	}
	return i
}

func (e *encoder) refs(ins []*hlo.Instruction) {
	e.uint(len(ins))
	for _, in := range ins {
		e.int(int64(e.ref(in)))
	}
}

func (e *encoder) instruction(in *hlo.Instruction) {
	e.str(in.Name)
	e.uint(int(in.Opcode))
	e.shape(in.Shape)
	e.refs(in.Operands)
	e.int(in.ParamNumber)
	e.refs(in.ControlPredecessors)
	e.bool(in.Literal != nil)
	if in.Literal != nil {
		e.literal(in.Literal)
	}
	e.attrs(in.Attrs, in)
}

func (e *encoder) shape(s hlo.Shape) {
	e.uint(int(s.DType))
	e.ints(s.Dims)
	e.uint(len(s.Dynamic))
	for _, d := range s.Dynamic {
		e.bool(d)
	}
	e.bool(s.Layout != nil)
	if l := s.Layout; l != nil {
		e.ints(l.MinorToMajor)
		e.uint(len(l.Items))
		for _, it := range l.Items {
			e.str(it.Tag)
			e.str(it.Body)
		}
	}
	e.shapes(s.Tuple)
}

func (e *encoder) shapes(ss []hlo.Shape) {
	e.uint(len(ss))
	for _, s := range ss {
		e.shape(s)
	}
}

// literal writes the shape, then the elements (a tuple's) or the
// storage's bytes (an array's); elided and dynamic literals are refused.
func (e *encoder) literal(l *hlo.Literal) {
	s := l.Shape()
	e.shape(s)
	switch {
	case l.IsElided():
		e.fail("an elided literal of shape %s has no values to store", s.HumanString())
	case s.IsDynamic():
		e.fail("a literal of dynamic shape %s is not stored", s.HumanString())
	case s.IsTuple():
		e.uint(len(l.Elements()))
		for _, el := range l.Elements() {
			e.literal(el)
		}
	default:
		b := l.RawBytes()
		e.uint(len(b))
		e.buf = append(e.buf, b...)
	}
}

func (e *encoder) attrs(as []hlo.Attr, in *hlo.Instruction) {
	e.uint(len(as))
	for _, a := range as {
		e.str(a.Name)
		e.value(a.Name, a.Value)
	}
}

// value writes one attribute value with its tag.
func (e *encoder) value(name string, v any) {
	switch v := v.(type) {
	case int64:
		e.byte(tagInt)
		e.int(v)
	case bool:
		e.byte(tagBool)
		e.bool(v)
	case float64:
		e.byte(tagFloat)
		e.float(v)
	case []int64:
		e.byte(tagInts)
		e.ints(v)
	case []bool:
		e.byte(tagBools)
		e.uint(len(v))
		for _, b := range v {
			e.bool(b)
		}
	case [][]int64:
		e.byte(tagIntLists)
		e.uint(len(v))
		for _, xs := range v {
			e.ints(xs)
		}
	default:
		e.namedValue(name, v)
	}
}

// namedValue writes the values of hlo's named types.
func (e *encoder) namedValue(name string, v any) {
	switch v := v.(type) {
	case hlo.Enum:
		e.byte(tagEnum)
		e.str(string(v))
	case string:
		e.byte(tagString)
		e.str(v)
	case hlo.Raw:
		e.byte(tagRaw)
		e.str(string(v))
	case hlo.IotaReplicaGroups:
		e.byte(tagIotaGroups)
		e.str(string(v))
	case []hlo.Enum:
		e.byte(tagEnums)
		e.uint(len(v))
		for _, x := range v {
			e.str(string(x))
		}
	case *hlo.Computation:
		if v == nil {
			e.byte(tagNilComputation)
			return
		}
		e.byte(tagComputation)
		e.int(int64(e.index(v)))
	case []*hlo.Computation:
		e.byte(tagComputations)
		e.uint(len(v))
		for _, c := range v {
			e.int(int64(e.index(c)))
		}
	case []*hlo.Instruction:
		e.byte(tagInstructions)
		e.refs(v)
	default:
		e.structValue(name, v)
	}
}

// structValue writes the attribute structs.
func (e *encoder) structValue(name string, v any) {
	switch v := v.(type) {
	case *hlo.Window:
		e.byte(tagWindow)
		e.bool(v != nil)
		if v != nil {
			e.uint(len(v.Dims))
			for _, d := range v.Dims {
				e.ints([]int64{d.Size, d.Stride, d.PadLo, d.PadHi, d.LhsDilation, d.RhsDilation})
				e.bool(d.Reversal)
			}
		}
	case *hlo.ConvDimNumbers:
		e.byte(tagConvDims)
		e.bool(v != nil)
		if v != nil {
			e.ints([]int64{v.InputBatch, v.InputFeature, v.KernelInput, v.KernelOutput, v.OutputBatch, v.OutputFeature})
			e.ints(v.InputSpatial)
			e.ints(v.KernelSpatial)
			e.ints(v.OutputSpatial)
		}
	case hlo.PaddingConfig:
		e.byte(tagPadding)
		e.uint(len(v))
		for _, d := range v {
			e.ints([]int64{d.Lo, d.Hi, d.Interior})
		}
	case []hlo.SliceDim:
		e.byte(tagSlices)
		e.uint(len(v))
		for _, d := range v {
			e.ints([]int64{d.Start, d.Limit, d.Stride})
		}
	case hlo.Shape:
		e.byte(tagShape)
		e.shape(v)
	case []hlo.Shape:
		e.byte(tagShapes)
		e.shapes(v)
	case *hlo.Literal:
		e.byte(tagLiteral)
		e.bool(v != nil)
		if v != nil {
			e.literal(v)
		}
	default:
		e.fail("attribute %s holds a %T, which this format does not store", name, v)
	}
}
