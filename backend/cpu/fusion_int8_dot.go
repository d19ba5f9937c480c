package cpu

import (
	"github.com/axle-ml/axle/hlo"
)

// Integer dot fusion: a dot of s32 values that are converts of 8-bit
// integers, u8 or s8 on the left and s8 on the right (how ONNX's
// MatMulInteger and quantized matmuls arrive: the operands widened to s32
// first), becomes a kCustom fusion of the two converts and the dot, so
// its kernel reads the 8-bit operands themselves (lowerInt8DotFusion)
// rather than s32 copies four times their size through a generic loop.
// A convert with other readers is copied into the fusion and stays.

// kCustom is the kind of a fusion a library-style kernel takes whole.
const kCustom = "kCustom"

// fuseInt8Dots rewrites c, returning the number of fusions made.
func fuseInt8Dots(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	users := c.Users()
	var groups []group
	for _, d := range c.Instructions {
		a, b, ok := int8DotOperands(d)
		if !ok {
			continue
		}
		copied := map[*hlo.Instruction]bool{
			a: len(users[a]) > 1 || a == c.Root,
			b: len(users[b]) > 1 || b == c.Root,
		}
		groups = append(groups, group{members: []*hlo.Instruction{d, a, b}, kind: kCustom, copied: copied, elem: d.Shape})
	}
	for _, g := range groups {
		if err := buildFusion(m, c, g, names); err != nil {
			return 0, err
		}
	}
	return len(groups), nil
}

// int8DotOperands reports whether d is an s32 dot of two distinct converts
// to s32, of a u8 or s8 array (left) and an s8 array (right), and returns
// the converts.
func int8DotOperands(d *hlo.Instruction) (a, b *hlo.Instruction, ok bool) {
	if d.Opcode != hlo.OpDot || d.Shape.DType != hlo.S32 || len(d.Operands) != 2 || len(d.ControlPredecessors) > 0 {
		return nil, nil, false
	}
	a, b = d.Operands[0], d.Operands[1]
	if a == b || !widened8(a, hlo.U8, hlo.S8) || !widened8(b, hlo.S8) {
		return nil, nil, false
	}
	return a, b, true
}

// widened8 reports whether x is a plain convert to s32 of an array of one
// of the types from.
func widened8(x *hlo.Instruction, from ...hlo.DType) bool {
	if x.Opcode != hlo.OpConvert || x.Shape.DType != hlo.S32 || len(x.ControlPredecessors) > 0 || !plainArray(x.Shape) {
		return false
	}
	t := x.Operands[0].Shape.DType
	for _, f := range from {
		if t == f {
			return true
		}
	}
	return false
}
