#!/usr/bin/python3
"""Builds examples/onnx/scores_nonzero: a small classifier whose post-processing (NonZero: the
output's shape depends on the data) the compiler refuses, so that soft placement runs it op by op
between two compiled clusters. Writes the model, seeded inputs (test_data_set_0/input_0.pb and
in.npz) and ONNX Runtime's outputs (test_data_set_0/output_K.pb) as the reference.

usage: make_example.py ORT_MODULE   (npm onnxruntime-node@1.30.0; needs python3-numpy, python3-onnx, node)
"""
import json, os, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "scores_nonzero")
os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
rng = np.random.RandomState(7)
w1 = rng.randn(8, 16).astype(np.float32) * 0.5
b1 = rng.randn(16).astype(np.float32) * 0.1
w2 = rng.randn(16, 4).astype(np.float32) * 0.5
nodes = [
    helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="dense1"),
    helper.make_node("Relu", ["h"], ["hr"], name="relu"),
    helper.make_node("MatMul", ["hr", "w2"], ["logits"], name="dense2"),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    helper.make_node("Greater", ["probs", "threshold"], ["hit"], name="above"),
    helper.make_node("NonZero", ["hit"], ["where"], name="nonzero"),
    helper.make_node("Transpose", ["where"], ["hits"], name="pairs", perm=[1, 0]),
]
graph = helper.make_graph(
    nodes, "scores_nonzero",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 4]),
     helper.make_tensor_value_info("hits", TensorProto.INT64, [None, 2])],
    [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2"),
     numpy_helper.from_array(np.array(0.3, np.float32), "threshold")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="axle examples")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
x = rng.randn(6, 8).astype(np.float32)
open(os.path.join(out, "test_data_set_0", "input_0.pb"), "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
np.savez(os.path.join(here, "scores_nonzero_in.npz"), x=x)

work = tempfile.mkdtemp()
x.tofile(os.path.join(work, "x.bin"))
jobs = [{"name": "scores_nonzero", "model": os.path.join(out, "model.onnx"),
         "sets": [{"inputs": [{"name": "x", "type": "float32", "dims": list(x.shape), "file": os.path.join(work, "x.bin")}], "outdir": work}]}]
json.dump(jobs, open(os.path.join(work, "jobs.json"), "w"))
js = os.path.join(here, "..", "..", "..", "shared", "bench", "onnx", "ort_run.js")
subprocess.run(["node", js, "run", os.path.join(work, "jobs.json")], check=True, env=dict(os.environ, ORT_NODE_MODULE=sys.argv[1]))
dt = {"float32": np.float32, "int64": np.int64}
for k, spec in enumerate(json.load(open(os.path.join(work, "outputs.json")))):
    arr = np.fromfile(spec["file"], dt[spec["type"]]).reshape(spec["dims"])
    open(os.path.join(out, "test_data_set_0", f"output_{k}.pb"), "wb").write(numpy_helper.from_array(arr, spec["name"]).SerializeToString())
    print(spec["name"], arr.shape)
