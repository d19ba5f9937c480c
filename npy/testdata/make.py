#!/usr/bin/python3
"""Writes the .npy/.npz test files of package npy with NumPy, and the
values NumPy sees in them (expected.json), or checks files Go wrote.

    cd npy/testdata && /usr/bin/python3 make.py           # rewrite the files
    /usr/bin/python3 make.py --verify DIR                  # check DIR's files

--verify loads every DIR/NAME.npy and DIR/NAME.npz that Go wrote (the test
TestNumPyReadsOurFiles does this when python3 has numpy) and compares the
dtype, shape and bits with the arrays below; it exits 1 on a mismatch.

expected.json lists, per file and member: the HLO element type, the shape
and the elements' bit patterns in row-major order as unsigned integers
(complex: real and imaginary parts in turn; bool: 0 or 1). bf16 has no
NumPy dtype: it is written as ml_dtypes' bfloat16 is, descr '<V2', from
uint16 bit patterns.
"""
import json
import os
import sys

import numpy as np

HLO = {"|b1": "pred", "|i1": "s8", "<i2": "s16", "<i4": "s32", "<i8": "s64",
       "|u1": "u8", "<u2": "u16", "<u4": "u32", "<u8": "u64",
       "<f2": "f16", "<f4": "f32", "<f8": "f64", "<c8": "c64", "<c16": "c128",
       "<V2": "bf16", "|V2": "bf16"}

# Bit patterns of bf16 values: 1, -2, 0.5, +inf, NaN, the smallest normal.
# As a void array (what NumPy without ml_dtypes loads a bfloat16 file as).
BF16 = np.array([0x3F80, 0xC000, 0x3F00, 0x7F80, 0x7FC0, 0x0080], dtype="<u2").reshape(2, 3).view("V2")


def special(dt):
    """Six values of float type dt with the edge cases in them."""
    return np.array([1.5, -0.0, np.inf, -np.inf, np.nan, np.finfo(dt).tiny], dtype=dt).reshape(2, 3)


def arrays():
    """The test arrays by file name (without .npy), in C order."""
    a = {
        "b1": np.array([[True, False, True], [False, False, True]]),
        "i1": np.array([-128, -1, 0, 1, 2, 127], dtype="i1").reshape(2, 3),
        "i2": np.array([-32768, -1, 0, 1, 300, 32767], dtype="<i2").reshape(2, 3),
        "i4": np.array([-2**31, -1, 0, 1, 70000, 2**31 - 1], dtype="<i4").reshape(2, 3),
        "i8": np.array([-2**63, -1, 0, 1, 2**40 + 3, 2**63 - 1], dtype="<i8").reshape(2, 3),
        "u1": np.array([0, 1, 2, 127, 128, 255], dtype="u1").reshape(2, 3),
        "u2": np.array([0, 1, 2, 300, 32768, 65535], dtype="<u2").reshape(2, 3),
        "u4": np.array([0, 1, 2, 70000, 2**31, 2**32 - 1], dtype="<u4").reshape(2, 3),
        "u8": np.array([0, 1, 2, 2**40 + 3, 2**63, 2**64 - 1], dtype="<u8").reshape(2, 3),
        "f2": special("<f2"),
        "f4": special("<f4"),
        "f8": special("<f8"),
        "c8": np.array([1 + 2j, -0.5j, complex(np.inf, np.nan)], dtype="<c8"),
        "c16": np.array([1 + 2j, -0.5j, complex(-np.inf, 1e-300)], dtype="<c16"),
        "scalar_f8": np.array(2.5, dtype="<f8"),
        "empty_f4": np.zeros((0, 3), dtype="<f4"),
        "fortran_i4": np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4)),
        "big_f4": np.array([1.5, -2.25, 3e38], dtype=">f4"),
        "big_i8": np.array([[1, -2], [2**62, -2**62]], dtype=">i8"),
        "big_c16": np.array([1 + 2j, -3 - 4j], dtype=">c16"),
        "big_fortran_u2": np.asfortranarray(np.arange(6, dtype=">u2").reshape(3, 2)),
        "v2_f8": np.array([1.0, 2.0, 3.0], dtype="<f8"),
        "v3_u1": np.array([[7, 8], [9, 10]], dtype="u1"),
        "bf16": BF16,
    }
    return a


# How a file is written when np.save is not enough: version or descr.
VERSIONS = {"v2_f8": (2, 0), "v3_u1": (3, 0)}

# The .npz archives: file name -> (compressed, {member: array name}).
NPZ = {
    "savez": (False, {"arr_0": "f4", "arr_1": "i8", "arr_2": "b1"}),
    "savez_compressed": (True, {"x": "f8", "y": "scalar_f8", "z": "bf16"}),
}


def descr(arr):
    return "<V2" if arr.dtype.kind == "V" else np.lib.format.dtype_to_descr(arr.dtype.newbyteorder("<"))


def bits(arr):
    """Row-major bit patterns as Python ints."""
    c = np.ascontiguousarray(arr)
    if c.dtype.kind == "V":
        c = c.view("<u2")
    c = c.astype(c.dtype.newbyteorder("<"))
    if c.dtype.kind == "b":
        return [int(x) for x in c.ravel()]
    if c.dtype.kind == "c":
        c = c.view("<f%d" % (c.dtype.itemsize // 2))
    return [int(x) for x in c.view("<u%d" % c.dtype.itemsize).ravel()]


def expect(arr):
    return {"dtype": HLO[descr(arr)], "shape": list(arr.shape), "bits": bits(arr)}


def save(path, name, arr):
    if name == "bf16":
        # What np.save writes for ml_dtypes.bfloat16, whose dtype.str is '<V2'.
        with open(path, "wb") as f:
            np.lib.format.write_array_header_1_0(
                f, {"descr": "<V2", "fortran_order": False, "shape": arr.shape})
            f.write(arr.tobytes())
    elif name in VERSIONS:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, arr, version=VERSIONS[name])
    else:
        np.save(path, arr)


def write_npz(path, compressed, members, a):
    # A bf16 member is a void array, which plain NumPy writes as '|V2'.
    data = {m: a[src] for m, src in members.items()}
    if compressed:
        np.savez_compressed(path, **data)
    else:
        np.savez(path, **data)


# The axle run test (cmd/axle/npz_test.go) runs this module on the
# run_*.npz inputs and compares what --save-outputs writes with
# run_expected.npz, computed here:
#
#   x = f32[2,3] parameter(0), y = f32[3] parameter(1), z = bf16[2] parameter(2)
#   ROOT (f32[2,3] x + broadcast(y, dimensions={1}), f32[2] convert(z))
RUN_X = np.array([[1, 2.5, -3], [4, 0.25, 6]], dtype="<f4")
RUN_Y = np.array([10, -1, 0.5], dtype="<f4")
RUN_Z = np.array([0x3FC0, 0xC120], dtype="<u2")  # bf16 bits of 1.5 and -10


def make_run():
    # Positional (arr_0, ...), the bf16 argument as uint16 bit patterns.
    np.savez("run_positional.npz", RUN_X, RUN_Y, RUN_Z)
    # By parameter name, in another order, the bf16 argument as '|V2'.
    np.savez_compressed("run_named.npz", z=RUN_Z.view("V2"), x=RUN_X, y=RUN_Y)
    zf = (RUN_Z.astype("<u4") << 16).view("<f4")
    np.savez("run_expected.npz", output_0=RUN_X + RUN_Y, output_1=zf)


def make():
    make_run()
    a = arrays()
    exp = {}
    for name, arr in a.items():
        save(name + ".npy", name, arr)
        exp[name + ".npy"] = expect(arr)
    for name, (compressed, members) in NPZ.items():
        write_npz(name + ".npz", compressed, members, a)
        exp[name + ".npz"] = {m: expect(a[src]) for m, src in members.items()}
    # An object array, which readers must refuse.
    np.save("object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
    with open("expected.json", "w") as f:
        f.write("{\n" + ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(exp[k], sort_keys=True))
                                    for k in sorted(exp)) + "\n}\n")


def check(got, want, what):
    if descr(got) not in HLO or HLO[descr(got)] != HLO[descr(want)]:
        return "%s: dtype %s, want %s" % (what, got.dtype, want.dtype)
    if got.shape != want.shape:
        return "%s: shape %s, want %s" % (what, got.shape, want.shape)
    if bits(got) != bits(want):
        return "%s: values %s, want %s" % (what, got, want)
    return None


def verify(d):
    a = arrays()
    errors, n = [], 0
    for f in sorted(os.listdir(d)):
        name, ext = os.path.splitext(f)
        path = os.path.join(d, f)
        if ext == ".npy" and name in a:
            errors.append(check(np.load(path), a[name], f))
            n += 1
        elif ext == ".npz" and name in NPZ:
            members = NPZ[name][1]
            with np.load(path) as z:
                if sorted(z.files) != sorted(members):
                    errors.append("%s: members %s, want %s" % (f, z.files, list(members)))
                    continue
                for m, src in members.items():
                    errors.append(check(z[m], a[src], f + ":" + m))
                    n += 1
    errors = [e for e in errors if e]
    for e in errors:
        print(e)
    print("%d passed, %d failed" % (n - len(errors), len(errors)))
    return 1 if errors or n == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--verify":
        sys.exit(verify(sys.argv[2]))
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    make()
