#!/usr/bin/python3
"""Writes the inputs of an ONNX test folder's test_data_set_N as an .npz archive keyed by graph
input name, for `axle run --inputs`.

usage: pb2npz.py TEST_DIR OUT.npz [SET]   (SET defaults to 0)
Needs Debian's python3-numpy and python3-onnx.
"""
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper

d, out = sys.argv[1], sys.argv[2]
ds = sys.argv[3] if len(sys.argv) > 3 else "0"
m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
inits = {i.name for i in m.graph.initializer}
ins = [i for i in m.graph.input if i.name not in inits]
arrays = {}
for k, gi in enumerate(ins):
    p = os.path.join(d, f"test_data_set_{ds}", f"input_{k}.pb")
    if not os.path.exists(p):
        break
    t = onnx.TensorProto()
    t.ParseFromString(open(p, "rb").read())
    arrays[gi.name] = numpy_helper.to_array(t)
np.savez(out, **arrays)
