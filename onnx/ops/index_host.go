package ops

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

func init() {
	Register(Op{Name: "NonZero", Host: hostNonZero})
	Register(Op{Name: "Unique", Host: hostUnique})
	Register(Op{Name: "Compress", Host: hostCompress})
}

// hostNumeric is input i as a numeric, non-complex literal.
func hostNumeric(h *HostCtx, i int) (*hlo.Literal, error) {
	t := h.Tensor(i)
	if t == nil {
		return nil, h.Errorf("input %d must be a tensor", i)
	}
	if t.IsString() {
		return nil, fmt.Errorf("%s: input %d: string tensors: %w", h.Node.Describe(), i, ErrUnsupported)
	}
	if t.Lit.DType().IsComplex() {
		return nil, fmt.Errorf("%s: input %d: complex tensors: %w", h.Node.Describe(), i, ErrUnsupported)
	}
	return t.Lit, nil
}

func hostInt64s(vals []int64, dims ...int64) *onnx.Value {
	return onnx.TensorValue(IntTensor(vals, dims...))
}

func hostNonZero(h *HostCtx) error {
	e, err := hostElemsOf(h, 0)
	if err != nil {
		return err
	}
	dims := e.dims()
	var nz []int
	if e.t.IsString() {
		for i, v := range e.t.Strs {
			if v != "" {
				nz = append(nz, i)
			}
		}
	} else {
		l := e.t.Lit
		isFloat := l.DType().IsFloat()
		for i := range l.Len() {
			if l.Bits(i) != 0 && !(isFloat && l.GetFloat64(i) == 0) {
				nz = append(nz, i)
			}
		}
	}
	if len(dims) == 0 {
		dims = []int64{1}
	}
	r := len(dims)
	n := len(nz)
	out := make([]int64, r*n)
	for k, i := range nz {
		rem := int64(i)
		for a := r - 1; a >= 0; a-- {
			out[a*n+k] = rem % dims[a]
			rem /= dims[a]
		}
	}
	h.Set(0, hostInt64s(out, int64(r), int64(n)))
	return nil
}

// hostElems is a numeric or string tensor's elements, for host kernels
// that compare and move them.
type hostElems struct {
	t *onnx.Tensor
}

func hostElemsOf(h *HostCtx, i int) (hostElems, error) {
	t := h.Tensor(i)
	if t == nil {
		return hostElems{}, h.Errorf("input %d must be a tensor", i)
	}
	if !t.IsString() && t.Lit.DType().IsComplex() {
		return hostElems{}, fmt.Errorf("%s: input %d: complex tensors: %w", h.Node.Describe(), i, ErrUnsupported)
	}
	return hostElems{t}, nil
}

func (e hostElems) dims() []int64 { return e.t.Dims() }

func (e hostElems) cmp() func(i, j int) int {
	if e.t.IsString() {
		s := e.t.Strs
		return func(i, j int) int { return cmp.Compare(s[i], s[j]) }
	}
	return hostCmp(e.t.Lit)
}

// gather makes a tensor of the given dims whose element k is element
// src(k) of e.
func (e hostElems) gather(dims []int64, src func(k int) int) (*onnx.Value, error) {
	n := int(numElems(dims))
	if e.t.IsString() {
		strs := make([]string, n)
		for k := range strs {
			strs[k] = e.t.Strs[src(k)]
		}
		t, err := onnx.NewStringTensor(strs, dims...)
		if err != nil {
			return nil, err
		}
		return onnx.TensorValue(t), nil
	}
	y := hlo.NewLiteral(hlo.ArrayShape(e.t.Lit.DType(), dims...))
	for k := range n {
		y.SetBits(k, e.t.Lit.Bits(src(k)))
	}
	return onnx.LiteralValue(y), nil
}

// hostCmp compares elements i and j of l numerically.
func hostCmp(l *hlo.Literal) func(i, j int) int {
	t := l.DType()
	switch {
	case t.IsFloat():
		// NaNs are equal to each other and sort last, as numpy's unique.
		return func(i, j int) int {
			a, b := l.GetFloat64(i), l.GetFloat64(j)
			an, bn := a != a, b != b
			if an || bn {
				return cmp.Compare(boolInt(an), boolInt(bn))
			}
			return cmp.Compare(a, b)
		}
	case t.IsUnsigned():
		return func(i, j int) int { return cmp.Compare(l.GetUint64(i), l.GetUint64(j)) }
	default:
		return func(i, j int) int { return cmp.Compare(l.GetInt64(i), l.GetInt64(j)) }
	}
}

func hostUnique(h *HostCtx) error {
	e, err := hostElemsOf(h, 0)
	if err != nil {
		return err
	}
	dims := e.dims()
	outer, n, inner := int64(1), numElems(dims), int64(1)
	var axis int64 = -1
	if h.Node.Has("axis") {
		a, ok := NormAxis(h.Node.Int("axis", 0), len(dims))
		if !ok {
			return h.Errorf("axis out of range")
		}
		axis = a
		outer, n, inner = numElems(dims[:a]), dims[a], numElems(dims[a+1:])
	}
	at := func(o, i, in int64) int { return int((o*n+i)*inner + in) }
	ec := e.cmp()
	cmpSlices := func(i, j int64) int {
		for o := range outer {
			for in := range inner {
				if c := ec(at(o, i, in), at(o, j, in)); c != 0 {
					return c
				}
			}
		}
		return 0
	}
	order := make([]int64, n)
	for i := range order {
		order[i] = int64(i)
	}
	slices.SortStableFunc(order, cmpSlices)
	type group struct{ first, count int64 }
	var groups []group
	groupOf := make([]int, n)
	for k, i := range order {
		if k == 0 || cmpSlices(order[k-1], i) != 0 {
			groups = append(groups, group{first: i})
		}
		g := len(groups) - 1
		groups[g].count++
		groupOf[i] = g
	}
	pos := make([]int, len(groups)) // group -> output position
	perm := make([]int, len(groups))
	for g := range perm {
		perm[g] = g
	}
	if h.Node.Int("sorted", 1) == 0 {
		slices.SortFunc(perm, func(a, b int) int { return cmp.Compare(groups[a].first, groups[b].first) })
	}
	for p, g := range perm {
		pos[g] = p
	}
	u := int64(len(groups))
	ydims := []int64{u}
	if axis >= 0 {
		ydims = slices.Clone(dims)
		ydims[axis] = u
	}
	y, err := e.gather(ydims, func(k int) int {
		in := int64(k) % inner
		p := (int64(k) / inner) % u
		o := int64(k) / inner / u
		return at(o, groups[perm[p]].first, in)
	})
	if err != nil {
		return err
	}
	first := make([]int64, u)
	counts := make([]int64, u)
	for p, g := range perm {
		first[p] = groups[g].first
		counts[p] = groups[g].count
	}
	inv := make([]int64, n)
	for i := range inv {
		inv[i] = int64(pos[groupOf[i]])
	}
	h.Set(0, y)
	h.Set(1, hostInt64s(first, u))
	h.Set(2, hostInt64s(inv, n))
	h.Set(3, hostInt64s(counts, u))
	return nil
}

func hostCompress(h *HostCtx) error {
	e, err := hostElemsOf(h, 0)
	if err != nil {
		return err
	}
	cl, err := hostNumeric(h, 1)
	if err != nil {
		return err
	}
	dims := e.dims()
	n, inner := numElems(dims), int64(1)
	var axis int64 = -1
	if h.Node.Has("axis") {
		a, ok := NormAxis(h.Node.Int("axis", 0), len(dims))
		if !ok {
			return h.Errorf("axis out of range")
		}
		axis = a
		n, inner = dims[a], numElems(dims[a+1:])
	}
	if int64(cl.Len()) > n {
		return h.Errorf("condition has %d elements for a dimension of %d", cl.Len(), n)
	}
	var keep []int64
	for i := range cl.Len() {
		if cl.Bits(i) != 0 {
			keep = append(keep, int64(i))
		}
	}
	k := int64(len(keep))
	ydims := []int64{k}
	if axis >= 0 {
		ydims = slices.Clone(dims)
		ydims[axis] = k
	}
	y, err := e.gather(ydims, func(j int) int {
		in := int64(j) % inner
		p := (int64(j) / inner) % k
		o := int64(j) / inner / k
		return int((o*n+keep[p])*inner + in)
	})
	if err != nil {
		return err
	}
	h.Set(0, y)
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
