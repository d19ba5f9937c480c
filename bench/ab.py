#!/usr/bin/env python3
"""A/B timing of two axle builds on the same workloads, alternated.

usage: bench/ab.py AXLE_A AXLE_B [--rounds R] [FILE ...]

Each round runs every workload once with A and once with B (in turn, so
both see the same machine minutes): `axle run --backend cpu --warmup 2
--repeat 10 --json FILE [--inputs ...]`. Printed: per workload, the median
over rounds of each build's median run time and compile time, and B/A.
With no FILE: ../shared/bench/*.hlo and the repository's examples.
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def workloads(files):
    if files:
        return [(f, []) for f in files]
    out = []
    bench = os.path.join(SHARED, "bench")
    for f in sorted(os.listdir(bench)):
        if f.endswith(".hlo"):
            out.append((os.path.join(bench, f), []))
    ex = os.path.join(ROOT, "examples")
    out.append((os.path.join(ex, "jax", "mlp.mlir"), ["--inputs", os.path.join(ex, "jax", "in.npz")]))
    out.append((os.path.join(ex, "jax", "poly", "poly.mlir"), ["--inputs", os.path.join(ex, "jax", "poly", "in5.npz")]))
    out.append((os.path.join(ex, "onnx", "scores_nonzero", "model.onnx"), ["--inputs", os.path.join(ex, "onnx", "scores_nonzero_in.npz")]))
    return [(f, a) for f, a in out if os.path.exists(f) and all(os.path.exists(x) for x in a if x.endswith(".npz"))]


def run(axle, f, extra):
    cmd = [axle, "run", "--backend", "cpu", "--warmup", "2", "--repeat", "10", "--json"] + extra + [f]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            j = json.loads(line)
            return j["run_ms"]["median"], j["compile_ms"]
    raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()[-300:]}")


def main():
    args = sys.argv[1:]
    rounds = 3
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    a, b, files = args[0], args[1], args[2:]
    res = {}
    for _ in range(rounds):
        for f, extra in workloads(files):
            r = res.setdefault(f, {"a": [], "b": [], "ca": [], "cb": []})
            ra, ca = run(a, f, extra)
            rb, cb = run(b, f, extra)
            r["a"].append(ra), r["b"].append(rb), r["ca"].append(ca), r["cb"].append(cb)
    print("| workload | A run ms | B run ms | B/A | A compile ms | B compile ms | B/A |")
    print("|---|---|---|---|---|---|---|")
    for f, r in res.items():
        ma, mb = statistics.median(r["a"]), statistics.median(r["b"])
        ca, cb = statistics.median(r["ca"]), statistics.median(r["cb"])
        name = os.path.relpath(f, ROOT) if f.startswith(ROOT) else os.path.basename(f)
        print(f"| {name} | {ma:.4g} | {mb:.4g} | {mb / ma:.2f} | {ca:.4g} | {cb:.4g} | {cb / ca:.2f} |")


if __name__ == "__main__":
    main()
