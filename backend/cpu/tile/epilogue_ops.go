package tile

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Epilogues the kernels apply themselves: an epilogue that is, from the
// product C outward, an add of a bias along C's rows (a vector over the
// last dimension), an add of a residual read at the output's own
// positions (or of the residual plus a bias of its own), and a maximum
// with a constant (ReLU) and a minimum with one (a clamp: ReLU6), any of
// them left out but in that order, is
// what kernels.TileOps describes. The direct
// convolution's kernels then finish each tile as they store it, the same
// ops in the same order on the same operands, instead of the epilogue's
// pass over every block.

// opsForm is an epilogue's kernels.TileOps with operands still to bind:
// the fusion operands of the bias and the residual (-1: none).
type opsForm struct {
	flags                  int
	floor, ceil            float32
	bias, residue, resBias int
}

// matchOps returns ec's opsForm, or nil where ec is not of that form.
// cParam is C's parameter and shape the output's.
func matchOps(ec *hlo.Computation, cParam int, shape hlo.Shape) *opsForm {
	f := &opsForm{bias: -1, residue: -1, resBias: -1}
	x := ec.Root
	if x.Shape.DType != hlo.F32 || shape.Rank() < 1 {
		return nil
	}
	// The bounds: clamp(lo, x, hi) is maximum then minimum (the generated
	// code's nanMin(nanMax(x, lo), hi)), as minimum(maximum(x, lo), hi).
	if x.Opcode == hlo.OpClamp {
		lo, okLo := scalarConstant(x.Operands[0])
		hi, okHi := scalarConstant(x.Operands[2])
		if !okLo || !okHi || lo != lo || hi != hi {
			return nil
		}
		f.flags, f.floor, f.ceil = kernels.OpsFloor|kernels.OpsCeil, lo, hi
		x = x.Operands[1]
	}
	if x.Opcode == hlo.OpMinimum && f.flags == 0 {
		v, ok := scalarConstant(x.Operands[1])
		if !ok || v != v {
			return nil
		}
		f.flags, f.ceil = kernels.OpsCeil, v
		x = x.Operands[0]
	}
	if x.Opcode == hlo.OpMaximum && f.flags&kernels.OpsFloor == 0 {
		v, ok := scalarConstant(x.Operands[1])
		if !ok || v != v {
			return nil
		}
		f.flags, f.floor = f.flags|kernels.OpsFloor, v
		x = x.Operands[0]
	}
	if x.Opcode == hlo.OpAdd {
		for side, o := range x.Operands {
			if f.residual(o, cParam, shape) {
				f.flags |= kernels.OpsRes
				if side == 0 {
					f.flags |= kernels.OpsResFirst
				}
				x = x.Operands[1-side]
				break
			}
		}
	}
	if x.Opcode == hlo.OpAdd {
		for side, o := range x.Operands {
			if p := rowBias(o, shape); p >= 0 {
				f.flags |= kernels.OpsBias
				if side == 0 {
					f.flags |= kernels.OpsBiasFirst
				}
				f.bias, x = p, x.Operands[1-side]
				break
			}
		}
	}
	if f.flags == 0 || x.Opcode != hlo.OpParameter || int(x.ParamNumber) != cParam {
		return nil
	}
	return f
}

// residual reports whether x is a residual f can take, a parameter of the
// output's shape other than C or its sum with a bias along the rows,
// and sets f's residual operands if so.
func (f *opsForm) residual(x *hlo.Instruction, cParam int, shape hlo.Shape) bool {
	if p := wholeParam(x, shape); p >= 0 && p != cParam {
		f.residue = p
		return true
	}
	if x.Opcode != hlo.OpAdd {
		return false
	}
	for side, o := range x.Operands {
		p, b := wholeParam(o, shape), rowBias(x.Operands[1-side], shape)
		if p >= 0 && p != cParam && b >= 0 {
			f.residue, f.resBias = p, b
			f.flags |= kernels.OpsResBias
			if side == 1 {
				f.flags |= kernels.OpsResBiasFirst
			}
			return true
		}
	}
	return false
}

// scalarConstant is the value of x where x is an f32 constant scalar or
// its broadcast.
func scalarConstant(x *hlo.Instruction) (float32, bool) {
	if x.Opcode == hlo.OpBroadcast && x.Operands[0].Shape.Rank() == 0 {
		x = x.Operands[0]
	}
	if x.Opcode != hlo.OpConstant || x.Shape.Rank() != 0 || x.Shape.DType != hlo.F32 || x.Literal == nil {
		return 0, false
	}
	return float32(x.Literal.GetFloat64(0)), true
}

// wholeParam is the fusion operand x is, where x is an f32 parameter of
// the output's shape (read at the output's own positions), else -1.
func wholeParam(x *hlo.Instruction, shape hlo.Shape) int {
	if x.Opcode != hlo.OpParameter || x.Shape.DType != hlo.F32 || !x.Shape.SameDims(shape) {
		return -1
	}
	return int(x.ParamNumber)
}

// rowBias is the fusion operand x broadcasts, where x broadcasts an f32
// parameter vector along the output's last dimension, else -1.
func rowBias(x *hlo.Instruction, shape hlo.Shape) int {
	if x.Opcode != hlo.OpBroadcast || !x.Shape.SameDims(shape) {
		return -1
	}
	v, last := x.Operands[0], shape.Rank()-1
	dims := x.Dimensions()
	if v.Opcode != hlo.OpParameter || v.Shape.DType != hlo.F32 || v.Shape.Rank() != 1 ||
		len(dims) != 1 || dims[0] != int64(last) || v.Shape.Dims[0] != shape.Dims[last] {
		return -1
	}
	return int(v.ParamNumber)
}

// f32Arg is operand i of args as f32 data n long (nil, true where i is
// -1: the form has no such operand), or false where it is not.
func f32Arg(args []*hlo.Literal, i, n int) ([]float32, bool) {
	if i < 0 {
		return nil, true
	}
	if i >= len(args) {
		return nil, false
	}
	d, _ := args[i].Data().([]float32)
	return d, len(d) == n
}

// BindOps is the epilogue as kernels.TileOps on this execution's
// operands args, C being c with rows of ldc elements, or nil where it is
// not of that form or its operands do not fit (the kernels then run the
// epilogue Bind made).
func (e *Epilogue) BindOps(args []*hlo.Literal, c []float32, ldc int) *kernels.TileOps {
	f := e.ops
	if f == nil {
		return nil
	}
	ops := &kernels.TileOps{Flags: f.flags, Floor: f.floor, Ceil: f.ceil, LdRes: ldc}
	var ok bool
	if ops.Bias, ok = f32Arg(args, f.bias, ldc); !ok {
		return nil
	}
	if ops.Res, ok = f32Arg(args, f.residue, len(c)); !ok {
		return nil
	}
	if ops.ResBias, ok = f32Arg(args, f.resBias, ldc); !ok {
		return nil
	}
	return ops
}
