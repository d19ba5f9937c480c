"""The inputs of an ONNX test folder's test_data_set_0 as ONNX Runtime's node scripts here read them."""
import json
import os

import numpy as np
import onnx
from onnx import numpy_helper


def write_inputs(test_dir, work):
    """Writes each graph input of test_dir/test_data_set_0 (initializers excepted) to work as raw
    little-endian bytes, and returns the list the scripts take: {name, type, dims, file} each."""
    m = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    spec = []
    for k, gi in enumerate(i for i in m.graph.input if i.name not in inits):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(test_dir, "test_data_set_0", f"input_{k}.pb"), "rb").read())
        arr = np.ascontiguousarray(numpy_helper.to_array(t))
        f = os.path.join(work, f"input_{k}.bin")
        arr.tofile(f)
        spec.append({"name": gi.name, "type": "bool" if arr.dtype == np.bool_ else str(arr.dtype),
                     "dims": list(arr.shape), "file": f})
    return spec


def write_spec(test_dir, work, name="inputs.json"):
    """write_inputs, the list saved as JSON in work; returns its path."""
    path = os.path.join(work, name)
    json.dump(write_inputs(test_dir, work), open(path, "w"))
    return path
