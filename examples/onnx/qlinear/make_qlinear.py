#!/usr/bin/python3
"""Writes a dense layer Y = X·W + bias twice as ONNX: in f32 (f32.onnx) and as ONNX Runtime's
dynamic quantization (onnxruntime.quantization.quantize_dynamic, s8 weights) writes it
(quant.onnx):

    DynamicQuantizeLinear(X) -> Xq u8, x_scale, x_zp
    MatMulInteger(Xq, Wq s8, x_zp, w_zp) -> s32
    Cast(to f32), Mul(x_scale, w_scale), Mul, Add bias

W is quantized symmetrically (w_zp 0, quantize_dynamic's default for s8), per tensor or, with
--per-column, per output column (w_scale and w_zp of shape [N], as quantize_dynamic's
per_channel writes MatMul weights). Weights and bias are seeded random; X is the graph input
(axle run draws it). Also writes in.npz, a seeded X.

usage: make_qlinear.py [--m M --k K --n N] [--per-column] [--seed S] OUTDIR
The worked example in the repository is `make_qlinear.py --m 16 --k 64 --n 32 examples/onnx/qlinear`;
the benchmark shapes (1024x4096x1024: 16 MiB of f32 weights) are written into a temp dir by
bench/quant/run.sh instead of being kept in git. Needs python3-onnx and python3-numpy.
"""
import argparse, os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ap = argparse.ArgumentParser()
ap.add_argument("--m", type=int, default=16)
ap.add_argument("--k", type=int, default=64)
ap.add_argument("--n", type=int, default=32)
ap.add_argument("--per-column", action="store_true")
ap.add_argument("--seed", type=int, default=11)
ap.add_argument("out")
args = ap.parse_args()
m, k, n = args.m, args.k, args.n
os.makedirs(args.out, exist_ok=True)
rng = np.random.RandomState(args.seed)
w = (rng.randn(k, n) / np.sqrt(k)).astype(np.float32)
bias = (rng.randn(n) * 0.1).astype(np.float32)
x = rng.randn(m, k).astype(np.float32)


def save(nodes, inits, name):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="axle examples")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(args.out, name + ".onnx"))


save([helper.make_node("MatMul", ["X", "W"], ["XW"], name="matmul"),
      helper.make_node("Add", ["XW", "B"], ["Y"], name="bias")],
     [numpy_helper.from_array(w, "W"), numpy_helper.from_array(bias, "B")], "f32")

# quantize_dynamic's symmetric s8 weights: scale = max|w| / 127 (per tensor or per column),
# zero point 0, values rounded half to even and clipped to [-127, 127].
amax = np.abs(w).max(axis=0) if args.per_column else np.abs(w).max()
w_scale = (np.maximum(amax, 1e-8) / 127).astype(np.float32)
wq = np.clip(np.rint(w / w_scale), -127, 127).astype(np.int8)
w_zp = np.zeros(w_scale.shape, np.int8)
save([helper.make_node("DynamicQuantizeLinear", ["X"], ["X_quantized", "X_scale", "X_zero_point"], name="X_QuantizeLinear"),
      helper.make_node("MatMulInteger", ["X_quantized", "W_quantized", "X_zero_point", "W_zero_point"],
                       ["XW_output_quantized"], name="matmul_quant"),
      helper.make_node("Cast", ["XW_output_quantized"], ["XW_output_quantized_cast_output"], to=TensorProto.FLOAT,
                       name="matmul_quant_output_scale_cast"),
      helper.make_node("Mul", ["X_scale", "W_scale"], ["XW_scale"], name="matmul_quant_scales_mul"),
      helper.make_node("Mul", ["XW_output_quantized_cast_output", "XW_scale"], ["XW"], name="matmul_quant_output_scale_mul"),
      helper.make_node("Add", ["XW", "B"], ["Y"], name="bias")],
     [numpy_helper.from_array(wq, "W_quantized"), numpy_helper.from_array(w_scale, "W_scale"),
      numpy_helper.from_array(w_zp, "W_zero_point"), numpy_helper.from_array(bias, "B")], "quant")
np.savez(os.path.join(args.out, "in.npz"), X=x)
