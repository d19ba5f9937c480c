#!/usr/bin/python3
"""Writes lapack_numpy.json: inputs and NumPy's linear-algebra results for
eval's LAPACK custom-call tests (custom_call_lapack_test.go).

Run from eval/testdata with Debian's python3-numpy:
    /usr/bin/python3 make_lapack.py

Complex numbers are written as [re, im] pairs, matrices as lists of rows.
"""
import json

import numpy as np

rng = np.random.default_rng(37)


def enc(x):
    x = np.asarray(x)
    if np.iscomplexobj(x):
        return np.stack([x.real, x.imag], axis=-1).tolist()
    return x.tolist()


cases = {}

# Symmetric 4x4: eigenvalues ascending (syevd).
a = rng.standard_normal((4, 4))
sym = a + a.T
cases["syevd"] = {"a": enc(sym), "w": enc(np.linalg.eigvalsh(sym))}

# General 4x4 with a complex pair: eigenvalues sorted by (re, im) (geev, gees).
gen = np.array([[0.0, -2.0, 1.0, 0.5],
                [2.0, 0.0, 0.3, -1.0],
                [0.1, 0.2, 3.0, 1.0],
                [0.4, -0.5, 0.2, -1.5]])
w = np.linalg.eigvals(gen)
w = w[np.lexsort((w.imag, w.real))]
cases["geev"] = {"a": enc(gen), "w": enc(w)}

# Singular values, tall and wide (gesdd).
tall = rng.standard_normal((4, 3))
cases["gesdd_tall"] = {"a": enc(tall), "s": enc(np.linalg.svd(tall, compute_uv=False))}
wide = rng.standard_normal((3, 5))
cases["gesdd_wide"] = {"a": enc(wide), "s": enc(np.linalg.svd(wide, compute_uv=False))}

# Determinant through LU (getrf), real and complex.
g = rng.standard_normal((4, 4))
cases["det"] = {"a": enc(g), "det": float(np.linalg.det(g))}
gc = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
cases["det_c"] = {"a": enc(gc), "det": enc(np.linalg.det(gc))}

# Cholesky factors are unique (potrf), real and complex Hermitian.
spd = g @ g.T + 4 * np.eye(4)
cases["potrf"] = {"a": enc(spd), "l": enc(np.linalg.cholesky(spd))}
hpd = gc @ gc.conj().T + 3 * np.eye(3)
cases["potrf_c"] = {"a": enc(hpd), "l": enc(np.linalg.cholesky(hpd))}

# geqrf's own output: numpy's qr(mode="raw") returns LAPACK's h (transposed,
# Fortran order) and tau.
q4 = rng.standard_normal((4, 3))
h, tau = np.linalg.qr(q4, mode="raw")
cases["geqrf"] = {"a": enc(q4), "h": enc(h.T), "tau": enc(tau)}
hc, tauc = np.linalg.qr(gc, mode="raw")
cases["geqrf_c"] = {"a": enc(gc), "h": enc(hc.T), "tau": enc(tauc)}

# Triangular and tridiagonal solves (trsm, gtsv) by a dense solve.
lt = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3)
b = rng.standard_normal((3, 2))
cases["trsm"] = {"a": enc(lt), "b": enc(b), "x": enc(np.linalg.solve(lt, b))}
dl, d, du = rng.standard_normal(4), rng.standard_normal(4) + 4, rng.standard_normal(4)
dl[0], du[3] = 0, 0
t = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:3], 1)
rhs = rng.standard_normal((4, 2))
cases["gtsv"] = {"dl": enc(dl), "d": enc(d), "du": enc(du), "b": enc(rhs), "x": enc(np.linalg.solve(t, rhs))}

# Complex Hermitian eigenvalues (heevd) and complex singular values (gesdd).
hc = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
herm = hc + hc.conj().T
cases["heevd"] = {"a": enc(herm), "w": enc(np.linalg.eigvalsh(herm))}
for name, shape in (("gesdd_c_tall", (4, 3)), ("gesdd_c_wide", (3, 5))):
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    cases[name] = {"a": enc(x), "s": enc(np.linalg.svd(x, compute_uv=False))}

# A general complex matrix: eigenvalues sorted by (re, im) (complex geev, gees).
x = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
w = np.linalg.eigvals(x)
cases["geev_c"] = {"a": enc(x), "w": enc(w[np.lexsort((w.imag, w.real))])}

with open("lapack_numpy.json", "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
