#!/usr/bin/python3
"""Axle's convolutions beside ONNX Runtime's, layer kind by layer kind, on one ONNX model.

usage: conv_layers.py [--ort-module PATH] [--threads T] [--rounds N] TEST_DIR

Alternates, N rounds: ONNX Runtime (onnxruntime-node with enableProfiling: the median of each node's
kernel time over calls 10..44), then `axle run --backend cpu --threads T --profile` (each kernel's
median over 40 calls). Convolutions are matched by their signature (output channels, input channels,
kernel height and width, output height), each side's layers of a signature summed, max pools as one
kind; it prints the rounds' totals and, per signature, both medians over the rounds, their difference
and the median of the rounds' ratios, the largest differences first. A whole run's median moves with
the host (10-40% on a shared VM); a layer's median over 35-40 calls in alternated rounds moves less.

Needs Debian's python3-numpy and python3-onnx, node, and onnxruntime-node from npm (see README.md),
and builds Axle from this checkout.
"""
import argparse, collections, glob, json, os, re, statistics as st, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_inputs import write_spec  # noqa: E402

JS = r"""
const ort = require(process.env.ORT_NODE_MODULE);
const fs = require('fs');
const T = {float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array, uint8: Uint8Array, int8: Int8Array};
(async () => {
  const [model, specFile, threads, prefix] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, {logSeverityLevel: 3, intraOpNumThreads: +threads,
    interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all', enableProfiling: true,
    profileFilePrefix: prefix});
  const feeds = {};
  for (const sp of JSON.parse(fs.readFileSync(specFile))) {
    const buf = fs.readFileSync(sp.file);
    feeds[sp.name] = new ort.Tensor(sp.type, new T[sp.type](buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length)), sp.dims);
  }
  for (let i = 0; i < 45; i++) await s.run(feeds);
  await s.endProfiling();
})();
"""

ap = argparse.ArgumentParser()
ap.add_argument("--ort-module", default="/tmp/ort/node_modules/onnxruntime-node")
ap.add_argument("--threads", default="1")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("dir")
a = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
work = tempfile.mkdtemp()
model = os.path.join(a.dir, "model.onnx")
axle = os.path.join(work, "axle")
subprocess.run(["go", "build", "-o", axle, "./cmd/axle"], cwd=root, check=True)

# Inputs: an .npz for Axle, raw files and a spec for the JS side.
write_spec(a.dir, work, "spec.json")
open(os.path.join(work, "prof.js"), "w").write(JS)
npz = os.path.join(work, "in.npz")
subprocess.run([os.path.join(here, "pb2npz.py"), a.dir, npz], check=True)

# Axle's kernels' signatures, from its optimized module.
dump = os.path.join(work, "dump")
subprocess.run([axle, "run", "--backend", "cpu", "--repeat", "1", "--dump-to", dump, "--inputs", npz, model],
               check=True, capture_output=True)
opt = subprocess.run([axle, "opt", "--backend", "cpu"] + glob.glob(os.path.join(dump, "*.hlo")),
                     check=True, capture_output=True, text=True).stdout
CONV = re.compile(r"=\s*f32\[\d+,(\d+),\d+,\d+\]\S*\s+convolution\(\S+\s+%[\w.\-]+,\s*f32\[(\d+),(\d+),(\d+),(\d+)\]")
comps, cur = {}, None
for line in opt.splitlines():
    h = re.match(r"\s*(?:ENTRY\s+)?%?([\w.\-]+)\s*(\(.*\))?.*\{\s*$", line)
    if h and "=" not in line.split("{")[0]:
        cur = h.group(1)
        continue
    c = CONV.search(line)
    if c and cur:
        hgt, o, i, kh, kw = map(int, c.groups())
        comps.setdefault(cur, (o, i, kh, kw, hgt))
        d = re.match(r"\s*%([\w.\-]+) = ", line)
        if d:
            comps.setdefault(d.group(1), (o, i, kh, kw, hgt))
sig = {}
for line in opt.splitlines():
    f = re.search(r"%([\w.\-]+) = .*fusion\(.*calls=%([\w.\-]+)", line)
    if f and f.group(2) in comps:
        sig[f.group(1)] = comps[f.group(2)]
    d = re.match(r"\s*%([\w.\-]+) = \S+ (convolution|reduce-window)\(", line)
    if d:
        sig[d.group(1)] = comps.get(d.group(1), ("maxpool",))


def axle_layers():
    out = subprocess.run([axle, "run", "--backend", "cpu", "--threads", a.threads, "--warmup", "5", "--repeat", "40",
                          "--profile", "--profile-rows", "0", "--inputs", npz, model], capture_output=True, text=True).stdout
    d = collections.defaultdict(float)
    for line in out.splitlines():
        p = line.split()
        u = re.match(r"([\d.]+)(ms|µs|ns|s)$", p[-1]) if len(p) >= 6 and p[3].isdigit() else None
        if u and p[0] in sig:
            d[sig[p[0]]] += float(u.group(1)) * {"ms": 1e3, "µs": 1, "ns": 1e-3, "s": 1e6}[u.group(2)]
    return d


def ort_layers():
    prefix = os.path.join(work, "ort")
    for f in glob.glob(prefix + "*.json"):
        os.remove(f)
    subprocess.run(["node", os.path.join(work, "prof.js"), model, os.path.join(work, "spec.json"), a.threads, prefix],
                   check=True, env=dict(os.environ, ORT_NODE_MODULE=a.ort_module))
    times, kind = collections.defaultdict(list), {}
    for e in json.load(open(glob.glob(prefix + "*.json")[0])):
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        g = e["args"]
        if g.get("op_name") == "Conv":
            w, o = g["input_type_shape"][1]["float"], g["output_type_shape"][0]["float"]
            kind[e["name"]] = (w[0], w[1], w[2], w[3], o[2])
        elif g.get("op_name") == "MaxPool":
            kind[e["name"]] = ("maxpool",)
        else:
            continue
        times[e["name"]].append(e["dur"])
    d = collections.defaultdict(float)
    for n, v in times.items():
        d[kind[n]] += st.median(v[10:])
    return d


pairs, totals = collections.defaultdict(list), []
for _ in range(a.rounds):
    o, x = ort_layers(), axle_layers()
    for k in set(o) & set(x):
        pairs[k].append((x[k], o[k]))
    totals.append((sum(x.values()), sum(o.values())))
print(f"threads={a.threads}: rounds' totals over the matched layers, Axle/ONNX Runtime µs:",
      ", ".join(f"{x:.0f}/{o:.0f}" for x, o in totals))
rows = sorted(((st.median(x for x, _ in v) - st.median(o for _, o in v), k, v) for k, v in pairs.items()), reverse=True)
print("| layers (out, in, kh, kw, out height) | Axle µs | ONNX Runtime µs | difference | ratio |")
print("|---|---|---|---|---|")
for diff, k, v in rows:
    print(f"| {k} | {st.median(x for x, _ in v):.0f} | {st.median(o for _, o in v):.0f} | {diff:+.0f} | "
          f"{st.median(x / o for x, o in v):.2f} |")
