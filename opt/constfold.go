package opt

import (
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// ConstantFolding replaces instructions whose operands are all constants
// by the constant the evaluator computes (XLA's HloConstantFolding). It
// counts a broadcast of a constant as a constant where a plain constant
// operand is as large as the result, and leaves alone what would only
// grow the module or cannot be folded:
// results over FoldLimitBytes, broadcasts and iotas (folding just
// materializes them), side-effecting instructions, loops (which may not
// terminate), tuples, and ops the evaluator refuses.
var ConstantFolding = pass.Func("constant-folding", runConstantFolding)

// FoldLimitBytes caps the size of a folded constant, but for a convert of
// a constant up to WidenLimitBytes (see widensConstant).
const (
	FoldLimitBytes  = 1 << 20
	WidenLimitBytes = 256 << 20
)

func shapeBytes(s hlo.Shape) int64 {
	return s.NumElements() * int64(max(s.DType.Bits()/8, 1))
}

// widensConstant reports whether in, of the given size, is a convert of
// a plain constant no more than twice as large, within WidenLimitBytes:
// a model stored in f16 whose convolutions the importer computes in f32
// widens its weights on every call otherwise, and the kernels cannot
// keep their packing of a value computed anew each time (an fp16
// MobileNetV2 spent a fifth of its time widening and repacking its
// 1280×320 head). Folding makes the weights a constant once, as ONNX
// Runtime casts an initializer once at session start.
//
// A reverse, transpose, reshape, copy or slice of a constant folds too
// within that limit (it never grows): ONNX's ConvTranspose flips its
// weights (reverse), and a kernel computed anew on every call is one the
// kernels repack on every call (HiFi-GAN's first 8× upsampling, 8 MB of
// weights: the rebuilt product matrix alone 2 ms a call).
func widensConstant(in *hlo.Instruction, bytes int64) bool {
	if bytes > WidenLimitBytes || len(in.Operands) != 1 {
		return false
	}
	o := in.Operands[0]
	if o.Opcode != hlo.OpConstant {
		return false
	}
	switch in.Opcode {
	case hlo.OpConvert:
		return bytes <= 2*shapeBytes(o.Shape)
	case hlo.OpReverse, hlo.OpTranspose, hlo.OpReshape, hlo.OpCopy, hlo.OpSlice:
		return bytes <= shapeBytes(o.Shape)
	}
	return false
}

func runConstantFolding(m *hlo.Module) (bool, error) {
	fx := newEffects()
	var ev eval.Evaluator
	changed := false
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if !foldable(in, fx) {
				continue
			}
			ops := make([]*hlo.Literal, len(in.Operands))
			var err error
			for i, o := range in.Operands {
				ops[i] = o.Literal
				if o.Opcode == hlo.OpBroadcast {
					if ops[i], err = ev.Instruction(o, []*hlo.Literal{o.Operands[0].Literal}); err != nil {
						break
					}
				}
			}
			if err != nil {
				continue
			}
			v, err := ev.Instruction(in, ops)
			if err != nil || !v.Shape().IsArray() {
				continue // not foldable here; the backend will compute it
			}
			in.Opcode, in.Operands, in.Attrs, in.Literal = hlo.OpConstant, nil, keepGenericAttrs(in.Attrs), v
			changed = true
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}

func foldable(in *hlo.Instruction, fx *effects) bool {
	switch in.Opcode {
	case hlo.OpConstant, hlo.OpParameter, hlo.OpBroadcast, hlo.OpIota, hlo.OpWhile,
		hlo.OpTuple, hlo.OpGetTupleElement, hlo.OpAfterAll, hlo.OpRngBitGenerator:
		return false
	}
	if !in.Shape.IsArray() || len(in.Operands) == 0 || fx.instruction(in) || len(in.ControlPredecessors) > 0 {
		return false
	}
	if bytes := shapeBytes(in.Shape); bytes > FoldLimitBytes && !widensConstant(in, bytes) {
		return false
	}
	// Broadcasts of constants count as constants (as in XLA) in
	// elementwise ops where a plain constant operand is at least the
	// result's size (a concatenate or dot of broadcasts stays: the
	// backend's kernels read them better): the fold
	// then replaces work on that constant (x + ε, a batch norm's
	// 1/√(var+ε)), never turns broadcasts into a larger constant.
	largest, broadcasts := int64(-1), false
	for _, o := range in.Operands {
		c := o
		if o.Opcode == hlo.OpBroadcast && len(o.Operands) == 1 && in.Opcode.IsElementwise() {
			c, broadcasts = o.Operands[0], true
		} else if o.Opcode == hlo.OpConstant {
			largest = max(largest, o.Shape.NumElements())
		}
		if c.Opcode != hlo.OpConstant || c.Literal == nil || c.Literal.IsElided() {
			return false
		}
	}
	return !broadcasts || largest >= in.Shape.NumElements()
}

// keepGenericAttrs keeps the attributes every instruction may carry
// (metadata, sharding, ...) and drops the opcode's own.
func keepGenericAttrs(attrs []hlo.Attr) []hlo.Attr {
	var out []hlo.Attr
	for _, a := range attrs {
		for _, g := range hlo.GenericAttrs {
			if a.Name == g {
				out = append(out, a)
			}
		}
	}
	return out
}
