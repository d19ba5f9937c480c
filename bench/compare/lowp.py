"""Peers for the bf16 and int8 workloads of ../shared/bench: PyTorch and ONNX Runtime inputs.

Usage: /usr/bin/python3 lowp.py OUTDIR [ROUND]
Times numpy's f32 matmul (OpenBLAS) and PyTorch's bf16 matmul (oneDNN) on 2048x2048
operands (2 threads; Debian's PyTorch runs f32 matmul through the reference BLAS, 80 times
slower, so numpy is the f32 peer) and writes OUTDIR/torch.json ({name: ms};
torch.ROUND.json for ROUND > 1). With ROUND 1 it also writes, for ort.js, ONNX models of
the int8 workloads as ONNX writes them (MatMulInteger: s8 x s8 -> s32 for gemm_s8_2048,
u8 x s8 -> s32 for gemm_u8s8_1024x4096), their inputs as raw bytes (NAME.inN.bin) and
OUTDIR/manifest.json (shapes, element types, the exact sum of numpy's int64 product).
The environment (OMP_NUM_THREADS=2, OMP_WAIT_POLICY=passive, ...) is set by lowp.sh.
"""
import json
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

INT8 = {
    "gemm_s8_2048": ((2048, 2048), (2048, 2048), np.int8, TensorProto.INT8),
    "gemm_u8s8_1024x4096": ((1024, 4096), (4096, 1024), np.uint8, TensorProto.UINT8),
}


def median_ms(f, warmup=2, repeat=7):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def torch_times():
    import torch
    torch.set_num_threads(2)
    torch.set_num_interop_threads(1)
    g = torch.Generator().manual_seed(1)
    a = torch.rand(2048, 2048, generator=g) * 2 - 1
    b = torch.rand(2048, 2048, generator=g) * 2 - 1
    an, bn = a.numpy(), b.numpy()
    ab, bb = a.bfloat16(), b.bfloat16()
    with torch.no_grad():
        return {"gemm_f32_2048": median_ms(lambda: np.matmul(an, bn)),
                "gemm_bf16_2048": median_ms(lambda: torch.matmul(ab, bb))}


def int8_models(out):
    rng = np.random.default_rng(1)
    manifest = {}
    for name, (sa, sb, ta, pa) in INT8.items():
        info = np.iinfo(ta)
        a = rng.integers(info.min, info.max + 1, sa, dtype=np.int64).astype(ta)
        b = rng.integers(-128, 128, sb, dtype=np.int64).astype(np.int8)
        node = helper.make_node("MatMulInteger", ["a", "b"], ["c"])
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info("a", pa, sa),
                                                 helper.make_tensor_value_info("b", TensorProto.INT8, sb)],
                                  [helper.make_tensor_value_info("c", TensorProto.INT32, (sa[0], sb[1]))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        onnx.save(model, os.path.join(out, name + ".onnx"))
        files = [name + ".in0.bin", name + ".in1.bin"]
        a.tofile(os.path.join(out, files[0]))
        b.tofile(os.path.join(out, files[1]))
        want = a.astype(np.int64) @ b.astype(np.int64)
        manifest[name] = {"inputs": files, "shapes": [list(sa), list(sb)],
                          "types": ["int8" if ta == np.int8 else "uint8", "int8"],
                          "sum": float(want.sum()), "abssum": float(np.abs(want).sum()),
                          "warmup": 2, "repeat": 7}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f)


def main():
    out = sys.argv[1]
    rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if rnd == 1:
        int8_models(out)
    times = torch_times()
    print(times, file=sys.stderr, flush=True)
    with open(os.path.join(out, "torch.json" if rnd == 1 else f"torch.{rnd}.json"), "w") as f:
        json.dump(times, f)


if __name__ == "__main__":
    main()
