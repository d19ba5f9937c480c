package hlo_test

import "testing"

func TestInferShapeOps(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "broadcast", doc: "Broadcast (HLO): operand dimension i maps to result dimension broadcast_dimensions[i]",
			hlo: unaryAttrs("f32[2,3] broadcast", "f32[3]", ", dimensions={1}"), want: "f32[2,3]"},
		{name: "broadcast of scalar", doc: "Broadcast: a scalar fills the whole result",
			hlo: unaryAttrs("s32[4,5] broadcast", "s32[]", ", dimensions={}"), want: "s32[4,5]"},
		{name: "broadcast size mismatch", doc: "Broadcast (HLO): mapped dimensions keep their size",
			hlo: unaryAttrs("f32[3,2] broadcast", "f32[3]", ", dimensions={1}"), err: "does not match"},
		{name: "broadcast type change", doc: "Broadcast keeps the element type",
			hlo: unaryAttrs("f64[2,3] broadcast", "f32[3]", ", dimensions={1}"), err: "element type"},
		{name: "reshape", doc: "Reshape: the element count is unchanged",
			hlo: unary("f32[3,2] reshape", "f32[2,3]"), want: "f32[3,2]"},
		{name: "reshape count", doc: "Reshape: the element count is unchanged",
			hlo: unary("f32[7] reshape", "f32[2,3]"), err: "mismatched element counts: from=6"},
		{name: "transpose", doc: "Transpose: result dimension i is operand dimension permutation[i]",
			hlo: unaryAttrs("transpose", "f32[2,3,4]", ", dimensions={1,2,0}"), want: "f32[3,4,2]"},
		{name: "transpose not a permutation", doc: "Transpose: the dimensions are a permutation",
			hlo: unaryAttrs("f32[2,3] transpose", "f32[2,3]", ", dimensions={0,0}"), err: "not a permutation"},
		{name: "strided slice", doc: "Slice: each dimension has ceil((limit-start)/stride) elements",
			hlo: unaryAttrs("slice", "f32[10,8]", ", slice={[2:10:3], [0:8]}"), want: "f32[3,8]"},
		{name: "slice past the end", doc: "Slice: limit indices are at most the dimension size",
			hlo: unaryAttrs("f32[2] slice", "f32[10]", ", slice={[9:11]}"), err: "limit index (11)"},
		{name: "dynamic-slice", doc: "DynamicSlice: the result has the slice sizes",
			hlo: module("", `
  x = f32[10,8] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = dynamic-slice(x, i, j), dynamic_slice_sizes={2,8}`), want: "f32[2,8]"},
		{name: "dynamic-slice too big", doc: "DynamicSlice: slice sizes fit in the operand",
			hlo: module("", `
  x = f32[10,8] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[2,9] dynamic-slice(x, i, i), dynamic_slice_sizes={2,9}`), err: "slice dim size 9 greater than"},
		{name: "dynamic-slice index count", doc: "DynamicSlice: one start index per operand dimension",
			hlo: module("", `
  x = f32[10,8] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[2,8] dynamic-slice(x, i), dynamic_slice_sizes={2,8}`), err: "must match rank 2"},
		{name: "dynamic-update-slice", doc: "DynamicUpdateSlice: the result has the operand's shape",
			hlo: module("", `
  x = f32[10,8] parameter(0)
  u = f32[2,8] parameter(1)
  i = s32[] parameter(2)
  ROOT d = dynamic-update-slice(x, u, i, i)`), want: "f32[10,8]"},
		{name: "dynamic-update-slice too big", doc: "DynamicUpdateSlice: the update fits in the operand",
			hlo: module("", `
  x = f32[10,8] parameter(0)
  u = f32[2,9] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[10,8] dynamic-update-slice(x, u, i, i)`), err: "update dim size 9"},
		{name: "concatenate", doc: "ConcatInDim: sizes add up along the dimension, others are equal",
			hlo: module("", `
  a = f32[2,3] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT c = concatenate(a, b), dimensions={0}`), want: "f32[6,3]"},
		{name: "concatenate other dims differ", doc: "ConcatInDim: all dimensions but the concatenated one are equal",
			hlo: module("", `
  a = f32[2,3] parameter(0)
  b = f32[2,4] parameter(1)
  ROOT c = f32[4,3] concatenate(a, b), dimensions={0}`), err: "differ in dimensions other than the one being concatenated"},
		{name: "pad", doc: "Pad: size + low + high + (size-1)*interior; negative padding removes elements",
			hlo: module("", `
  x = f32[3,4] parameter(0)
  v = f32[] parameter(1)
  ROOT p = pad(x, v), padding=1_2_1x0_-1_0`), want: "f32[8,3]"},
		{name: "pad rank", doc: "Pad: one padding entry per dimension",
			hlo: module("", `
  x = f32[3,4] parameter(0)
  v = f32[] parameter(1)
  ROOT p = f32[3] pad(x, v), padding=1_2`), err: "do not match"},
		{name: "reverse", doc: "Rev keeps the shape",
			hlo: unaryAttrs("reverse", "f32[2,3]", ", dimensions={0,1}"), want: "f32[2,3]"},
		{name: "reverse out of range", doc: "Rev: the dimensions are the operand's",
			hlo: unaryAttrs("f32[2,3] reverse", "f32[2,3]", ", dimensions={2}"), err: "out-of-bounds"},
		{name: "iota", doc: "Iota: an array of the written shape counting along iota_dimension",
			hlo: module("", `ROOT i = s32[4,5] iota(), iota_dimension=1`), want: "s32[4,5]"},
		{name: "iota dimension", doc: "Iota: iota_dimension is a dimension of the result",
			hlo: module("", `ROOT i = s32[4,5] iota(), iota_dimension=2`), err: "iota dimension cannot go beyond"},
		{name: "tuple", doc: "Tuple: the element shapes in operand order",
			hlo: module("", `
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  ROOT t = tuple(a, b)`), want: "(f32[2], s32[])"},
		{name: "get-tuple-element", doc: "GetTupleElement: the shape of element index",
			hlo: module("", `
  a = (f32[2], s32[]) parameter(0)
  ROOT g = get-tuple-element(a), index=1`), want: "s32[]"},
		{name: "get-tuple-element out of range", doc: "GetTupleElement: the index is in range",
			hlo: module("", `
  a = (f32[2], s32[]) parameter(0)
  ROOT g = s32[] get-tuple-element(a), index=2`), err: "out of tuple bounds"},
		{name: "get-dimension-size", doc: "GetDimensionSize returns an S32 scalar",
			hlo: unaryAttrs("get-dimension-size", "f32[2,3]", ", dimensions={1}"), want: "s32[]"},
		{name: "get-dimension-size range", doc: "GetDimensionSize: the dimension is the operand's",
			hlo: unaryAttrs("s32[] get-dimension-size", "f32[2,3]", ", dimensions={2}"), err: "out of bounds"},
		{name: "set-dimension-size", doc: "SetDimensionSize makes the dimension dynamic, bounded by its static size",
			hlo: binary("set-dimension-size", "f32[5,2]", "s32[]", ", dimensions={0}"), want: "f32[<=5,2]"},
		{name: "copy", doc: "Copy keeps the shape",
			hlo: unary("copy", "f32[2,3]"), want: "f32[2,3]"},
	})
}

func unaryAttrs(op, operand, attrs string) string {
	return module("", `
  p0 = `+operand+` parameter(0)
  ROOT r = `+op+`(p0)`+attrs)
}
