package stablehlo

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

func init() {
	register(convertReduce, "stablehlo.reduce")
	register(convertReduceWindow, "stablehlo.reduce_window")
	register(convertSelectAndScatter, "stablehlo.select_and_scatter")
	register(convertScatter, "stablehlo.scatter")
	register(convertSort, "stablehlo.sort")
	register(convertMap, "stablehlo.map")
	register(convertWhile, "stablehlo.while")
	register(convertIf, "stablehlo.if")
	register(convertCase, "stablehlo.case")
}

// regionComp converts a region whose block arguments are its parameters
// (reducers, comparators) into a computation; several results are
// returned as a tuple.
func (s *scope) regionComp(stem string, r *mlir.Region) (*hlo.Computation, error) {
	if len(r.Blocks) != 1 {
		return nil, fmt.Errorf("region of %d blocks: %w", len(r.Blocks), ErrUnsupported)
	}
	b := r.Blocks[0]
	comp := s.c.newComp(stem)
	inner := newScope(s.c, comp, s)
	for i, a := range b.Args {
		sh, err := shapeOfType(a.Type)
		if err != nil {
			return nil, err
		}
		inner.vals[a] = inner.param(i, sh, fmt.Sprintf("p%d", i))
	}
	res, err := inner.block(b)
	if err != nil {
		return nil, err
	}
	return comp, inner.setRoot(res)
}

func (s *scope) setRoot(res []*hlo.Instruction) error {
	switch len(res) {
	case 0:
		return fmt.Errorf("region returns nothing")
	case 1:
		s.comp.Root = res[0]
	default:
		s.comp.Root = s.tuple(res)
	}
	return nil
}

// results wraps an instruction of one or several results into one
// instruction per result.
func (s *scope) results(in *hlo.Instruction, n int) []*hlo.Instruction {
	if n == 1 {
		return []*hlo.Instruction{in}
	}
	return s.untuple(in)
}

// resultsShape is the HLO shape of an op's results: the one result's, or
// a tuple of them.
func resultsShape(op *mlir.Op) (hlo.Shape, error) {
	shapes := make([]hlo.Shape, len(op.Results))
	for i := range op.Results {
		sh, err := resultShape(op, i)
		if err != nil {
			return hlo.Shape{}, err
		}
		shapes[i] = sh
	}
	if len(shapes) == 1 {
		return shapes[0], nil
	}
	return hlo.TupleShape(shapes...), nil
}

// regionOp converts an op of one region called as to_apply.
func regionOp(s *scope, op *mlir.Op, code hlo.Opcode, attrs []hlo.Attr) ([]*hlo.Instruction, error) {
	if isQuant(op) {
		return nil, fmt.Errorf("ops on quantized tensors: %w", ErrUnsupported)
	}
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultsShape(op)
	if err != nil {
		return nil, err
	}
	if len(op.Regions) != 1 {
		return nil, fmt.Errorf("want one region, have %d", len(op.Regions))
	}
	comp, err := s.regionComp(code.String(), op.Regions[0])
	if err != nil {
		return nil, err
	}
	attrs = append(attrs, hlo.Attr{Name: "to_apply", Value: comp})
	return s.results(s.add(code, sh, ins, attrs...), len(op.Results)), nil
}

func convertReduce(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	dims, err := opInts(op, "dimensions")
	if err != nil {
		return nil, err
	}
	return regionOp(s, op, hlo.OpReduce, []hlo.Attr{{Name: "dimensions", Value: dims}})
}

// window builds an HLO window from StableHLO's window attributes.
func window(op *mlir.Op, rank int, size, stride, base, win, pad string) (*hlo.Window, error) {
	sizes, err := opInts(op, size)
	if err != nil {
		return nil, err
	}
	if sizes == nil {
		sizes = orOnes(nil, rank)
	}
	w := hlo.NewWindow(sizes...)
	n := len(sizes)
	for _, f := range []struct {
		name string
		set  func(d *hlo.WindowDim, v int64)
	}{
		{stride, func(d *hlo.WindowDim, v int64) { d.Stride = v }},
		{base, func(d *hlo.WindowDim, v int64) { d.LhsDilation = v }},
		{win, func(d *hlo.WindowDim, v int64) { d.RhsDilation = v }},
	} {
		if f.name == "" {
			continue
		}
		v, err := opInts(op, f.name)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if len(v) != n {
			return nil, fmt.Errorf("%s has %d values for %d dimensions", f.name, len(v), n)
		}
		for i := range v {
			f.set(&w.Dims[i], v[i])
		}
	}
	lo, hi, err := pairs(op.Attr(pad), n)
	if err != nil {
		return nil, err
	}
	for i := range n {
		w.Dims[i].PadLo, w.Dims[i].PadHi = lo[i], hi[i]
	}
	return w, nil
}

func convertReduceWindow(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	rank := 0
	if tt, ok := op.Operands[0].Type.(mlir.TensorType); ok {
		rank = len(tt.Dims)
	}
	w, err := window(op, rank, "window_dimensions", "window_strides", "base_dilations", "window_dilations", "padding")
	if err != nil {
		return nil, err
	}
	return regionOp(s, op, hlo.OpReduceWindow, []hlo.Attr{{Name: "window", Value: w}})
}

func convertSelectAndScatter(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	w, err := window(op, ins[0].Shape.Rank(), "window_dimensions", "window_strides", "", "", "padding")
	if err != nil {
		return nil, err
	}
	if len(op.Regions) != 2 {
		return nil, fmt.Errorf("want two regions, have %d", len(op.Regions))
	}
	sel, err := s.regionComp("select", op.Regions[0])
	if err != nil {
		return nil, err
	}
	sc, err := s.regionComp("scatter", op.Regions[1])
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpSelectAndScatter, sh, ins,
		hlo.Attr{Name: "window", Value: w}, hlo.Attr{Name: "select", Value: sel}, hlo.Attr{Name: "scatter", Value: sc})}, nil
}

func convertScatter(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	dn := op.Attr("scatter_dimension_numbers")
	var attrs []hlo.Attr
	for _, f := range [][2]string{
		{"update_window_dims", "update_window_dims"},
		{"inserted_window_dims", "inserted_window_dims"},
		{"input_batching_dims", "input_batching_dims"},
		{"scatter_indices_batching_dims", "scatter_indices_batching_dims"},
		{"scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims"},
	} {
		v, err := intsOf(field(dn, f[0]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f[0], err)
		}
		if v == nil {
			v = []int64{}
		}
		attrs = append(attrs, hlo.Attr{Name: f[1], Value: v})
	}
	ivd, _ := intOf(field(dn, "index_vector_dim"))
	attrs = append(attrs, hlo.Attr{Name: "index_vector_dim", Value: ivd})
	if boolOf(op.Attr("indices_are_sorted")) {
		attrs = append(attrs, hlo.Attr{Name: "indices_are_sorted", Value: true})
	}
	if boolOf(op.Attr("unique_indices")) {
		attrs = append(attrs, hlo.Attr{Name: "unique_indices", Value: true})
	}
	return regionOp(s, op, hlo.OpScatter, attrs)
}

func convertSort(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	d := opInt(op, "dimension", -1)
	if d < 0 {
		if tt, ok := op.Operands[0].Type.(mlir.TensorType); ok {
			d += int64(len(tt.Dims))
		}
	}
	attrs := []hlo.Attr{{Name: "dimensions", Value: []int64{d}}}
	if boolOf(op.Attr("is_stable")) {
		attrs = append(attrs, hlo.Attr{Name: "is_stable", Value: true})
	}
	return regionOp(s, op, hlo.OpSort, attrs)
}

func convertMap(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	dims, err := opInts(op, "dimensions")
	if err != nil {
		return nil, err
	}
	return regionOp(s, op, hlo.OpMap, []hlo.Attr{{Name: "dimensions", Value: dims}})
}
