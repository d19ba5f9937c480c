package eval

import (
	"errors"
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Data movement: ops whose result elements are copies of operand elements
// (broadcast, reshape, transpose, slices, pad, concatenate, reverse, ...).
// Every one of them is described as one or more boxes copied with strides
// (a move), so a single typed mover does all the element traffic.

func init() {
	register(evalBroadcast, hlo.OpBroadcast)
	register(evalReshape, hlo.OpReshape)
	register(evalBitcast, hlo.OpBitcast)
	register(evalTranspose, hlo.OpTranspose)
	register(evalReverse, hlo.OpReverse)
	register(evalIota, hlo.OpIota)
	register(evalSlice, hlo.OpSlice)
	register(evalDynamicSlice, hlo.OpDynamicSlice)
	register(evalDynamicUpdateSlice, hlo.OpDynamicUpdateSlice)
	register(evalConcatenate, hlo.OpConcatenate)
	register(evalPad, hlo.OpPad)
	register(evalGetDimensionSize, hlo.OpGetDimensionSize)
	register(evalSetDimensionSize, hlo.OpSetDimensionSize)
	register(evalCopyStart, hlo.OpCopyStart)
	register(evalCopyDone, hlo.OpCopyDone)
}

// boxMove copies a box of elements: the element at index idx of the box goes
// from src[srcOff + Σ idx·srcStrides] to dst[dstOff + Σ idx·dstStrides].
// A source stride of 0 repeats an element (broadcast, fill), a negative one
// walks backwards (reverse).
type boxMove struct {
	dims                   []int
	dstOff, srcOff         int
	dstStrides, srcStrides []int
}

// newMove starts a move over a box of the given dimensions at offsets 0;
// callers adjust offsets and strides.
func newMove(dims []int64, dstStrides, srcStrides []int) *boxMove {
	m := &boxMove{dims: make([]int, len(dims)), dstStrides: dstStrides, srcStrides: srcStrides}
	for i, d := range dims {
		m.dims[i] = int(d)
	}
	return m
}

// simplify drops unit dimensions and merges neighbours that are contiguous
// on both sides, so the innermost run is as long as possible (a transpose
// of a big block still copies whole rows). It reports false when the box
// is empty.
func (m *boxMove) simplify() bool {
	var dims, ds, ss []int
	for i, n := range m.dims {
		switch {
		case n <= 0:
			return false
		case n == 1:
			continue
		}
		k := len(dims) - 1
		if k >= 0 && ds[k] == m.dstStrides[i]*n && ss[k] == m.srcStrides[i]*n {
			dims[k] *= n
			ds[k], ss[k] = m.dstStrides[i], m.srcStrides[i]
			continue
		}
		dims = append(dims, n)
		ds = append(ds, m.dstStrides[i])
		ss = append(ss, m.srcStrides[i])
	}
	m.dims, m.dstStrides, m.srcStrides = dims, ds, ss
	return true
}

// moveElems performs m from src's storage into dst's. Both literals must
// have the same element type; the type switch happens once per move.
func moveElems(dst, src *hlo.Literal, m *boxMove) error {
	if dst.DType() != src.DType() {
		return fmt.Errorf("cannot move %s elements into a %s array", src.DType(), dst.DType())
	}
	if src.Data() == nil || dst.Data() == nil {
		return errors.New("data movement needs array values with known elements")
	}
	if !m.simplify() {
		return nil
	}
	var ok bool
	switch d := dst.Data().(type) {
	case []bool:
		ok = moveAs(d, src.Data(), m)
	case []int8:
		ok = moveAs(d, src.Data(), m)
	case []int16:
		ok = moveAs(d, src.Data(), m)
	case []int32:
		ok = moveAs(d, src.Data(), m)
	case []int64:
		ok = moveAs(d, src.Data(), m)
	case []uint8:
		ok = moveAs(d, src.Data(), m)
	case []uint16:
		ok = moveAs(d, src.Data(), m)
	case []uint32:
		ok = moveAs(d, src.Data(), m)
	case []uint64:
		ok = moveAs(d, src.Data(), m)
	case []float32:
		ok = moveAs(d, src.Data(), m)
	case []float64:
		ok = moveAs(d, src.Data(), m)
	case []complex64:
		ok = moveAs(d, src.Data(), m)
	case []complex128:
		ok = moveAs(d, src.Data(), m)
	}
	if !ok {
		return fmt.Errorf("unexpected storage %T for %s elements", dst.Data(), dst.DType())
	}
	return nil
}

func moveAs[T any](dst []T, src any, m *boxMove) bool {
	s, ok := src.([]T)
	if ok {
		moveTyped(dst, s, m)
	}
	return ok
}

// moveTyped walks every dimension but the innermost with an odometer that
// keeps both offsets up to date, and hands each innermost run to moveRun.
func moveTyped[T any](dst, src []T, m *boxMove) {
	rank := len(m.dims)
	if rank == 0 {
		dst[m.dstOff] = src[m.srcOff]
		return
	}
	inner := rank - 1
	n, ds, ss := m.dims[inner], m.dstStrides[inner], m.srcStrides[inner]
	idx := make([]int, inner)
	d, s := m.dstOff, m.srcOff
	for {
		moveRun(dst, src, d, s, n, ds, ss)
		k := inner - 1
		for ; k >= 0; k-- {
			idx[k]++
			d += m.dstStrides[k]
			s += m.srcStrides[k]
			if idx[k] < m.dims[k] {
				break
			}
			d -= m.dstStrides[k] * m.dims[k]
			s -= m.srcStrides[k] * m.dims[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// moveRun copies n elements with the given strides; contiguous runs use
// copy and repeated sources a fill.
func moveRun[T any](dst, src []T, d, s, n, ds, ss int) {
	switch {
	case ds == 1 && ss == 1:
		copy(dst[d:d+n], src[s:s+n])
	case ds == 1 && ss == 0:
		v := src[s]
		run := dst[d : d+n]
		for i := range run {
			run[i] = v
		}
	default:
		for range n {
			dst[d] = src[s]
			d += ds
			s += ss
		}
	}
}

// mvCopyAll copies src's storage into dst's in row-major order (equal
// element counts, same element type).
func mvCopyAll(dst, src *hlo.Literal) error {
	if dst.Len() != src.Len() {
		return fmt.Errorf("cannot copy %d elements into %d", src.Len(), dst.Len())
	}
	return moveElems(dst, src, newMove([]int64{int64(dst.Len())}, []int{1}, []int{1}))
}

// mvFill sets every element of dst to the scalar v.
func mvFill(dst, v *hlo.Literal) error {
	if v.Len() != 1 {
		return fmt.Errorf("fill value has %d elements, want 1", v.Len())
	}
	return moveElems(dst, v, newMove([]int64{int64(dst.Len())}, []int{1}, []int{0}))
}

// mvOperand checks that ops[i] exists and is an array with known elements.
func mvOperand(ops []*hlo.Literal, i int) (*hlo.Literal, error) {
	if i >= len(ops) {
		return nil, fmt.Errorf("missing operand %d", i)
	}
	if ops[i].Data() == nil {
		return nil, fmt.Errorf("operand %d is not an array with known elements (shape %s)", i, ops[i].Shape())
	}
	return ops[i], nil
}

// mvUnary reads operand 0 and allocates the result like it.
func mvUnary(in *hlo.Instruction, ops []*hlo.Literal) (src, out *hlo.Literal, err error) {
	if src, err = mvOperand(ops, 0); err != nil {
		return nil, nil, err
	}
	out, err = mvResult(in, src)
	return src, out, err
}

// mvResult allocates the instruction's array result, checking its element
// type against the operand's.
func mvResult(in *hlo.Instruction, like *hlo.Literal) (*hlo.Literal, error) {
	if !in.Shape.IsArray() {
		return nil, fmt.Errorf("result shape %s is not an array", in.Shape)
	}
	if in.Shape.DType != like.DType() {
		return nil, fmt.Errorf("result element type %s differs from the operand's %s", in.Shape.DType, like.DType())
	}
	return hlo.NewLiteral(in.Shape), nil
}
