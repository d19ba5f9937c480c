# Writes in.npz (the arguments of mlp.mlir, in parameter order) and expected.npz
# (its result, computed here with numpy in float64 and rounded to float32), the
# worked example of README's "From JAX" section. Run with /usr/bin/python3.
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(37)
w1 = rng.normal(0, 0.25, (16, 32)).astype(np.float32)
b1 = rng.normal(0, 0.1, (32,)).astype(np.float32)
w2 = rng.normal(0, 0.25, (32, 10)).astype(np.float32)
b2 = rng.normal(0, 0.1, (10,)).astype(np.float32)
x = rng.normal(0, 1, (8, 16)).astype(np.float32)
np.savez(os.path.join(here, "in.npz"), w1, b1, w2, b2, x)

h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
logits = h @ w2 + b2
e = np.exp(logits - logits.max(axis=1, keepdims=True))
np.savez(os.path.join(here, "expected.npz"), output_0=(e / e.sum(axis=1, keepdims=True)).astype(np.float32))
