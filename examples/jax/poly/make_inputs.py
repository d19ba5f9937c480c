# Writes the inputs of poly.mlir and poly_dimargs.mlir (the same
# shape-polymorphic function, y = relu(x @ w + b) + r and its row sums, as
# jax.export writes it with the batch dimension symbolic) for two batch
# sizes, in2.npz and in5.npz (arr_0..arr_3 = w, b, x, r in argument
# order), and the results NumPy computes, expected2.npz and expected5.npz
# (output_0 = y, output_1 = y.sum(axis=1)). The values are multiples of
# 1/4 of small size, so float32 holds every result exactly. Run with
# /usr/bin/python3.
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(37)
w = (rng.integers(-8, 8, (4, 3)) / 4).astype(np.float32)
b = (rng.integers(-8, 8, (3,)) / 4).astype(np.float32)
for batch in (2, 5):
    x = (rng.integers(-8, 8, (batch, 4)) / 4).astype(np.float32)
    r = (rng.integers(-8, 8, (batch, 3)) / 4).astype(np.float32)
    np.savez(os.path.join(here, f"in{batch}.npz"), w, b, x, r)
    y = np.maximum(x.astype(np.float64) @ w + b, 0) + r
    np.savez(os.path.join(here, f"expected{batch}.npz"),
             output_0=y.astype(np.float32), output_1=y.sum(axis=1).astype(np.float32))
