#!/usr/bin/python3
"""Writes a convolution layer Y = conv(X, W) + bias twice as ONNX: in f32 (f32.onnx) and as ONNX
Runtime's dynamic quantization (onnxruntime.quantization.quantize_dynamic, s8 weights) writes a
Conv (quant.onnx):

    DynamicQuantizeLinear(X) -> Xq u8, x_scale, x_zp
    ConvInteger(Xq, Wq s8, x_zp) -> s32            (W symmetric: no w_zp)
    Cast(to f32), Mul(x_scale * w_scale), Add bias (one per output channel)

X is NCHW, W OIHW, 3x3 (or --kernel K), stride 1, padding K//2 on every side. Weights and bias
are seeded random; X is the graph input (axle run draws it). Also writes in.npz, a seeded X.

usage: make_qconv.py [--n N --c C --o O --hw HW --kernel K] [--seed S] OUTDIR
The worked example in the repository is `make_qconv.py --n 1 --c 8 --o 16 --hw 12
examples/onnx/qconv`; bench/quant/run.sh writes a ResNet layer (8x64x56x56, 64 -> 64) into a temp
dir. Needs python3-onnx and python3-numpy.
"""
import argparse, os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ap = argparse.ArgumentParser()
for name, default in [("n", 1), ("c", 8), ("o", 16), ("hw", 12), ("kernel", 3), ("seed", 11)]:
    ap.add_argument("--" + name, type=int, default=default)
ap.add_argument("out")
a = ap.parse_args()
rng = np.random.default_rng(a.seed)
os.makedirs(a.out, exist_ok=True)
k, pad = a.kernel, a.kernel // 2
w = rng.uniform(-0.5, 0.5, (a.o, a.c, k, k)).astype(np.float32)
bias = rng.uniform(-1, 1, (a.o,)).astype(np.float32)
w_scale = np.float32(np.abs(w).max() / 127)
wq = np.clip(np.round(w / w_scale), -127, 127).astype(np.int8)
x_info = helper.make_tensor_value_info("X", TensorProto.FLOAT, (a.n, a.c, a.hw, a.hw))
y_info = helper.make_tensor_value_info("Y", TensorProto.FLOAT, (a.n, a.o, a.hw, a.hw))
conv_attrs = dict(kernel_shape=[k, k], pads=[pad] * 4, strides=[1, 1])

f32 = helper.make_graph(
    [helper.make_node("Conv", ["X", "W", "B"], ["Y"], **conv_attrs)], "conv_f32", [x_info], [y_info],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(bias, "B")])
onnx.save(helper.make_model(f32, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(a.out, "f32.onnx"))

nodes = [
    helper.make_node("DynamicQuantizeLinear", ["X"], ["Xq", "x_scale", "x_zp"]),
    helper.make_node("ConvInteger", ["Xq", "Wq", "x_zp"], ["acc"], **conv_attrs),
    helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["x_scale", "w_scale"], ["scale"]),
    helper.make_node("Mul", ["accf", "scale"], ["deq"]),
    helper.make_node("Add", ["deq", "Bc"], ["Y"]),
]
quant = helper.make_graph(nodes, "conv_quant", [x_info], [y_info], [
    numpy_helper.from_array(wq, "Wq"), numpy_helper.from_array(np.array(w_scale, dtype=np.float32), "w_scale"),
    numpy_helper.from_array(bias.reshape(a.o, 1, 1), "Bc")])
onnx.save(helper.make_model(quant, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(a.out, "quant.onnx"))
np.savez(os.path.join(a.out, "in.npz"), X=rng.uniform(-1, 1, (a.n, a.c, a.hw, a.hw)).astype(np.float32))
