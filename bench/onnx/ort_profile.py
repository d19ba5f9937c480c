#!/usr/bin/python3
"""ONNX Runtime's own time per node and per op type on one ONNX test folder: where its time goes, to set
beside `axle run --profile` of the same model in the same minutes.

usage: ort_profile.py --ort-module PATH [--threads 2] [--reps 100] [--nodes N] DIR

Feeds the inputs of DIR/test_data_set_0 to ort_profile.js (a session as ort_latency.py makes it, with
ONNX Runtime's profiler on), drops the first fifth of the runs as warm-up, and prints the median run,
each op type's summed per-node medians (ONNX Runtime's fused kernels keep their own names: MatMul with
its bias is Gemm or FusedMatMul, Conv with its activation one Conv), their total, and with --nodes the
N slowest nodes in graph order with their output shapes.
"""
import argparse, collections, glob, json, os, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_inputs import write_spec  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--ort-module", required=True)
ap.add_argument("--threads", default="2")
ap.add_argument("--reps", default="100")
ap.add_argument("--nodes", type=int, default=0)
ap.add_argument("dir")
a = ap.parse_args()
work = tempfile.mkdtemp()
spec = write_spec(a.dir, work)
subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_profile.js"),
                os.path.join(a.dir, "model.onnx"), a.threads, a.reps, spec,
                os.path.join(work, "profile")], check=True, env=dict(os.environ, ORT_NODE_MODULE=a.ort_module))
events = json.load(open(glob.glob(os.path.join(work, "profile_*.json"))[0]))
runs = [e["dur"] for e in events if e.get("cat") == "Session" and e["name"] == "model_run"]
times, info = collections.OrderedDict(), {}
for e in events:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
        name = e["name"][: -len("_kernel_time")]
        times.setdefault(name, []).append(e["dur"])
        info[name] = (e["args"].get("op_name", "?"), e["args"].get("output_type_shape", []))
med = {n: statistics.median(v[len(v) // 5:]) for n, v in times.items()}
print(f"{os.path.basename(a.dir)} threads={a.threads} runs={len(runs)} median_run_ms={statistics.median(runs[len(runs) // 5:]) / 1000:.3f}")
by_op = collections.defaultdict(float)
for n, t in med.items():
    by_op[info[n][0]] += t
for op, t in sorted(by_op.items(), key=lambda x: -x[1]):
    print(f"  {op:28s} {t / 1000:8.3f} ms")
print(f"  {'(nodes in all)':28s} {sum(by_op.values()) / 1000:8.3f} ms")
if a.nodes:
    slow = set(sorted(med, key=lambda n: -med[n])[: a.nodes])
    for n in med:
        if n in slow:
            shapes = ",".join("x".join(map(str, next(iter(s.values())))) for s in info[n][1])
            print(f"  {med[n]:9.1f} µs  {info[n][0]:16s} {n}  [{shapes}]")
