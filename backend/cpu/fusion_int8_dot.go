package cpu

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Integer dot fusion: a dot of s32 values that are 8-bit integers
// widened, each with its zero point subtracted or not, becomes a kCustom
// fusion its kernel runs on the 8-bit GEMM (lowerInt8DotFusion). That is
// how quantized matmuls arrive (ONNX's MatMulInteger and QLinearMatMul):
//
//	dot(convert(a8) - broadcast(za), convert(b8) - broadcast(zb))
//
// with a8 u8 or s8 and b8 s8 or u8, and zero points that do not vary
// along the contracted dimensions (per tensor, per row of a, per column
// of b). The kernel reads the 8-bit operands themselves, not s32 copies
// four times their size, and folds the zero points in as sums, which
// wrapping s32 arithmetic keeps bit-exact:
//
//	Σ(a-za)(b-zb) = Σab - zb·Σa - za·Σb + K·za·zb.
//
// An s32 constant operand (the standard passes fold a small constant's
// widening and zero points into one) is split back into 8-bit values
// and zero points first (fusion_int8_const.go). A member with readers
// outside the fusion is copied into it and stays.

// kCustom is the kind of a fusion a library-style kernel takes whole.
const kCustom = "kCustom"

// fuseInt8Dots rewrites c, returning the number of fusions made.
func fuseInt8Dots(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	return fuseInt8Products(m, c, names, int8DotOperands)
}

// fuseInt8Products makes a kCustom fusion of every product of c whose
// two operands match reports as 8-bit values widened (the integer dot
// and convolution fusions), returning how many it made.
func fuseInt8Products(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet,
	match func(*hlo.Instruction) (a, b int8Operand, ok bool)) (int, error) {
	var dots []*hlo.Instruction
	split := false
	for _, d := range slices.Clone(c.Instructions) {
		a, b, ok := match(d)
		if !ok {
			continue
		}
		dots = append(dots, d)
		for k, o := range []int8Operand{a, b} {
			if o.split != nil {
				holder, i := d, k
				if o.sub != nil {
					holder, i = o.sub, 0
				}
				holder.Operands[i] = o.split.emit(c, o.wide, names)
				split = true
			}
		}
	}
	if split {
		if err := c.SortTopologically(); err != nil { // the split constants were appended
			return 0, err
		}
	}
	users := c.Users()
	for _, d := range dots {
		a, b, _ := match(d)
		members := []*hlo.Instruction{d}
		for _, x := range append(a.members(), b.members()...) {
			if !slices.Contains(members, x) {
				members = append(members, x)
			}
		}
		copied := map[*hlo.Instruction]bool{}
		for _, x := range members[1:] {
			copied[x] = x == c.Root || slices.ContainsFunc(users[x], func(u *hlo.Instruction) bool { return !slices.Contains(members, u) })
		}
		if err := buildFusion(m, c, group{members: members, kind: kCustom, copied: copied, elem: d.Shape}, names); err != nil {
			return 0, err
		}
	}
	return len(dots), nil
}

// int8Operand is one side of an integer dot: the 8-bit array x widened
// to s32 (wide), minus zero points (zp, a broadcast, nil for none); or
// wide an s32 constant that split rewrites so when the dot is fused.
type int8Operand struct {
	sub, wide, zp, x *hlo.Instruction
	split            *constSplit
}

// members are the instructions the fusion takes (x and the zero points'
// operand stay outside, as its parameters).
func (o int8Operand) members() []*hlo.Instruction {
	if o.sub == nil {
		return []*hlo.Instruction{o.wide}
	}
	return []*hlo.Instruction{o.sub, o.wide, o.zp}
}

// int8DotOperands reports whether d is an s32 dot of two distinct
// operands of 8-bit values (u8 or s8 on either side), zero points
// subtracted or not, and returns them.
func int8DotOperands(d *hlo.Instruction) (a, b int8Operand, ok bool) {
	if d.Opcode != hlo.OpDot || d.Shape.DType != hlo.S32 || len(d.Operands) != 2 || len(d.ControlPredecessors) > 0 {
		return a, b, false
	}
	lc, _ := d.Ints("lhs_contracting_dims")
	rc, _ := d.Ints("rhs_contracting_dims")
	if d.Operands[0] == d.Operands[1] {
		return a, b, false
	}
	a, okA := int8OperandOf(d.Operands[0], lc)
	b, okB := int8OperandOf(d.Operands[1], rc)
	return a, b, okA && okB && a.wide != b.wide
}

// int8OperandOf matches v as convert(x8) or convert(x8) - broadcast(z),
// the broadcast not along the contracting dimensions (the zero point is
// one value per row of the product's operand).
func int8OperandOf(v *hlo.Instruction, contracting []int64) (int8Operand, bool) {
	o := int8Operand{wide: v}
	if v.Opcode == hlo.OpSubtract && len(v.ControlPredecessors) == 0 && plainArray(v.Shape) {
		z := v.Operands[1]
		if z.Opcode != hlo.OpBroadcast || len(z.ControlPredecessors) > 0 || slices.ContainsFunc(z.Dimensions(), func(d int64) bool {
			return slices.Contains(contracting, d)
		}) {
			return o, false
		}
		o.sub, o.wide, o.zp = v, v.Operands[0], z
	}
	if widened8(o.wide, hlo.U8, hlo.S8) {
		o.x = o.wide.Operands[0]
		return o, true
	}
	o.split = splitConstant(o.wide, contracting, o.sub == nil)
	return o, o.split != nil
}

// widened8 reports whether x is a plain convert to s32 of an array of one
// of the types from.
func widened8(x *hlo.Instruction, from ...hlo.DType) bool {
	if x.Opcode != hlo.OpConvert || x.Shape.DType != hlo.S32 || len(x.ControlPredecessors) > 0 || !plainArray(x.Shape) {
		return false
	}
	return slices.Contains(from, x.Operands[0].Shape.DType)
}
