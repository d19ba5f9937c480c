package hlo_test

import "testing"

// The loop of the while cases: state (counter, values).
const loop = `
cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

bad_cond {
  s = (s32[], f32[3]) parameter(0)
  ROOT i = s32[] get-tuple-element(s), index=0
}

body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[3]) tuple(j, v)
}
`

const branches = `
neg {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}

fill {
  x = s32[] parameter(0)
  c = f32[] convert(x)
  ROOT b = f32[2] broadcast(c), dimensions={}
}

other {
  x = f32[2] parameter(0)
  ROOT r = f32[3] broadcast(f32[] constant(0)), dimensions={}
}
`

func TestInferControl(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "call", doc: "Call: the result is the computation's result",
			hlo: module(addF32, `
  a = f32[] parameter(0)
  ROOT c = call(a, a), to_apply=add_f32`), want: "f32[]"},
		{name: "call arity", doc: "Call: one argument per parameter",
			hlo: module(addF32, `
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=add_f32`), err: "takes 2 parameters, but is called with 1"},
		{name: "while", doc: "While: the result has the state's shape",
			hlo: module(loop, `
  s = (s32[], f32[3]) parameter(0)
  ROOT w = while(s), condition=cond, body=body`), want: "(s32[], f32[3])"},
		{name: "while condition", doc: "While: the condition returns PRED",
			hlo: module(loop, `
  s = (s32[], f32[3]) parameter(0)
  ROOT w = (s32[], f32[3]) while(s), condition=bad_cond, body=body`), err: "condition must return a boolean"},
		{name: "while state", doc: "While: init, the body's parameter and result have one shape",
			hlo: module(loop, `
  s = (s32[], f32[4]) parameter(0)
  ROOT w = (s32[], f32[4]) while(s), condition=cond, body=body`), err: "must all have the same shape"},
		{name: "conditional pred", doc: "Conditional: both branches return the result's shape; each takes its operand",
			hlo: module(branches, `
  p = pred[] parameter(0)
  x = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT c = conditional(p, x, i), true_computation=neg, false_computation=fill`), want: "f32[2]"},
		{name: "conditional index", doc: "Conditional: an S32 index selects among branch_computations",
			hlo: module(branches, `
  b = s32[] parameter(0)
  x = f32[2] parameter(1)
  ROOT c = conditional(b, x, x), branch_computations={neg, neg}`), want: "f32[2]"},
		{name: "conditional branch results", doc: "Conditional: all branches return the same shape",
			hlo: module(branches, `
  b = s32[] parameter(0)
  x = f32[2] parameter(1)
  ROOT c = f32[2] conditional(b, x, x), branch_computations={neg, other}`), err: "must have the same shape"},
		{name: "conditional branch operand", doc: "Conditional: branch operand j matches branch j's parameter",
			hlo: module(branches, `
  p = pred[] parameter(0)
  x = f32[2] parameter(1)
  ROOT c = f32[2] conditional(p, x, x), true_computation=neg, false_computation=fill`), err: "branch operand 1"},
		{name: "fusion", doc: "Fusion: the result is the fused computation's root",
			hlo: module(`
fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT m = f32[2] multiply(a, b)
}
`, `
  x = f32[2] parameter(0)
  ROOT f = fusion(x, x), kind=kLoop, calls=fused`), want: "f32[2]"},
		{name: "after-all", doc: "AfterAll: a token",
			hlo: module("", `
  a = token[] after-all()
  ROOT t = after-all(a, a)`), want: "token[]"},
		{name: "add-dependency", doc: "AddDependency: the operand's shape, ordered after a token",
			hlo: module("", `
  x = f32[2] parameter(0)
  a = token[] after-all()
  ROOT d = add-dependency(x, a)`), want: "f32[2]"},
		{name: "opt-barrier", doc: "OptimizationBarrier: the operand's shape",
			hlo: unary("opt-barrier", "(f32[2], s32[])"), want: "(f32[2], s32[])"},
		{name: "copy-start", doc: "CopyStart: (destination, source, context)",
			hlo: unary("copy-start", "f32[2]"), want: "(f32[2], f32[2], u32[])"},
		{name: "copy-done", doc: "CopyDone: the destination",
			hlo: module("", `
  x = f32[2] parameter(0)
  s = (f32[2], f32[2], u32[]) copy-start(x)
  ROOT d = copy-done(s)`), want: "f32[2]"},
		{name: "send", doc: "Send: (data, context, token)",
			hlo: module("", `
  x = f32[2] parameter(0)
  a = token[] after-all()
  ROOT s = send(x, a), channel_id=1`), want: "(f32[2], u32[], token[])"},
		{name: "recv-done", doc: "RecvDone: (data, token)",
			hlo: module("", `
  a = token[] after-all()
  r = (f32[2], u32[], token[]) recv(a), channel_id=1
  ROOT d = recv-done(r), channel_id=1`), want: "(f32[2], token[])"},
		{name: "infeed", doc: "Infeed: (data, token), data as written",
			hlo: module("", `
  a = token[] after-all()
  ROOT i = ((f32[2], s32[]), token[]) infeed(a)`), want: "((f32[2], s32[]), token[])"},
		{name: "outfeed", doc: "Outfeed: a token",
			hlo: module("", `
  x = f32[2] parameter(0)
  a = token[] after-all()
  ROOT o = outfeed(x, a), outfeed_shape=f32[2]`), want: "token[]"},
		{name: "partition-id", doc: "PartitionId: a U32 scalar",
			hlo: module("", `ROOT p = partition-id()`), want: "u32[]"},
		{name: "replica-id", doc: "ReplicaId: a U32 scalar",
			hlo: module("", `ROOT p = replica-id()`), want: "u32[]"},
		{name: "rng", doc: "RngUniform: the written shape, of the bounds' type",
			hlo: binary("f32[3,4] rng", "f32[]", "f32[]", ", distribution=rng_uniform"), want: "f32[3,4]"},
		{name: "rng types", doc: "RngUniform: the result has the bounds' element type",
			hlo: binary("f32[3,4] rng", "s32[]", "s32[]", ", distribution=rng_uniform"), err: "compatible element types"},
		{name: "rng normal of ints", doc: "RngNormal: floating point only",
			hlo: binary("s32[3] rng", "s32[]", "s32[]", ", distribution=rng_normal"), err: "floating point"},
		{name: "rng-bit-generator", doc: "RngBitGenerator: (new state, random bits)",
			hlo: unaryAttrs("(u64[2], u32[4,4]) rng-bit-generator", "u64[2]", ", algorithm=rng_default"), want: "(u64[2], u32[4,4])"},
		{name: "rng-bit-generator state", doc: "RngBitGenerator: the new state has the state's shape",
			hlo: unaryAttrs("(u64[3], u32[4,4]) rng-bit-generator", "u64[2]", ", algorithm=rng_default"), err: "state shape to match"},
	})
}

func TestInferCollectives(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "all-reduce", doc: "AllReduce: the operand's shape",
			hlo: module(addF32, `
  x = f32[8] parameter(0)
  ROOT r = all-reduce(x), replica_groups={{0,1}}, to_apply=add_f32`), want: "f32[8]"},
		{name: "all-reduce variadic", doc: "AllReduce: several operands give a tuple",
			hlo: module(addF32, `
  x = f32[8] parameter(0)
  y = f32[2] parameter(1)
  ROOT r = all-reduce(x, y), replica_groups={}, to_apply=add_f32`), want: "(f32[8], f32[2])"},
		{name: "all-gather", doc: "AllGather: the gather dimension is multiplied by the group size",
			hlo: unaryAttrs("all-gather", "f32[2,3]", ", replica_groups={{0,1,2,3}}, dimensions={0}"), want: "f32[8,3]"},
		{name: "all-gather iota groups", doc: "AllGather: [2,4]<=[8] is two groups of four",
			hlo: unaryAttrs("all-gather", "f32[2,3]", ", replica_groups=[2,4]<=[8], dimensions={1}"), want: "f32[2,12]"},
		{name: "all-gather-start", doc: "AllGatherStart: (operand, gathered)",
			hlo: unaryAttrs("all-gather-start", "f32[2]", ", replica_groups={{0,1}}, dimensions={0}"), want: "(f32[2], f32[4])"},
		{name: "all-gather dimension", doc: "AllGather: the dimension is the operand's",
			hlo: unaryAttrs("f32[2,3] all-gather", "f32[2,3]", ", replica_groups={{0,1}}, dimensions={2}"), err: "out of bounds"},
		{name: "reduce-scatter", doc: "ReduceScatter: the scatter dimension is divided by the group size",
			hlo: module(addF32, `
  x = f32[8,3] parameter(0)
  ROOT r = reduce-scatter(x), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add_f32`), want: "f32[2,3]"},
		{name: "reduce-scatter divisibility", doc: "ReduceScatter: the scatter dimension divides by the group size",
			hlo: module(addF32, `
  x = f32[6,3] parameter(0)
  ROOT r = f32[1,3] reduce-scatter(x), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add_f32`), err: "shard_count"},
		{name: "all-to-all array", doc: "AllToAll: splitting and concatenating along one dimension keeps the shape",
			hlo: unaryAttrs("all-to-all", "f32[4,8]", ", replica_groups={{0,1}}, dimensions={1}"), want: "f32[4,8]"},
		{name: "all-to-all tuple", doc: "AllToAll: the tuple form exchanges one operand per participant",
			hlo: binary("all-to-all", "f32[2]", "f32[2]", ", replica_groups={{0,1}}"), want: "(f32[2], f32[2])"},
		{name: "all-to-all split", doc: "AllToAll: the split dimension divides by the split count",
			hlo: unaryAttrs("f32[3] all-to-all", "f32[3]", ", replica_groups={{0,1}}, dimensions={0}"), err: "dividable by split_count 2"},
		{name: "collective-permute", doc: "CollectivePermute: the operand's shape",
			hlo: unaryAttrs("collective-permute", "f32[4]", ", source_target_pairs={{0,1},{1,0}}"), want: "f32[4]"},
		{name: "collective-permute-done", doc: "CollectivePermuteDone: the received data",
			hlo: module("", `
  x = f32[4] parameter(0)
  s = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0}}
  ROOT d = collective-permute-done(s)`), want: "f32[4]"},
	})
}
