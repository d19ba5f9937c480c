#!/usr/bin/python3
"""Writes the multi-device conformance cases (format: ../MULTIDEVICE.md).

Every case is one of XLA's collective tests (xla/tests/collective_ops_test.cc
and collective_ops_e2e_test.cc, openxla/xla): its HLO, and its expected
values computed here in numpy from the test's own expressions (the test's
literal values where it writes them, checked against the expression at the
device count the test runs at). Where the test's logic is a function of the
device count (an all-reduce of replica-dependent values, a rotation, the
number of tuple operands of an all-to-all, ...) the case is written for 2, 4
and 8 devices; a "variant" key says what was generalized and how. Nothing
here runs Axle.

Run from the repository root:  /usr/bin/python3 conformance/multidevice/generate.py
It rewrites every <op>/<case>_<N>dev.json below this directory.
"""

import base64
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICE_COUNTS = (2, 4, 8)
CC = "xla/tests/collective_ops_test.cc"
E2E = "xla/tests/collective_ops_e2e_test.cc"

# ---------------------------------------------------------------- values

NP = {
    "pred": np.bool_, "s8": np.int8, "u8": np.uint8, "s16": np.int16,
    "u16": np.uint16, "s32": np.int32, "u32": np.uint32, "s64": np.int64,
    "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
}


def bf16_bytes(a):
    """bfloat16 encoding: float32 rounded to nearest-even, upper 16 bits."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


# f8 encodings of the small integers the fp8 tests use (exact in both).
F8 = {
    "f8e4m3fn": {v: 0x38 + ((v.bit_length() - 1) << 3) + ((v << (3 - (v.bit_length() - 1))) & 7)
                 for v in range(1, 9)},
    "f8e5m2": {v: 0x3C + ((v.bit_length() - 1) << 2) + ((v << (2 - (v.bit_length() - 1))) & 3)
               for v in range(1, 5)},
}


def arr(dtype, data, shape=None):
    """An array value of HLO element type dtype."""
    if dtype == "bf16":
        a = np.asarray(data, dtype=np.float32)
    elif dtype in F8:
        a = np.asarray(data, dtype=np.int64)
    else:
        a = np.asarray(data, dtype=NP[dtype])
    if shape is not None:
        a = a.reshape(shape)
    return (dtype, a)


def encode(v):
    if isinstance(v, list):
        return {"tuple": [encode(e) for e in v]}
    dtype, a = v
    dims = ",".join(str(d) for d in a.shape)
    if dtype == "bf16":
        raw = bf16_bytes(a)
    elif dtype in F8:
        raw = bytes(F8[dtype][int(x)] for x in a.reshape(-1))
    else:
        raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    return {"shape": "%s[%s]" % (dtype, dims), "data": base64.b64encode(raw).decode()}


def fold(op, values):
    """Folds equal-shaped arrays left to right with an HLO binary op, in the
    arrays' own element type (integers wrap as in XLA)."""
    acc = values[0]
    for v in values[1:]:
        with np.errstate(over="ignore"):
            if op == "add":
                acc = (acc + v).astype(acc.dtype)
            elif op == "multiply":
                acc = (acc * v).astype(acc.dtype)
            elif op == "maximum":
                acc = np.maximum(acc, v)
            elif op == "minimum":
                acc = np.minimum(acc, v)
            elif op == "and":
                acc = np.logical_and(acc, v)
            elif op == "or":
                acc = np.logical_or(acc, v)
            else:
                raise ValueError(op)
    return acc


def module(name, body, replicas=1, partitions=1):
    head = "HloModule %s" % name
    if replicas > 1:
        head += ", replica_count=%d" % replicas
    if partitions > 1:
        head += ", num_partitions=%d" % partitions
    return head + "\n\n" + body.strip("\n") + "\n"


def groups_text(groups):
    return "{" + ",".join("{" + ",".join(str(i) for i in g) + "}" for g in groups) + "}"


# ---------------------------------------------------------------- registry

CASES = []


def case(op, name, source, counts=DEVICE_COUNTS, variant=None, tolerance=None):
    """Registers gen(n) -> (hlo, args[n], expected[n]) for each device count."""
    def register(gen):
        CASES.append(dict(op=op, name=name, source=source, counts=counts,
                          variant=variant, tolerance=tolerance, gen=gen))
        return gen
    return register


def same_args(n, *values):
    return [list(values) for _ in range(n)]


def no_args(n):
    return [[] for _ in range(n)]


# ---------------------------------------------------------------- all-reduce

def crs_module(name, shape, dtype, op, n, groups=(), scalar=False):
    """XLA's MakeCrsModule: parameter, reshape, all-reduce, copy, reshape."""
    inner = "%s[]" % dtype if scalar else shape
    body = """
apply_op {
  x = %(t)s[] parameter(0)
  y = %(t)s[] parameter(1)
  ROOT apply_op = %(t)s[] %(op)s(x, y)
}

ENTRY test_computation {
  p = %(s)s parameter(0)
  p2 = %(i)s reshape(p)
  crs = %(i)s all-reduce(p2), replica_groups=%(g)s, to_apply=apply_op
  copy = %(i)s copy(crs)
  ROOT out = %(s)s reshape(copy)
}
""" % dict(t=dtype, op=op, s=shape, i=inner, g=groups_text(groups))
    return module(name, body, replicas=n)


@case("all-reduce", "sum_float32_2d", CC + ": AllReduce_sum_float32_2D",
      variant="the test's two replicas generalized to n: every replica holds the input, the sum is n times it")
def _(n):
    x = np.array([[1, 2], [3, 4]], np.float32)
    return (crs_module("sum_float32_2d", "f32[2,2]", "f32", "add", n),
            same_args(n, arr("f32", x)), [arr("f32", x * n)] * n)


@case("all-reduce", "single_output_float32", CC + ": AllReduceSingleOutput_float32",
      variant="n replicas instead of two; the f32[1] input takes the scalar path as in MakeCrsModule")
def _(n):
    x = np.array([1], np.float32)
    return (crs_module("single_output_float32", "f32[1]", "f32", "add", n, scalar=True),
            same_args(n, arr("f32", x)), [arr("f32", x * n)] * n)


def exact_multiply(dtype, x, n):
    """Whether folding multiply over n copies of x stays exact in a float
    type (so any association order gives the same result)."""
    if dtype not in ("f16", "bf16", "f32"):
        return True
    bits = {"f16": 11, "bf16": 8, "f32": 24}[dtype]
    return all(abs(int(v)) ** n < 2 ** bits for v in x)


def register_all_ops_for_reduce():
    """TestAllOpsForReduce<T>: add, multiply, maximum, minimum of {1,2,3} on
    every replica; for signed types again with {-1,-2,-3}."""
    types = ["s8", "u8", "u32", "s32", "s64", "u64", "f32", "f64", "f16", "bf16"]
    names = {"s8": "int8", "u8": "uint8", "u32": "uint32", "s32": "int32", "s64": "int64",
             "u64": "uint64", "f32": "float32", "f64": "double", "f16": "half", "bf16": "bfloat16"}
    for t in types:
        inputs = [("", [1, 2, 3])]
        if not t.startswith("u"):
            inputs.append(("_negative", [-1, -2, -3]))
        for suffix, x in inputs:
            for op in ("add", "multiply", "maximum", "minimum"):
                counts = tuple(c for c in DEVICE_COUNTS if op != "multiply" or exact_multiply(t, x, c))
                register_one_op(t, names[t], op, x, suffix, counts)


def register_one_op(t, tname, op, x, suffix, counts):
    name = "two_replicas_one_operand_%s_%s%s" % (tname, op, suffix)

    @case("all-reduce", name, CC + ": AllReduceTwoReplicasOneOperand_" + tname,
          counts=counts,
          variant="n replicas instead of two; expected is the op folded over n copies "
                  "(integers wrap)" + ("; multiply only where the product is exact" if op == "multiply" else ""))
    def _(n):
        if t == "bf16":
            xs = np.array(x, np.float32)
        else:
            xs = np.array(x, NP[t])
        want = fold(op, [xs] * n)
        return (crs_module(name, "%s[3]" % t, t, op, n),
                same_args(n, arr(t, xs)), [arr(t, want)] * n)


register_all_ops_for_reduce()


def complex_sum_case(t, tname):
    name = "sum_" + tname

    @case("all-reduce", name, CC + ": AllReduce_sum_" + tname,
          variant="n replicas instead of two (the test is disabled on XLA's CPU backend, not for its values)")
    def _(n):
        x = np.array([1 + 2j, 3 + 4j], NP[t])
        return (crs_module(name, "%s[2]" % t, t, "add", n),
                same_args(n, arr(t, x)), [arr(t, fold("add", [x] * n))] * n)


complex_sum_case("c64", "complex64")
complex_sum_case("c128", "complex128")


def pred_equal_case(op):
    name = "%s_pred_equal" % op

    @case("all-reduce", name, CC + ": AllReduce%s_Pred (equal elements)" % op.capitalize(),
          variant="n replicas instead of two")
    def _(n):
        x = np.array([True, False])
        return (crs_module(name, "pred[2]", "pred", op, n),
                same_args(n, arr("pred", x)), [arr("pred", x)] * n)


def pred_replica0_case(op):
    name = "%s_pred_replica0" % op

    @case("all-reduce", name, CC + ": AllReduce%s_Pred (replica 0 true, others false)" % op.capitalize(),
          variant="n replicas instead of two")
    def _(n):
        body = """
apply_op {
  x = pred[] parameter(0)
  y = pred[] parameter(1)
  ROOT apply_op = pred[] %s(x, y)
}

ENTRY test_computation {
  id = u32[] replica-id()
  c = u32[] constant(0)
  p = pred[] compare(id, c), direction=EQ
  p2 = pred[1] reshape(p)
  crs = pred[1] all-reduce(p2), replica_groups={}, to_apply=apply_op
  copy = pred[1] copy(crs)
  ROOT out = pred[1] reshape(copy)
}
""" % op
        vals = [np.array([r == 0]) for r in range(n)]
        return module(name, body, replicas=n), no_args(n), [arr("pred", fold(op, vals))] * n


for _op in ("and", "or"):
    pred_equal_case(_op)
    pred_replica0_case(_op)


@case("all-reduce", "combinable_all_reduces", CC + ": AllReduce_CombinableAllReduces",
      variant="n replicas instead of two")
def _(n):
    body = """
apply_op {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT apply_op = f32[] add(x, y)
}

ENTRY test_computation {
  p0 = f32[5] parameter(0)
  p1 = f32[5] parameter(1)
  crs0 = f32[5] all-reduce(p0), replica_groups={}, to_apply=apply_op
  crs1 = f32[5] all-reduce(p1), replica_groups={}, to_apply=apply_op
  ROOT out = (f32[5], f32[5]) tuple(crs0, crs1)
}
"""
    a = np.array([1, 2, 3, 4, 5], np.float32)
    b = np.array([7, 3, 4, 1, 2], np.float32)
    return (module("combinable_all_reduces", body, replicas=n),
            same_args(n, arr("f32", a), arr("f32", b)),
            [[arr("f32", a * n), arr("f32", b * n)]] * n)


@case("all-reduce", "three_replica_groups", CC + ": AllReduce_ThreeReplicaGroups", counts=(4, 8),
      variant="4 devices as in the test ({0},{1,2},{3}); at 8 the groups are {0},{1..6},{7}")
def _(n):
    groups = [[0], list(range(1, n - 1)), [n - 1]]
    x = np.arange(137, dtype=np.float32)
    want = [arr("f32", x * len(g)) for g in groups for _ in g]
    return (crs_module("three_replica_groups", "f32[137]", "f32", "add", n, groups=groups),
            same_args(n, arr("f32", x)), want)


@case("all-reduce", "degenerate", CC + ": AllReduce_Degenerate",
      variant="n singleton groups instead of four")
def _(n):
    body = """
apply_op {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT apply_op = u32[] add(x, y)
}

ENTRY test_computation {
  id = u32[] replica-id()
  ROOT crs = u32[] all-reduce(id), replica_groups=%s, to_apply=apply_op
}
""" % groups_text([[i] for i in range(n)])
    return (module("degenerate", body, replicas=n), no_args(n),
            [arr("u32", np.array(i, np.uint32)) for i in range(n)])


@case("all-reduce-start", "async_all_reduce", CC + ": AsyncAllReduce (expected n(n-1)/2)")
def _(n):
    body = """
apply_op {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT apply_op = u32[] add(x, y)
}

ENTRY test_computation {
  id = u32[] replica-id()
  start = u32[] all-reduce-start(id), to_apply=apply_op
  ROOT done = u32[] all-reduce-done(start)
}
"""
    want = np.array(n * (n - 1) // 2, np.uint32)
    return module("async_all_reduce", body, replicas=n), no_args(n), [arr("u32", want)] * n


@case("all-reduce-start", "async_all_reduce_two_operands",
      CC + ": AsyncAllReduceTwoOperands (expected n(n-1)/2 and n(n-1)(2n-1)/6)")
def _(n):
    body = """
apply_op {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT apply_op = u32[] add(x, y)
}

ENTRY test_computation {
  id = u32[] replica-id()
  id2 = u32[] multiply(id, id)
  start = (u32[], u32[]) all-reduce-start(id, id2), to_apply=apply_op
  ROOT done = (u32[], u32[]) all-reduce-done(start)
}
"""
    e0 = np.array(n * (n - 1) // 2, np.uint32)
    e1 = np.array(n * (n - 1) * (2 * n - 1) // 6, np.uint32)
    return (module("async_all_reduce_two_operands", body, replicas=n), no_args(n),
            [[arr("u32", e0), arr("u32", e1)]] * n)


@case("all-reduce", "async_all_reduce_e2e", E2E + ": AsyncCollectiveOps.AsyncAllReduce (expected n(n-1)/2)",
      variant="n replicas instead of two")
def _(n):
    body = """
apply_op {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT apply_op = u32[] add(x, y)
}

ENTRY test_computation {
  id = u32[] replica-id()
  ROOT all-reduce = u32[] all-reduce(id), to_apply=apply_op
}
"""
    want = np.array(n * (n - 1) // 2, np.uint32)
    return module("async_all_reduce_e2e", body, replicas=n), no_args(n), [arr("u32", want)] * n


@case("all-reduce", "tuple_all_reduce", CC + ": AllReduce_TupleAllReduce",
      variant="n replicas instead of two")
def _(n):
    body = """
apply_op {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT apply_op = f32[] add(x, y)
}

ENTRY test_computation {
  p0 = f32[5] parameter(0)
  p1 = f32[7] parameter(1)
  ROOT out = (f32[5], f32[7]) all-reduce(p0, p1), replica_groups={}, to_apply=apply_op
}
"""
    a = np.array([1, 2, 3, 4, 5], np.float32)
    b = np.array([7, 3, 4, 1, 2, 3, 4], np.float32)
    return (module("tuple_all_reduce", body, replicas=n),
            same_args(n, arr("f32", a), arr("f32", b)),
            [[arr("f32", a * n), arr("f32", b * n)]] * n)


@case("all-reduce", "bfloat16_min", CC + ": AllReduceBFloat16Min", variant="n replicas instead of two")
def _(n):
    body = """
min {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT min.2 = bf16[] minimum(a, b)
}

ENTRY test_computation {
  id32 = u32[] replica-id()
  one = u32[] constant(1)
  id32_1 = u32[] add(id32, one)
  id = bf16[] convert(id32_1)
  id2 = bf16[2] broadcast(id), dimensions={}
  ROOT cp = bf16[2] all-reduce(id2), replica_groups={}, to_apply=min
}
"""
    want = fold("minimum", [np.full(2, r + 1, np.float32) for r in range(n)])
    return module("bfloat16_min", body, replicas=n), no_args(n), [arr("bf16", want)] * n


@case("all-reduce", "16bit_int", CC + ": AllReduce_16BitInt", variant="n replicas instead of two")
def _(n):
    body = """
sum {
  a = u16[] parameter(0)
  b = u16[] parameter(1)
  ROOT add.2 = u16[] add(a, b)
}

ENTRY test_computation {
  id32 = u32[] replica-id()
  id = u16[] convert(id32)
  id2 = u16[2] broadcast(id), dimensions={}
  a0 = u16[2] constant({10, 15})
  a1 = u16[2] add(id2, a0)
  ROOT cp = u16[2] all-reduce(a1), replica_groups={}, to_apply=sum
}
"""
    a0 = np.array([10, 15], np.uint16)
    want = fold("add", [a0 + np.uint16(r) for r in range(n)])
    return module("all_reduce_16bit_int", body, replicas=n), no_args(n), [arr("u16", want)] * n


def replica_select(n, c0, c1):
    """The tests' `select(replica-id == 0, c0, c1)` per replica."""
    return [c0 if r == 0 else c1 for r in range(n)]


@case("all-reduce", "reassociate", CC + ": AllReduceReassociate",
      variant="n replicas: replica 0 holds c0/c2, every other replica c1/c3")
def _(n):
    body = """
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add.2 = f32[] add(a, b)
}

ENTRY main {
  c0 = f32[8] constant({  1,  2,  3,  4,  5,  6,  7,  8})
  c1 = f32[8] constant({ 11, 12, 13, 14, 15, 16, 17, 18})
  c2 = f32[8] constant({  2,  3,  4,  5,  6,  7,  8,  9})
  c3 = f32[8] constant({ 12, 13, 14, 15, 16, 17, 18, 19})
  zero = u32[] constant(0)
  id = u32[] replica-id()
  p = pred[] compare(id, zero), direction=EQ
  pb = pred[8] broadcast(p), dimensions={}
  data0 = f32[8] select(pb, c0, c1)
  data1 = f32[8] select(pb, c2, c3)
  ar0 = f32[8] all-reduce(data0), replica_groups={}, to_apply=sum
  ar1 = f32[8] all-reduce(data1), replica_groups={}, to_apply=sum
  ROOT add = f32[8] add(ar0, ar1)
}
"""
    c = [np.arange(1, 9, dtype=np.float32), np.arange(11, 19, dtype=np.float32),
         np.arange(2, 10, dtype=np.float32), np.arange(12, 20, dtype=np.float32)]
    want = fold("add", replica_select(n, c[0], c[1])) + fold("add", replica_select(n, c[2], c[3]))
    return module("all_reduce_reassociate", body, replicas=n), no_args(n), [arr("f32", want)] * n


# Partitions and flattened ids: XLA's tests above run replicas only; these
# take the same expressions (sum of ids, AsyncAllReduce) to the other group
# modes, with the device ids of XLA's default assignment (p*R + r).

SUM_U32 = """
add {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT add = u32[] add(x, y)
}
"""


@case("all-reduce", "cross_partition_partition_id",
      CC + ": AsyncAllReduce (sum of ids) over partitions",
      variant="n partitions, one replica: all-reduce of partition-id with channel_id=1 and no groups "
              "(cross-replica-and-partition mode, whose one group is then every partition)")
def _(n):
    body = SUM_U32 + """
ENTRY test_computation {
  id = u32[] partition-id()
  ROOT ar = u32[] all-reduce(id), channel_id=1, replica_groups={}, to_apply=add
}
"""
    want = np.array(n * (n - 1) // 2, np.uint32)
    return module("cross_partition_partition_id", body, partitions=n), no_args(n), [arr("u32", want)] * n


def flat_id_body(allreduce_attrs):
    return SUM_U32 + """
ENTRY test_computation {
  r = u32[] replica-id()
  p = u32[] partition-id()
  nr = u32[] constant(%%d)
  pr = u32[] multiply(p, nr)
  flat = u32[] add(pr, r)
  ROOT ar = u32[] all-reduce(flat), %s, to_apply=add
}
""" % allreduce_attrs


def flat_ids(replicas, partitions):
    """Device d's flattened id p*R + r, listed by device (the default
    assignment puts replica r of partition p on device p*R + r)."""
    return list(range(replicas * partitions))


@case("all-reduce", "cross_replica_with_partitions", CC + ": AsyncAllReduce (sum of ids) per partition",
      variant="2 partitions of n/2 replicas, no channel_id: each partition's replicas reduce among themselves")
def _(n):
    R, P = n // 2, 2
    body = flat_id_body("replica_groups={}") % R
    want = []
    for d in range(n):
        p = d // R
        want.append(arr("u32", np.array(sum(p * R + r for r in range(R)), np.uint32)))
    return module("cross_replica_with_partitions", body, replicas=R, partitions=P), no_args(n), want


@case("all-reduce", "cross_replica_and_partition", CC + ": AsyncAllReduce (sum of ids) across replicas and partitions",
      variant="2 replicas × n/2 partitions, channel_id without use_global_device_ids, groups {{0},{1}}: "
              "each group is one replica id in every partition")
def _(n):
    R, P = 2, n // 2
    body = flat_id_body("channel_id=1, replica_groups={{0},{1}}") % R
    want = [arr("u32", np.array(sum(p * R + (d % R) for p in range(P)), np.uint32)) for d in range(n)]
    return module("cross_replica_and_partition", body, replicas=R, partitions=P), no_args(n), want


def flattened_sums(groups, R, P):
    """Each device's all-reduce of its own device id (p*R + r) over groups of
    flattened ids. XLA's flattened id of replica r, partition p is r*P + p
    (GetParticipatingDevicesGroups: replica = id / P, partition = id % P),
    which is not the device id under the default assignment."""
    def device(f):
        return (f % P) * R + f // P
    want = [None] * (R * P)
    for g in groups:
        total = sum(device(f) for f in g)
        for f in g:
            want[device(f)] = arr("u32", np.array(total, np.uint32))
    return want


@case("all-reduce", "global_device_ids_pairs", CC + ": AsyncAllReduce (sum of ids) in flattened-id groups",
      variant="2 replicas × n/2 partitions, use_global_device_ids=true, groups of flattened ids {0,1},{2,3},...")
def _(n):
    R, P = 2, n // 2
    groups = [[2 * i, 2 * i + 1] for i in range(n // 2)]
    body = flat_id_body("channel_id=1, use_global_device_ids=true, replica_groups=%s" % groups_text(groups)) % R
    want = flattened_sums(groups, R, P)
    return module("global_device_ids_pairs", body, replicas=R, partitions=P), no_args(n), want


@case("all-reduce", "global_device_ids_strided", CC + ": AsyncAllReduce (sum of ids) in flattened-id groups",
      variant="2 replicas × n/2 partitions, use_global_device_ids=true, groups {0,2,4,..},{1,3,5,..}")
def _(n):
    R, P = 2, n // 2
    groups = [list(range(0, n, 2)), list(range(1, n, 2))]
    body = flat_id_body("channel_id=1, use_global_device_ids=true, replica_groups=%s" % groups_text(groups)) % R
    want = flattened_sums(groups, R, P)
    return module("global_device_ids_strided", body, replicas=R, partitions=P), no_args(n), want


@case("all-reduce", "iota_replica_groups", CC + ": AsyncAllReduce (sum of ids) with iota replica groups",
      variant="n replicas, replica_groups=[2,n/2]<=[n/2,2]T(1,0), i.e. {0,2,4,..},{1,3,5,..}")
def _(n):
    body = SUM_U32 + """
ENTRY test_computation {
  id = u32[] replica-id()
  ROOT ar = u32[] all-reduce(id), replica_groups=[2,%d]<=[%d,2]T(1,0), to_apply=add
}
""" % (n // 2, n // 2)
    evens, odds = sum(range(0, n, 2)), sum(range(1, n, 2))
    want = [arr("u32", np.array(evens if d % 2 == 0 else odds, np.uint32)) for d in range(n)]
    return module("iota_replica_groups", body, replicas=n), no_args(n), want


@case("all-reduce", "while_loop", E2E + ": WhileLoopReduceScatterCodeMotion (its loop, with all-reduce)",
      variant="the test's 3-iteration loop with its reduce-scatter replaced by an all-reduce of the u32[2] "
              "input (so the accumulator is u32[2]); n replicas")
def _(n):
    body = SUM_U32 + """
cond {
  param = (u32[], u32[2], u32[2]) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  limit = u32[] constant(3)
  ROOT result = pred[] compare(count, limit), direction=LT
}

body {
  param = (u32[], u32[2], u32[2]) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  increment = u32[] constant(1)
  new_count = u32[] add(count, increment)
  ar_input = u32[2] get-tuple-element(param), index=1
  ar = u32[2] all-reduce(ar_input), replica_groups={}, to_apply=add
  old_accum = u32[2] get-tuple-element(param), index=2
  new_accum = u32[2] add(ar, old_accum)
  input_inc = u32[2] constant({1, 2})
  new_ar_input = u32[2] add(ar_input, input_inc)
  ROOT ret = (u32[], u32[2], u32[2]) tuple(new_count, new_ar_input, new_accum)
}

ENTRY test_computation {
  count = u32[] constant(0)
  id = u32[] replica-id()
  id2 = u32[2] broadcast(id), dimensions={}
  a0 = u32[2] constant({10, 15})
  init_input = u32[2] add(id2, a0)
  init_accum = u32[2] constant({5, 5})
  while_init = (u32[], u32[2], u32[2]) tuple(count, init_input, init_accum)
  while_result = (u32[], u32[2], u32[2]) while(while_init), body=body, condition=cond
  ROOT gte = u32[2] get-tuple-element(while_result), index=2
}
"""
    a0, inc = np.array([10, 15], np.uint32), np.array([1, 2], np.uint32)
    inputs = [a0 + np.uint32(r) for r in range(n)]
    accum = np.array([5, 5], np.uint32)
    for _ in range(3):
        accum = accum + fold("add", inputs)
        inputs = [x + inc for x in inputs]
    return module("all_reduce_while_loop", body, replicas=n), no_args(n), [arr("u32", accum)] * n


# ---------------------------------------------------------------- all-gather

# The tests read the replica id directly as u32, or convert it for 16-bit types.
ID_LINES = ("  id = u32[] replica-id()\n%.0s", "  id32 = u32[] replica-id()\n  id = %s[] convert(id32)\n")


def gather_module(name, n, dims_in, dim, extra="", dtype="u32", start=False, group=None):
    """AllGather_Dim0/Dim1: a0 + replica-id gathered along dim in groups of
    `group` replicas (all n by default)."""
    group = group or n
    out = list(dims_in)
    out[dim] *= group
    si = "%s[%s]" % (dtype, ",".join(map(str, dims_in)))
    so = "%s[%s]" % (dtype, ",".join(map(str, out)))
    consts = {(1, 2): "{{10, 15}}", (2, 1): "{{10}, {15}}"}[tuple(dims_in)]
    ids = ID_LINES[dtype != "u32"] % dtype
    if start:
        ag = "  ags = (%s, %s) all-gather-start(a1), dimensions={%d}%s\n  allgather = %s all-gather-done(ags)\n" % (
            si, so, dim, extra, so)
    else:
        ag = "  allgather = %s all-gather(a1), dimensions={%d}%s\n" % (so, dim, extra)
    body = ("ENTRY test_computation {\n" + ids +
            "  id2 = %s broadcast(id), dimensions={}\n  a0 = %s constant(%s)\n  a1 = %s add(id2, a0)\n" % (si, si, consts, si) +
            ag + "  ROOT out = %s[%d] reshape(allgather)\n}\n" % (dtype, 2 * group))
    return module(name, body, replicas=n)


def gathered(n, dims_in, dim, dtype="u32"):
    a0 = np.array([10, 15], NP[dtype]).reshape(dims_in)
    return np.concatenate([a0 + NP[dtype](r) for r in range(n)], axis=dim).reshape(-1)


@case("all-gather", "dim0", CC + ": AllGather_Dim0", variant="n replicas instead of two")
def _(n):
    return gather_module("all_gather_dim0", n, [1, 2], 0), no_args(n), [arr("u32", gathered(n, (1, 2), 0))] * n


@case("all-gather", "dim0_use_global_devices", CC + ": AllGather_Dim0_UseGlobalDevices",
      variant="n replicas instead of two; the one group lists every flattened id")
def _(n):
    extra = ", use_global_device_ids=true, channel_id=7, replica_groups=%s" % groups_text([range(n)])
    return (gather_module("all_gather_dim0_global", n, [1, 2], 0, extra), no_args(n),
            [arr("u32", gathered(n, (1, 2), 0))] * n)


@case("all-gather", "dim1", CC + ": AllGather_Dim1", variant="n replicas instead of two")
def _(n):
    return gather_module("all_gather_dim1", n, [2, 1], 1), no_args(n), [arr("u32", gathered(n, (2, 1), 1))] * n


@case("all-gather", "16bit_int", CC + ": AllGather_16BitInt", variant="n replicas instead of two")
def _(n):
    return (gather_module("all_gather_16bit", n, [1, 2], 0, dtype="u16"), no_args(n),
            [arr("u16", gathered(n, (1, 2), 0, "u16"))] * n)


@case("all-gather-start", "async_all_gather", CC + ": AsyncAllGather", variant="n replicas instead of two")
def _(n):
    return (gather_module("async_all_gather", n, [1, 2], 0, start=True), no_args(n),
            [arr("u32", gathered(n, (1, 2), 0))] * n)


@case("all-gather", "iota_replica_groups", CC + ": AllGather_Dim0 in iota replica groups",
      variant="n replicas, replica_groups=[n/2,2]<=[n] (pairs {0,1},{2,3},..): each pair gathers its own ids")
def _(n):
    extra = ", replica_groups=[%d,2]<=[%d]" % (n // 2, n)
    text = gather_module("all_gather_iota_groups", n, [1, 2], 0, extra, group=2)
    a0 = np.array([10, 15], np.uint32)
    want = [arr("u32", np.concatenate([a0 + np.uint32(2 * (d // 2)), a0 + np.uint32(2 * (d // 2) + 1)]))
            for d in range(n)]
    return text, no_args(n), want


@case("all-gather", "mixed_types", CC + ": AllGatherMixedTypes", variant="n replicas instead of two")
def _(n):
    body = """
ENTRY test_computation {
  id = u32[] replica-id()
  p0 = u32[2,1] broadcast(id), dimensions={}
  p1 = f32[2,1] convert(p0)
  allgather = (u32[2,%(n)d], f32[2,%(n)d]) all-gather(p0, p1), dimensions={1}
  ag0 = u32[2,%(n)d] get-tuple-element(allgather), index=0
  ag1 = f32[2,%(n)d] get-tuple-element(allgather), index=1
  r0 = u32[%(m)d] reshape(ag0)
  r1 = f32[%(m)d] reshape(ag1)
  ROOT out = (u32[%(m)d], f32[%(m)d]) tuple(r0, r1)
}
""" % dict(n=n, m=2 * n)
    g = np.tile(np.arange(n), 2)
    return (module("all_gather_mixed_types", body, replicas=n), no_args(n),
            [[arr("u32", g.astype(np.uint32)), arr("f32", g.astype(np.float32))]] * n)


@case("all-gather", "async_mixed_types", E2E + ": AsyncCollectiveOps.AsyncAllGatherMixedTypes",
      variant="n replicas instead of two")
def _(n):
    body = """
ENTRY test_computation {
  id = u32[] replica-id()
  id2 = u32[1,2] broadcast(id), dimensions={}
  a0 = u32[1,2] constant({{10, 15}})
  a1 = u32[1,2] add(id2, a0)
  a2 = f32[1,2] convert(a1)
  allgather = (u32[%(n)d,2], f32[%(n)d,2]) all-gather(a1, a2), dimensions={0}
  gte0 = u32[%(n)d,2] get-tuple-element(allgather), index=0
  gte1 = f32[%(n)d,2] get-tuple-element(allgather), index=1
  out0 = u32[%(m)d] reshape(gte0)
  out1 = f32[%(m)d] reshape(gte1)
  ROOT out = (u32[%(m)d], f32[%(m)d]) tuple(out0, out1)
}
""" % dict(n=n, m=2 * n)
    g = gathered(n, (1, 2), 0)
    return (module("async_all_gather_mixed_types", body, replicas=n), no_args(n),
            [[arr("u32", g), arr("f32", g.astype(np.float32))]] * n)


def broadcast_reorder(name, n, dim):
    c0 = np.array([[1, 2, 3], [4, 5, 6]], np.uint32)
    c1 = np.array([[10, 11, 12], [13, 14, 15]], np.uint32)
    out = [2, 4, 3]
    out[dim] *= n
    so = "u32[%s]" % ",".join(map(str, out))
    body = """
ENTRY main {
  c0 = u32[2,3] constant({{ 1,  2,  3}, { 4, 5, 6}})
  c1 = u32[2,3] constant({{10, 11, 12}, {13, 14, 15}})
  zero = u32[] constant(0)
  id = u32[] replica-id()
  p = pred[] compare(id, zero), direction=EQ
  pb = pred[2,3] broadcast(p), dimensions={}
  data = u32[2,3] select(pb, c0, c1)
  bc = u32[2,4,3] broadcast(data), dimensions={0,2}
  ROOT ag = %s all-gather(bc), dimensions={%d}, replica_groups=%s
}
""" % (so, dim, groups_text([range(n)]))
    parts = [np.broadcast_to(d[:, None, :], (2, 4, 3)) for d in replica_select(n, c0, c1)]
    want = np.concatenate(parts, axis=dim)
    return module(name, body, replicas=n), no_args(n), [arr("u32", want)] * n


@case("all-gather", "broadcast_reorder_non_uniform", CC + ": AllGatherBroadcastReorder_NonUniform",
      variant="n replicas: replica 0 holds c0, every other replica c1")
def _(n):
    return broadcast_reorder("ag_broadcast_reorder_non_uniform", n, 2)


@case("all-gather", "broadcast_reorder_uniform", CC + ": AllGatherBroadcastReorder_Uniform",
      variant="n replicas: replica 0 holds c0, every other replica c1")
def _(n):
    return broadcast_reorder("ag_broadcast_reorder_uniform", n, 1)


@case("all-gather", "dim1_unit_dimensions", CC + ": AllGather_Dim1UnitDimensions",
      variant="n replicas instead of two")
def _(n):
    body = """
ENTRY test_computation {
  id = u32[] replica-id()
  id2 = u32[1,1,2,1,2] broadcast(id), dimensions={}
  offset = u32[4] iota(), iota_dimension=0
  offset_reshape = u32[1,1,2,1,2] reshape(offset)
  agi = u32[1,1,2,1,2] add(id2, offset_reshape)
  allgather = u32[1,1,%d,1,2] all-gather(agi), dimensions={2}
  ROOT out = u32[%d] reshape(allgather)
}
""" % (2 * n, 4 * n)
    want = np.concatenate([np.arange(4, dtype=np.uint32) + np.uint32(r) for r in range(n)])
    return module("all_gather_dim1_unit_dims", body, replicas=n), no_args(n), [arr("u32", want)] * n


def f8_case(op_dir, name, source, fp8, gen_body, want_fn, variant):
    @case(op_dir, name, source, variant=variant)
    def _(n):
        mod = op_dir.replace("-", "_") + "_" + name
        return module(mod, gen_body(n, fp8), replicas=n), no_args(n), want_fn(n)


f8_case("all-gather", "8bit_float", CC + ": Fp8CollectiveOpsTest.AllGather_8BitFloat (f8e4m3fn)", "f8e4m3fn",
        lambda n, t: """
ENTRY test_computation {
  a0 = %(t)s[1,2] constant({{1,2}})
  allgather = %(t)s[%(n)d,2] all-gather(a0), dimensions={0}
  p = %(t)s[%(m)d] reshape(allgather)
  ROOT out = f32[%(m)d] convert(p)
}
""" % dict(t=t, n=n, m=2 * n),
        lambda n: [arr("f32", np.tile(np.array([1, 2], np.float32), n))] * n,
        "n replicas instead of two")

# ---------------------------------------------------------------- all-to-all


def a2a_tuple_module(name, n, groups_attr, k):
    """AllToAll_*ReplicaGroups: k operands, operand j = {10(j+1), 10(j+1)+5} + id."""
    lines = ["ENTRY test_computation {", "  id = u32[] replica-id()", "  id2 = u32[2] broadcast(id), dimensions={}"]
    for j in range(k):
        lines.append("  c%d = u32[2] constant({%d, %d})" % (j, 10 * (j + 1), 10 * (j + 1) + 5))
        lines.append("  a%d = u32[2] add(id2, c%d)" % (j, j))
    tup = "(" + ", ".join(["u32[2]"] * k) + ")"
    lines.append("  all2all = %s all-to-all(%s), replica_groups=%s" % (
        tup, ", ".join("a%d" % j for j in range(k)), groups_attr))
    for j in range(k):
        lines.append("  g%d = u32[2] get-tuple-element(all2all), index=%d" % (j, j))
    lines.append("  ROOT out = u32[%d] concatenate(%s), dimensions={0}" % (2 * k, ", ".join("g%d" % j for j in range(k))))
    lines.append("}")
    return module(name, "\n".join(lines), replicas=n)


def a2a_expected(n, groups):
    """Device d at position i of its group receives operand i of every group
    member, in group order."""
    want = [None] * n
    for g in groups:
        for i, d in enumerate(g):
            parts = [np.array([10 * (i + 1) + s, 10 * (i + 1) + 5 + s], np.uint32) for s in g]
            want[d] = arr("u32", np.concatenate(parts))
    return want


@case("all-to-all", "empty_replica_groups", CC + ": AllToAll_EmptyReplicaGroups",
      variant="n operands for n replicas (the test's four, continued: operand j is {10(j+1), 10(j+1)+5} + id)")
def _(n):
    return a2a_tuple_module("a2a_empty_groups", n, "{}", n), no_args(n), a2a_expected(n, [list(range(n))])


@case("all-to-all", "ordered_replica_groups", CC + ": AllToAll_OrderedReplicaGroups",
      variant="n operands for n replicas, the one group {n-1,...,0}")
def _(n):
    g = list(range(n - 1, -1, -1))
    return a2a_tuple_module("a2a_ordered_groups", n, groups_text([g]), n), no_args(n), a2a_expected(n, [g])


@case("all-to-all", "two_replica_groups", CC + ": AllToAll_TwoReplicaGroups", counts=(4,))
def _(n):
    groups = [[2, 1], [3, 0]]
    return a2a_tuple_module("a2a_two_groups", n, groups_text(groups), 2), no_args(n), a2a_expected(n, groups)


@case("all-to-all", "split_dimension", CC + ": AllToAll_SplitDimension",
      variant="u32[n,2] for n replicas (row j is {10(j+1), 10(j+1)+5} + id)")
def _(n):
    rows = ", ".join("{%d, %d}" % (10 * (j + 1), 10 * (j + 1) + 5) for j in range(n))
    body = """
ENTRY test_computation {
  id = u32[] replica-id()
  id2 = u32[%(n)d,2] broadcast(id), dimensions={}
  a0 = u32[%(n)d,2] constant({%(rows)s})
  a1 = u32[%(n)d,2] add(id2, a0)
  all2all = u32[%(n)d,2] all-to-all(a1), replica_groups=%(g)s, dimensions={0}
  ROOT out = u32[%(m)d] reshape(all2all)
}
""" % dict(n=n, rows=rows, g=groups_text([range(n)]), m=2 * n)
    return module("a2a_split_dimension", body, replicas=n), no_args(n), a2a_expected(n, [list(range(n))])


def a2a_vector(name, n, dtype, async_form):
    """AllToAll_16BitInt / AsyncAllToAll: a0 + id split n ways along dim 0;
    the test's a0 = {10, 15} continued as 10 + 5k."""
    consts = ", ".join(str(10 + 5 * k) for k in range(n))
    s = "%s[%d]" % (dtype, n)
    ids = ID_LINES[dtype != "u32"] % dtype
    head = ""
    if async_form:
        head = "all_to_all {\n  p0 = %s parameter(0)\n  ROOT result = %s all-to-all(p0), dimensions={0}\n}\n\n" % (s, s)
        a2a = ("  a2a-start = ((%s), %s) async-start(a1), calls=all_to_all\n"
               "  ROOT a2a = %s async-done(a2a-start), calls=all_to_all\n") % (s, s, s)
    else:
        a2a = "  ROOT a2a = %s all-to-all(a1), dimensions={0}\n" % s
    body = (head + "ENTRY test_computation {\n" + ids +
            "  id2 = %s broadcast(id), dimensions={}\n  a0 = %s constant({%s})\n  a1 = %s add(id2, a0)\n" % (s, s, consts, s) +
            a2a + "}\n")
    a0 = np.array([10 + 5 * k for k in range(n)], NP[dtype])
    want = [arr(dtype, np.array([a0[r] + s_ for s_ in range(n)], NP[dtype])) for r in range(n)]
    return module(name, body, replicas=n), no_args(n), want


@case("all-to-all", "16bit_int", CC + ": AllToAll_16BitInt", variant="u16[n] for n replicas (a0 = 10 + 5k)")
def _(n):
    return a2a_vector("a2a_16bit", n, "u16", False)


@case("async-start", "async_all_to_all", CC + ": AsyncAllToAll", variant="u32[n] for n replicas (a0 = 10 + 5k)")
def _(n):
    return a2a_vector("async_a2a", n, "u32", True)


@case("all-to-all", "with_split_dim_e2e", E2E + ": AsyncCollectiveOps.AsyncAllToAllWithSplitDim",
      variant="u32[n] for n replicas (a0 = 10 + 5k)")
def _(n):
    return a2a_vector("a2a_split_dim_e2e", n, "u32", False)


@case("all-to-all", "without_split_dim_e2e", E2E + ": AsyncCollectiveOps.AsyncAllToAllWithoutSplitDim", counts=(2,))
def _(n):
    body = """
ENTRY test_computation {
  id = u32[] replica-id()
  id2 = u32[2] broadcast(id), dimensions={}
  a0 = u32[2] constant({10, 15})
  a1 = u32[2] add(id2, a0)
  a2 = u32[2] constant({4, 4})
  a3 = u32[2] multiply(a1, a2)
  a2a = (u32[2], u32[2]) all-to-all(a1, a3), replica_groups={{0,1}}
  gte0 = u32[2] get-tuple-element(a2a), index=0
  gte1 = u32[2] get-tuple-element(a2a), index=1
  ROOT x = u32[4] concatenate(gte0, gte1), dimensions={0}
}
"""
    a1 = [np.array([10, 15], np.uint32) + np.uint32(r) for r in range(2)]
    a3 = [x * np.uint32(4) for x in a1]
    ops = [[a1[r], a3[r]] for r in range(2)]
    want = [arr("u32", np.concatenate([ops[s][d] for s in range(2)])) for d in range(2)]
    return module("a2a_without_split_dim_e2e", body, replicas=2), no_args(2), want


@case("all-to-all", "no_decomposition_e2e", E2E + ": NoAllToAllDecomposition",
      variant="u32[n,2] for n replicas (row j is {10(j+1), 10(j+1)+5} + id)")
def _(n):
    rows = ", ".join("{%d, %d}" % (10 * (j + 1), 10 * (j + 1) + 5) for j in range(n))
    body = """
ENTRY test_computation {
  id = u32[] replica-id()
  id2 = u32[%(n)d,2] broadcast(id), dimensions={}
  a0 = u32[%(n)d,2] constant({%(rows)s})
  a1 = u32[%(n)d,2] add(id2, a0)
  all2all = u32[%(n)d,2] all-to-all(a1), replica_groups=%(g)s, dimensions={0}
  ROOT out = u32[%(m)d] reshape(all2all)
}
""" % dict(n=n, rows=rows, g=groups_text([range(n)]), m=2 * n)
    return module("a2a_no_decomposition", body, replicas=n), no_args(n), a2a_expected(n, [list(range(n))])


@case("all-to-all", "cross_partition", E2E + ": WindowedEinsumE2EAllToAllDecompose (channel_id all-to-all over partitions)",
      variant="the split-dimension expression of AllToAll_SplitDimension over n partitions "
              "(partition-id, channel_id=1)")
def _(n):
    rows = ", ".join("{%d, %d}" % (10 * (j + 1), 10 * (j + 1) + 5) for j in range(n))
    body = """
ENTRY test_computation {
  id = u32[] partition-id()
  id2 = u32[%(n)d,2] broadcast(id), dimensions={}
  a0 = u32[%(n)d,2] constant({%(rows)s})
  a1 = u32[%(n)d,2] add(id2, a0)
  all2all = u32[%(n)d,2] all-to-all(a1), channel_id=1, replica_groups=%(g)s, dimensions={0}
  ROOT out = u32[%(m)d] reshape(all2all)
}
""" % dict(n=n, rows=rows, g=groups_text([range(n)]), m=2 * n)
    return module("a2a_cross_partition", body, partitions=n), no_args(n), a2a_expected(n, [list(range(n))])


f8_case("all-to-all", "8bit_float", CC + ": Fp8CollectiveOpsTest.AllToAll_8BitFloat (f8e4m3fn)", "f8e4m3fn",
        lambda n, t: """
ENTRY test_computation {
  a0 = %(t)s[%(n)d] constant({%(c)s})
  a2a = %(t)s[%(n)d] all-to-all(a0), dimensions={0}
  ROOT out = f32[%(n)d] convert(a2a)
}
""" % dict(t=t, n=n, c=",".join(str(k + 1) for k in range(n))),
        lambda n: [arr("f32", np.full(n, r + 1, np.float32)) for r in range(n)],
        "f8[n] = {1..n} for n replicas (the test's {1,2} continued)")

# ---------------------------------------------------------------- collective-permute


def permute_module(name, n, pairs, start=False, channel=False, source="replica-id"):
    """CollectivePermute_Simple's module: broadcast(id + 10) permuted."""
    attrs = "source_target_pairs=%s" % groups_text(pairs)
    if channel:
        attrs = "channel_id=1, " + attrs
    if start:
        cp = ("  start = (u32[2], u32[2]) collective-permute-start(p), %s\n"
              "  permute = u32[2] collective-permute-done(start)\n") % attrs
    else:
        cp = "  permute = u32[2] collective-permute(p), %s\n" % attrs
    body = ("ENTRY test_computation {\n  replica = u32[] %s()\n" % source +
            "  ten = u32[] constant(10)\n  sum = u32[] add(replica, ten)\n"
            "  p = u32[2] broadcast(sum), dimensions={}\n" + cp + "  ROOT copy = u32[2] copy(permute)\n}\n")
    if source == "partition-id":
        return module(name, body, partitions=n)
    return module(name, body, replicas=n)


def permuted(n, pairs):
    """Target t receives 10 + source; devices no pair targets are zero."""
    want = [np.zeros(2, np.uint32) for _ in range(n)]
    for src, dst in pairs:
        want[dst] = np.full(2, 10 + src, np.uint32)
    return [arr("u32", w) for w in want]


def permute_case(name, test, counts, pairs_fn, variant=None, **kw):
    op = "collective-permute-start" if kw.get("start") else "collective-permute"

    @case(op, name, test, counts=counts, variant=variant)
    def _(n):
        pairs = pairs_fn(n)
        return permute_module("cp_" + name, n, pairs, **kw), no_args(n), permuted(n, pairs)


permute_case("simple", CC + ": CollectivePermute_Simple", (4, 8), lambda n: [[1, 0], [0, 1], [2, 2]],
             "the test's pairs at 4 and 8 replicas (replicas 3.. receive nothing: zeros)")
permute_case("degenerate", CC + ": CollectivePermute_Degenerate", DEVICE_COUNTS,
             lambda n: [[i, i] for i in range(n)], "n replicas, every replica to itself")
permute_case("not_degenerate", CC + ": CollectivePermute_NotDegenerate", DEVICE_COUNTS,
             lambda n: [[i, i] for i in range(n - 1)], "n replicas, all but the last to themselves")
permute_case("rotate", CC + ": CollectivePermute_Rotate", DEVICE_COUNTS,
             lambda n: [[i, (i + 1) % n] for i in range(n)], "n replicas, i to i+1 mod n")
permute_case("async_collective_permute", CC + ": AsyncCollectivePermute", DEVICE_COUNTS,
             lambda n: [[i, i ^ 1] for i in range(n)], "n replicas, neighbours swap (i to i xor 1)", start=True)
permute_case("swap_e2e", E2E + ": AsyncCollectiveOps.AsyncCollectivePermute", DEVICE_COUNTS,
             lambda n: [[i ^ 1, i] for i in range(n)], "n replicas, neighbours swap")
permute_case("cross_partition_rotate", CC + ": CollectivePermute_Rotate over partitions", DEVICE_COUNTS,
             lambda n: [[i, (i + 1) % n] for i in range(n)],
             "n partitions: partition-id instead of replica-id, channel_id=1 (pairs name partitions)",
             channel=True, source="partition-id")

@case("collective-permute", "16bit_int", CC + ": CollectivePermute_16BitInt",
      variant="n replicas, neighbours swap (i to i xor 1; the test's {0,1},{1,0} at 2)")
def _(n):
    pairs = [[i, i ^ 1] for i in range(n)]
    body = """
ENTRY test_computation {
  id32 = u32[] replica-id()
  id = u16[] convert(id32)
  id2 = u16[2] broadcast(id), dimensions={}
  a0 = u16[2] constant({10, 15})
  a1 = u16[2] add(id2, a0)
  ROOT cp = u16[2] collective-permute(a1), source_target_pairs=%s
}
""" % groups_text(pairs)
    a0 = np.array([10, 15], np.uint16)
    want = [None] * n
    for src, dst in pairs:
        want[dst] = arr("u16", a0 + np.uint16(src))
    return module("cp_16bit", body, replicas=n), no_args(n), want


f8_case("collective-permute", "8bit_float", CC + ": Fp8CollectiveOpsTest.CollectivePermute_8BitFloat (f8e5m2)",
        "f8e5m2",
        lambda n, t: """
ENTRY test_computation {
  a0 = %(t)s[2] constant({1,2})
  a1 = %(t)s[2] collective-permute(a0), source_target_pairs=%(p)s
  ROOT out = f32[2] convert(a1)
}
""" % dict(t=t, p=groups_text([[i, (i + 1) % n] for i in range(n)])),
        lambda n: [arr("f32", np.array([1, 2], np.float32))] * n,
        "n replicas rotating (the test's swap at 2)")

# ---------------------------------------------------------------- reduce-scatter

ADD_U32 = """
add {
  lhs = u32[] parameter(0)
  rhs = u32[] parameter(1)
  ROOT add = u32[] add(lhs, rhs)
}
"""


def rs_chunks(total, n, axis=0):
    return np.split(total, n, axis=axis)


@case("reduce-scatter", "basic", CC + ": ReduceScatter",
      variant="n replicas: replica 0 holds c0, every other replica c1; u32[8] scattered n ways")
def _(n):
    body = ADD_U32 + """
ENTRY main {
  c0 = u32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
  c1 = u32[8] constant({10, 11, 12, 13, 14, 15, 16, 17})
  zero = u32[] constant(0)
  id = u32[] replica-id()
  p = pred[] compare(id, zero), direction=EQ
  pb = pred[8] broadcast(p), dimensions={}
  data = u32[8] select(pb, c0, c1)
  ROOT ars = u32[%d] reduce-scatter(data), replica_groups={}, dimensions={0}, to_apply=add
}
""" % (8 // n)
    total = fold("add", replica_select(n, np.arange(1, 9, dtype=np.uint32), np.arange(10, 18, dtype=np.uint32)))
    return module("reduce_scatter", body, replicas=n), no_args(n), [arr("u32", c) for c in rs_chunks(total, n)]


@case("reduce-scatter", "async_e2e", E2E + ": AsyncCollectiveOps.AsyncReduceScatter",
      variant="n replicas: replica 0 holds c0, every other replica c1; u32[8] scattered n ways")
def _(n):
    text, args, want = [c for c in CASES if c["name"] == "basic" and c["op"] == "reduce-scatter"][0]["gen"](n)
    return text.replace("HloModule reduce_scatter", "HloModule reduce_scatter_e2e"), args, want


@case("async-start", "async_reduce_scatter", CC + ": AsyncReduceScatter",
      variant="n replicas: replica 0 holds c0, every other replica c1; u32[8] scattered n ways")
def _(n):
    k = 8 // n
    body = ADD_U32 + """
reduce_scatter {
  p0 = u32[8] parameter(0)
  ROOT result = u32[%(k)d] reduce-scatter(p0), replica_groups={}, dimensions={0}, to_apply=add
}

ENTRY main {
  c0 = u32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
  c1 = u32[8] constant({10, 11, 12, 13, 14, 15, 16, 17})
  zero = u32[] constant(0)
  id = u32[] replica-id()
  p = pred[] compare(id, zero), direction=EQ
  pb = pred[8] broadcast(p), dimensions={}
  data = u32[8] select(pb, c0, c1)
  rs-start = ((u32[8]), u32[%(k)d]) async-start(data), calls=reduce_scatter
  ROOT ars = u32[%(k)d] async-done(rs-start), calls=reduce_scatter
}
""" % dict(k=k)
    total = fold("add", replica_select(n, np.arange(1, 9, dtype=np.uint32), np.arange(10, 18, dtype=np.uint32)))
    return module("async_reduce_scatter", body, replicas=n), no_args(n), [arr("u32", c) for c in rs_chunks(total, n)]


@case("reduce-scatter", "constrain_layout", CC + ": ReduceScatterConstrainLayout",
      variant="n replicas, u32[16] scattered n ways")
def _(n):
    body = """
sum {
  a = u32[] parameter(0)
  b = u32[] parameter(1)
  ROOT add = u32[] add(a, b)
}

ENTRY main {
  param = u32[16] parameter(0)
  ROOT rs = u32[%d] reduce-scatter(param), replica_groups={}, constrain_layout=true, to_apply=sum, dimensions={0}
}
""" % (16 // n)
    x = np.arange(1, 17, dtype=np.uint32)
    return (module("reduce_scatter_constrain_layout", body, replicas=n), same_args(n, arr("u32", x)),
            [arr("u32", c) for c in rs_chunks(x * np.uint32(n), n)])


@case("reduce-scatter", "dim1", CC + ": ReduceScatter_Dim1", counts=(2, 4),
      variant="n replicas: replica 0 holds c0, every other replica c1; dimension 1 (size 4) scattered n ways")
def _(n):
    k = 4 // n
    body = ADD_U32 + """
ENTRY main {
  c0 = u32[2,4] constant({{ 1,  2,  3,  4}, { 5,  6,  7,  8}})
  c1 = u32[2,4] constant({{10, 11, 12, 13}, {14, 15, 16, 17}})
  zero = u32[] constant(0)
  id = u32[] replica-id()
  p = pred[] compare(id, zero), direction=EQ
  pb = pred[2,4] broadcast(p), dimensions={}
  data = u32[2,4] select(pb, c0, c1)
  ars = u32[2,%d] reduce-scatter(data), replica_groups={}, dimensions={1}, to_apply=add
  ROOT r = u32[%d] reshape(ars)
}
""" % (k, 2 * k)
    c0 = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.uint32)
    c1 = np.array([[10, 11, 12, 13], [14, 15, 16, 17]], np.uint32)
    total = fold("add", replica_select(n, c0, c1))
    return (module("reduce_scatter_dim1", body, replicas=n), no_args(n),
            [arr("u32", c.reshape(-1)) for c in rs_chunks(total, n, axis=1)])


@case("reduce-scatter", "16bit_int", CC + ": ReduceScatter_16BitInt", variant="u16[n] for n replicas (a0 = 10 + 5k)")
def _(n):
    consts = ", ".join(str(10 + 5 * k) for k in range(n))
    body = """
sum {
  a = u16[] parameter(0)
  b = u16[] parameter(1)
  ROOT add.2 = u16[] add(a, b)
}

ENTRY test_computation {
  id32 = u32[] replica-id()
  id = u16[] convert(id32)
  id2 = u16[%(n)d] broadcast(id), dimensions={}
  a0 = u16[%(n)d] constant({%(c)s})
  a1 = u16[%(n)d] add(id2, a0)
  ROOT cp = u16[1] reduce-scatter(a1), dimensions={0}, replica_groups={}, to_apply=sum
}
""" % dict(n=n, c=consts)
    a0 = np.array([10 + 5 * k for k in range(n)], np.uint16)
    total = fold("add", [a0 + np.uint16(r) for r in range(n)])
    return module("reduce_scatter_16bit", body, replicas=n), no_args(n), [arr("u16", c) for c in rs_chunks(total, n)]


def reassociate_data(n):
    c = [np.arange(1, 9, dtype=np.uint32), np.arange(11, 19, dtype=np.uint32),
         np.arange(2, 10, dtype=np.uint32), np.arange(12, 20, dtype=np.uint32)]
    return fold("add", replica_select(n, c[0], c[1])) + fold("add", replica_select(n, c[2], c[3]))


REASSOC_HEAD = """
sum {
  a = u32[] parameter(0)
  b = u32[] parameter(1)
  ROOT add.2 = u32[] add(a, b)
}

ENTRY main {
  c0 = u32[8] constant({  1,  2,  3,  4,  5,  6,  7,  8})
  c1 = u32[8] constant({ 11, 12, 13, 14, 15, 16, 17, 18})
  c2 = u32[8] constant({  2,  3,  4,  5,  6,  7,  8,  9})
  c3 = u32[8] constant({ 12, 13, 14, 15, 16, 17, 18, 19})
  zero = u32[] constant(0)
  id = u32[] replica-id()
  p = pred[] compare(id, zero), direction=EQ
  pb = pred[8] broadcast(p), dimensions={}
  data0 = u32[8] select(pb, c0, c1)
  data1 = u32[8] select(pb, c2, c3)
"""


@case("reduce-scatter", "reassociate", CC + ": ReduceScatterReassociate",
      variant="n replicas: replica 0 holds c0/c2, every other replica c1/c3; u32[8] scattered n ways")
def _(n):
    k = 8 // n
    body = REASSOC_HEAD + """  rs0 = u32[%(k)d] reduce-scatter(data0), replica_groups={}, dimensions={0}, to_apply=sum
  rs1 = u32[%(k)d] reduce-scatter(data1), replica_groups={}, dimensions={0}, to_apply=sum
  ROOT add = u32[%(k)d] add(rs0, rs1)
}
""" % dict(k=k)
    return (module("reduce_scatter_reassociate", body, replicas=n), no_args(n),
            [arr("u32", c) for c in rs_chunks(reassociate_data(n), n)])


@case("all-reduce", "reduce_scatter_creator", CC + ": ReduceScatterReassociate_ReduceScatterCreator",
      variant="n replicas: replica 0 holds c0/c2, every other replica c1/c3; slices of 8/n at replica-id*8/n")
def _(n):
    k = 8 // n
    body = REASSOC_HEAD + """  ar0 = u32[8] all-reduce(data0), replica_groups={}, to_apply=sum
  ar1 = u32[8] all-reduce(data1), replica_groups={}, to_apply=sum
  rid = u32[] replica-id()
  slice_size = u32[] constant(%(k)d)
  offset = u32[] multiply(rid, slice_size)
  ds0 = u32[%(k)d] dynamic-slice(ar0, offset), dynamic_slice_sizes={%(k)d}
  ds1 = u32[%(k)d] dynamic-slice(ar1, offset), dynamic_slice_sizes={%(k)d}
  ROOT add = u32[%(k)d] add(ds0, ds1)
}
""" % dict(k=k)
    return (module("reduce_scatter_creator", body, replicas=n), no_args(n),
            [arr("u32", c) for c in rs_chunks(reassociate_data(n), n)])


@case("reduce-scatter", "while_loop_code_motion", E2E + ": WhileLoopReduceScatterCodeMotion",
      variant="at 2 replicas the test itself (74 and 110); at n the u32[2] operand is widened to u32[n] "
              "by tiling the test's constants {10,15} and {1,2} so that it splits n ways")
def _(n):
    a0 = np.tile(np.array([10, 15], np.uint32), n // 2)
    inc = np.tile(np.array([1, 2], np.uint32), n // 2)
    body = ADD_U32 + """
cond {
  param = (u32[], u32[%(n)d], u32[1]) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  limit = u32[] constant(3)
  ROOT result = pred[] compare(count, limit), direction=LT
}

body {
  param = (u32[], u32[%(n)d], u32[1]) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  increment = u32[] constant(1)
  new_count = u32[] add(count, increment)
  rs_input = u32[%(n)d] get-tuple-element(param), index=1
  rs = u32[1] reduce-scatter(rs_input), replica_groups={%(g)s}, to_apply=add, dimensions={0}
  old_accum = u32[1] get-tuple-element(param), index=2
  new_accum = u32[1] add(rs, old_accum)
  input_inc = u32[%(n)d] constant({%(inc)s})
  new_rs_input = u32[%(n)d] add(rs_input, input_inc)
  ROOT ret = (u32[], u32[%(n)d], u32[1]) tuple(new_count, new_rs_input, new_accum)
}

ENTRY test_computation {
  count = u32[] constant(0)
  id = u32[] replica-id()
  id2 = u32[%(n)d] broadcast(id), dimensions={}
  a0 = u32[%(n)d] constant({%(a0)s})
  init_rs_input = u32[%(n)d] add(id2, a0)
  init_rs_accum = u32[1] constant({5})
  while_init = (u32[], u32[%(n)d], u32[1]) tuple(count, init_rs_input, init_rs_accum)
  while_result = (u32[], u32[%(n)d], u32[1]) while(while_init), body=body, condition=cond
  ROOT gte = u32[1] get-tuple-element(while_result), index=2
}
""" % dict(n=n, g="{" + ",".join(map(str, range(n))) + "}",
           inc=", ".join(map(str, inc)), a0=", ".join(map(str, a0)))
    inputs = [a0 + np.uint32(r) for r in range(n)]
    accum = [np.array([5], np.uint32) for _ in range(n)]
    for _ in range(3):
        chunks = rs_chunks(fold("add", inputs), n)
        accum = [accum[r] + chunks[r] for r in range(n)]
        inputs = [x + inc for x in inputs]
    if n == 2:
        assert [int(a[0]) for a in accum] == [74, 110], accum  # the test's own values
    return module("while_rs_code_motion", body, replicas=n), no_args(n), [arr("u32", a) for a in accum]

# ---------------------------------------------------------------- collective-broadcast


def cb_group(n):
    """The tests' group {1, 0, 2, 3} (collective_ops_test) / {1, 0}
    (e2e) continued: replica 1 first, so it is the root."""
    return [1, 0] + list(range(2, n))


@case("async-start", "collective_broadcast_simple", CC + ": CollectiveBroadcast_Simple",
      variant="n replicas, group {1,0,2,..,n-1}: every replica receives replica 1's 11")
def _(n):
    body = """
collective_broadcast {
  p0 = u32[2] parameter(0)
  ROOT result = u32[2] collective-broadcast(p0), replica_groups=%s
}

ENTRY test_computation {
  replica = u32[] replica-id()
  ten = u32[] constant(10)
  sum = u32[] add(replica, ten)
  p = u32[2] broadcast(sum), dimensions={}
  cb = ((u32[2]), u32[2]) async-start(p), calls=collective_broadcast
  ROOT res = u32[2] async-done(cb), calls=collective_broadcast
}
""" % groups_text([cb_group(n)])
    return (module("collective_broadcast_simple", body, replicas=n), no_args(n),
            [arr("u32", np.full(2, 10 + cb_group(n)[0], np.uint32))] * n)


@case("collective-broadcast", "sync_e2e", E2E + ": AsyncCollectiveOps.AsyncCollectiveBroadcast",
      variant="n replicas, group {1,0,2,..,n-1}: every replica receives replica 1's 11")
def _(n):
    body = """
ENTRY test_computation {
  replica = u32[] replica-id()
  ten = u32[] constant(10)
  sum = u32[] add(replica, ten)
  p = u32[2] broadcast(sum), dimensions={}
  bcast = u32[2] collective-broadcast(p), replica_groups=%s
  ROOT res = u32[2] copy(bcast)
}
""" % groups_text([cb_group(n)])
    return (module("collective_broadcast_e2e", body, replicas=n), no_args(n),
            [arr("u32", np.full(2, 10 + cb_group(n)[0], np.uint32))] * n)

# ---------------------------------------------------------------- replica-id / partition-id


@case("replica-id", "replica_id", CC + ": ReplicaId")
def _(n):
    body = "ENTRY test_computation {\n  id = u32[] replica-id()\n  ROOT out = u32[] copy(id)\n}\n"
    return module("replica_id", body, replicas=n), no_args(n), [arr("u32", np.array(i, np.uint32)) for i in range(n)]


@case("partition-id", "partition_id", CC + ": ReplicaId over partitions",
      variant="n partitions: partition-id in place of replica-id")
def _(n):
    body = "ENTRY test_computation {\n  id = u32[] partition-id()\n  ROOT out = u32[] copy(id)\n}\n"
    return module("partition_id", body, partitions=n), no_args(n), [arr("u32", np.array(i, np.uint32)) for i in range(n)]


@case("replica-id", "replica_and_partition_id", CC + ": ReplicaId with replicas and partitions",
      variant="2 replicas × n/2 partitions: device p*2+r returns (r, p)")
def _(n):
    body = """
ENTRY test_computation {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT out = (u32[], u32[]) tuple(r, p)
}
"""
    want = [[arr("u32", np.array(d % 2, np.uint32)), arr("u32", np.array(d // 2, np.uint32))] for d in range(n)]
    return module("replica_and_partition_id", body, replicas=2, partitions=n // 2), no_args(n), want


@case("replica-id", "matmul_replicated", E2E + ": AsyncCollectiveOps.MatmulReplicated",
      variant="fixed small-integer arguments instead of MakeFakeArguments; expected from the test's "
              "single-device reference module (replica id as a parameter), n replicas")
def _(n):
    body = """
ENTRY test {
  x_f32 = f32[16,32] parameter(0)
  y_f32 = f32[16,32] parameter(1)
  replica_id = u32[] replica-id()
  addend = f32[] convert(replica_id)
  addend_bcast = f32[16,32] broadcast(addend), dimensions={}
  x_add = f32[16,32] add(addend_bcast, x_f32)
  ROOT dot_a = f32[16,16] dot(x_add, y_f32), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}
"""
    i = np.arange(16 * 32).reshape(16, 32)
    x = ((i * 7) % 11 - 5).astype(np.float32)
    y = ((i * 5) % 7 - 3).astype(np.float32)
    want = [arr("f32", ((x + np.float32(r)) @ y.T).astype(np.float32)) for r in range(n)]
    return module("matmul_replicated", body, replicas=n), same_args(n, arr("f32", x), arr("f32", y)), want


# ---------------------------------------------------------------- checks

# The tests' own literal values at the device count each test runs at: the
# generalized expressions above must reproduce them exactly.
XLA_LITERALS = {
    ("all-reduce", "sum_float32_2d", 2): [[2, 4, 6, 8]] * 2,
    ("all-reduce", "sum_complex64", 2): [[2 + 4j, 6 + 8j]] * 2,
    ("all-reduce", "two_replicas_one_operand_int8_multiply", 2): [[1, 4, 9]] * 2,
    ("all-reduce", "two_replicas_one_operand_bfloat16_add", 2): [[2, 4, 6]] * 2,
    ("all-reduce", "two_replicas_one_operand_int32_add_negative", 2): [[-2, -4, -6]] * 2,
    ("all-reduce", "and_pred_replica0", 2): [[False]] * 2,
    ("all-reduce", "or_pred_replica0", 2): [[True]] * 2,
    ("all-reduce", "combinable_all_reduces", 2): [[[2, 4, 6, 8, 10], [14, 6, 8, 2, 4]]] * 2,
    ("all-reduce", "tuple_all_reduce", 2): [[[2, 4, 6, 8, 10], [14, 6, 8, 2, 4, 6, 8]]] * 2,
    ("all-reduce", "degenerate", 4): [[0], [1], [2], [3]],
    ("all-reduce-start", "async_all_reduce", 4): [[6]] * 4,
    ("all-reduce-start", "async_all_reduce_two_operands", 4): [[[6], [14]]] * 4,
    ("all-reduce", "bfloat16_min", 2): [[1, 1]] * 2,
    ("all-reduce", "16bit_int", 2): [[21, 31]] * 2,
    ("all-reduce", "reassociate", 2): [[26, 30, 34, 38, 42, 46, 50, 54]] * 2,
    ("all-gather", "dim0", 2): [[10, 15, 11, 16]] * 2,
    ("all-gather", "dim1", 2): [[10, 11, 15, 16]] * 2,
    ("all-gather", "mixed_types", 2): [[[0, 1, 0, 1], [0, 1, 0, 1]]] * 2,
    ("all-gather", "dim1_unit_dimensions", 2): [[0, 1, 2, 3, 1, 2, 3, 4]] * 2,
    ("all-gather", "8bit_float", 2): [[1, 2, 1, 2]] * 2,
    ("all-gather", "broadcast_reorder_uniform", 2): [
        [1, 2, 3] * 4 + [10, 11, 12] * 4 + [4, 5, 6] * 4 + [13, 14, 15] * 4] * 2,
    ("all-gather", "broadcast_reorder_non_uniform", 2): [
        [1, 2, 3, 10, 11, 12] * 4 + [4, 5, 6, 13, 14, 15] * 4] * 2,
    ("all-to-all", "empty_replica_groups", 4): [
        [10, 15, 11, 16, 12, 17, 13, 18], [20, 25, 21, 26, 22, 27, 23, 28],
        [30, 35, 31, 36, 32, 37, 33, 38], [40, 45, 41, 46, 42, 47, 43, 48]],
    ("all-to-all", "ordered_replica_groups", 4): [
        [43, 48, 42, 47, 41, 46, 40, 45], [33, 38, 32, 37, 31, 36, 30, 35],
        [23, 28, 22, 27, 21, 26, 20, 25], [13, 18, 12, 17, 11, 16, 10, 15]],
    ("all-to-all", "two_replica_groups", 4): [[23, 28, 20, 25], [22, 27, 21, 26], [12, 17, 11, 16], [13, 18, 10, 15]],
    ("all-to-all", "split_dimension", 4): [
        [10, 15, 11, 16, 12, 17, 13, 18], [20, 25, 21, 26, 22, 27, 23, 28],
        [30, 35, 31, 36, 32, 37, 33, 38], [40, 45, 41, 46, 42, 47, 43, 48]],
    ("all-to-all", "16bit_int", 2): [[10, 11], [15, 16]],
    ("all-to-all", "without_split_dim_e2e", 2): [[10, 15, 11, 16], [40, 60, 44, 64]],
    ("all-to-all", "no_decomposition_e2e", 2): [[10, 15, 11, 16], [20, 25, 21, 26]],
    ("all-to-all", "8bit_float", 2): [[1, 1], [2, 2]],
    ("async-start", "async_all_to_all", 2): [[10, 11], [15, 16]],
    ("collective-permute", "simple", 4): [[11, 11], [10, 10], [12, 12], [0, 0]],
    ("collective-permute", "degenerate", 4): [[10, 10], [11, 11], [12, 12], [13, 13]],
    ("collective-permute", "not_degenerate", 4): [[10, 10], [11, 11], [12, 12], [0, 0]],
    ("collective-permute", "rotate", 4): [[13, 13], [10, 10], [11, 11], [12, 12]],
    ("collective-permute", "16bit_int", 2): [[11, 16], [10, 15]],
    ("collective-permute", "8bit_float", 2): [[1, 2], [1, 2]],
    ("collective-permute-start", "async_collective_permute", 2): [[11, 11], [10, 10]],
    ("collective-permute", "swap_e2e", 2): [[11, 11], [10, 10]],
    ("reduce-scatter", "basic", 2): [[11, 13, 15, 17], [19, 21, 23, 25]],
    ("reduce-scatter", "constrain_layout", 2): [[2, 4, 6, 8, 10, 12, 14, 16], [18, 20, 22, 24, 26, 28, 30, 32]],
    ("reduce-scatter", "dim1", 2): [[11, 13, 19, 21], [15, 17, 23, 25]],
    ("reduce-scatter", "16bit_int", 2): [[21], [31]],
    ("reduce-scatter", "reassociate", 2): [[26, 30, 34, 38], [42, 46, 50, 54]],
    ("all-reduce", "reduce_scatter_creator", 2): [[26, 30, 34, 38], [42, 46, 50, 54]],
    ("reduce-scatter", "while_loop_code_motion", 2): [[74], [110]],
    ("async-start", "async_reduce_scatter", 2): [[11, 13, 15, 17], [19, 21, 23, 25]],
    ("async-start", "collective_broadcast_simple", 4): [[11, 11]] * 4,
    ("collective-broadcast", "sync_e2e", 2): [[11, 11]] * 2,
    ("replica-id", "replica_id", 4): [[0], [1], [2], [3]],
}


def plain(v):
    if isinstance(v, list):
        return [plain(e) for e in v]
    return [x.item() if hasattr(x, "item") else x for x in v[1].reshape(-1)]


def check_literals():
    by_key = {(c["op"], c["name"]): c for c in CASES}
    for (op, name, n), want in XLA_LITERALS.items():
        got = [plain(e) for e in by_key[(op, name)]["gen"](n)[2]]
        assert got == want, "%s/%s at %d devices: %s, the test says %s" % (op, name, n, got, want)


# ---------------------------------------------------------------- driver

def write_all():
    for op in {c["op"] for c in CASES}:
        shutil.rmtree(os.path.join(HERE, op), ignore_errors=True)
    count = 0
    for c in CASES:
        for n in c["counts"]:
            hlo, args, expected = c["gen"](n)
            assert len(args) == n and len(expected) == n, (c["name"], n)
            name = "%s/%s_%ddev" % (c["op"], c["name"], n)
            doc = {"name": name, "op": c["op"], "devices": n, "hlo": hlo,
                   "args": [[encode(a) for a in dev] for dev in args],
                   "expected": [encode(e) for e in expected],
                   "source": c["source"], "expected_from": "xla-test"}
            if c["variant"]:
                doc["variant"] = c["variant"]
            if c["tolerance"]:
                doc["tolerance"] = c["tolerance"]
            path = os.path.join(HERE, name + ".json")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")
            count += 1
    names = {(c["op"], c["name"]) for c in CASES}
    print("%d cases, %d files" % (len(names), count), file=sys.stderr)


if __name__ == "__main__":
    check_literals()
    write_all()
