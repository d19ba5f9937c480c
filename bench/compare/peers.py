"""numpy and PyTorch on the ../shared/bench workloads, plus ONNX exports for ort.js.

Usage: /usr/bin/python3 peers.py OUTDIR [ROUND]
Times every workload with numpy and with PyTorch (2 threads, random f32 inputs in
[-1, 1) created before timing, warm-up runs, then the median of individually timed
calls), checks that the two agree, and writes OUTDIR/peers.json ({workload:
{"numpy": ms, "torch": ms}}). For ort.js it also writes, per workload, OUTDIR/NAME.onnx
(torch.onnx.export, opset 13), the inputs as raw little-endian f32 (NAME.inN.bin) and
OUTDIR/manifest.json (input shapes, the sum of numpy's output, warm-up and repeat).
With ROUND > 1 (run.sh times every engine in several processes, rounds apart) it only
times, and writes OUTDIR/peers.ROUND.json.
Each function computes exactly what the workload's .hlo computes. The set-up of the
environment (OMP_WAIT_POLICY=passive, OMP_NUM_THREADS=2, ...) is done by run.sh.
"""
import json
import os
import sys
import time

import numpy as np
import torch

torch.set_num_threads(2)
torch.set_num_interop_threads(1)

def np_gelu(x):
    return x * (1 / (1 + np.exp(-1.702 * x))) + 0.5 * x

def np_chain10(x):
    a1 = x * np.float32(0.5); a2 = a1 + x; a3 = np.tanh(a2); a4 = a3 * a3
    a5 = a4 - np.float32(0.5); a6 = np.exp(a5); a7 = a6 * a3; a8 = np.abs(a7)
    a9 = np.sqrt(a8)
    return a9 - a1

def t_chain10(x):
    a1 = x * 0.5; a2 = a1 + x; a3 = torch.tanh(a2); a4 = a3 * a3
    a5 = a4 - 0.5; a6 = torch.exp(a5); a7 = a6 * a3; a8 = torch.abs(a7)
    a9 = torch.sqrt(a8)
    return a9 - a1

def np_softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

def np_conv(x, w):  # NHWC x, HWIO w, 3x3, stride 1, pad 1: im2col + one matmul
    n, h, wd, c = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    s = xp.strides
    cols = np.lib.stride_tricks.as_strided(xp, (n, h, wd, 3, 3, c), (s[0], s[1], s[2], s[1], s[2], s[3]))
    return (cols.reshape(n * h * wd, 9 * c) @ w.reshape(9 * c, -1)).reshape(n, h, wd, -1)

def t_conv(x, w):  # x: NCHW view of NHWC memory (channels_last), w: OIHW channels_last
    return torch.nn.functional.conv2d(x, w, padding=1)

def np_mlp(x, w1, b1, w2, b2, w3, b3):
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    return np_softmax(h2 @ w3 + b3)

def t_mlp(x, w1, b1, w2, b2, w3, b3):
    h1 = torch.relu(x @ w1 + b1)
    h2 = torch.relu(h1 @ w2 + b2)
    return torch.softmax(h2 @ w3 + b3, dim=-1)

M = (256, 784, 512, 10)
# name: (input shapes, numpy function, torch function)
WORKLOADS = {
    "gemm_f32_256": ([(256, 256)] * 2, np.matmul, torch.matmul),
    "gemm_f32_1024": ([(1024, 1024)] * 2, np.matmul, torch.matmul),
    "gemm_f32_2048": ([(2048, 2048)] * 2, np.matmul, torch.matmul),
    "stream_negate_16m": ([(4096, 4096)], np.negative, torch.neg),
    "gelu_approx_16m": ([(4096, 4096)], np_gelu, lambda x: x * torch.sigmoid(1.702 * x) + 0.5 * x),
    "chain10_16m": ([(4096, 4096)], np_chain10, t_chain10),
    "rowsum_4096": ([(4096, 4096)], lambda a: a.sum(axis=1), lambda a: a.sum(dim=1)),
    "softmax_4096x1024": ([(4096, 1024)], np_softmax, lambda a: torch.softmax(a, dim=-1)),
    "conv_resnet_b32": ([(32, 56, 56, 64), (3, 3, 64, 64)], np_conv, t_conv),
    "mlp_b256": ([(256, 784), (784, 512), (512,), (512, 512), (512,), (512, 10), (10,)], np_mlp, t_mlp),
    "scalar_add": ([(), ()], np.add, torch.add),
}

def median_ms(f, args, warmup, repeat):
    for _ in range(warmup):
        f(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3

class Model(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f
    def forward(self, *args):
        return self.f(*args)

def main():
    out = sys.argv[1]
    rnd = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = np.random.default_rng(1)
    results, manifest = {}, {}
    for name, (shapes, npf, tf) in WORKLOADS.items():
        warmup, repeat = (200, 2000) if name == "scalar_add" else (2, 7)
        xs = [np.asarray(rng.uniform(-1, 1, s), dtype=np.float32) for s in shapes]
        ts = [torch.from_numpy(x) for x in xs]
        export_ts = ts
        if name == "conv_resnet_b32":  # torch and ONNX want OIHW weights and NCHW logical shapes
            w = ts[1].permute(3, 2, 0, 1)
            ts = [ts[0].permute(0, 3, 1, 2), w.contiguous(memory_format=torch.channels_last)]
            assert ts[0].is_contiguous(memory_format=torch.channels_last)
            export_ts = [t.contiguous() for t in ts]  # ONNX Conv is NCHW
        with torch.no_grad():
            want = npf(*xs)
            got = tf(*ts)
            if name == "conv_resnet_b32":
                got = got.permute(0, 2, 3, 1)  # back to NHWC
            err = np.abs(got.numpy() - want).max()
            assert err <= 1e-3 * (np.abs(want).max() + 1), f"{name}: numpy and torch differ by {err}"
            results[name] = {"numpy": median_ms(npf, xs, warmup, repeat),
                             "torch": median_ms(tf, ts, warmup, repeat)}
            print(name, results[name], file=sys.stderr, flush=True)
            if rnd > 1:
                continue
            files = []
            for i, t in enumerate(export_ts):
                files.append(f"{name}.in{i}.bin")
                t.numpy().astype("<f4").tofile(os.path.join(out, files[-1]))
            torch.onnx.export(Model(tf), tuple(export_ts), os.path.join(out, name + ".onnx"), opset_version=13,
                              input_names=[f"in{i}" for i in range(len(ts))], output_names=["out"])
        manifest[name] = {"inputs": files, "shapes": [list(t.shape) for t in export_ts],
                          "sum": float(want.astype(np.float64).sum()),
                          "abssum": float(np.abs(want.astype(np.float64)).sum()), "warmup": warmup, "repeat": repeat}
    with open(os.path.join(out, "peers.json" if rnd == 1 else f"peers.{rnd}.json"), "w") as f:
        json.dump(results, f)
    if rnd > 1:
        return
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f)

if __name__ == "__main__":
    main()
