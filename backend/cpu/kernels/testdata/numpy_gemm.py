"""Peer figures for BENCHMARKS.md: OpenBLAS (through numpy) f32 GEMM.

Run with Debian's python (`/usr/bin/python3 numpy_gemm.py`), two threads,
in the same session as `go test -bench 'FMAPeak|GemmF32'` so the ratios
compare like with like on this shared VM.
"""
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
import numpy as np  # noqa: E402

for n in (256, 1024, 2048):
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    c = a @ b  # warm up
    reps = max(3, int(2e10 / (2 * n**3)))
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            np.matmul(a, b, out=c)
        times.append((time.perf_counter() - t) / reps)
    best = min(times)
    print(f"numpy/OpenBLAS f32 {n}^3: {2 * n**3 / best / 1e9:.1f} GFLOP/s (best of 5)")
