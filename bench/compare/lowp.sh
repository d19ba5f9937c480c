#!/usr/bin/env bash
# bf16 and int8 against f32 in one session: Axle's four GEMM workloads of ../shared/bench,
# numpy's f32 matmul (OpenBLAS), PyTorch's bf16 matmul (oneDNN), ONNX Runtime's MatMulInteger on the int8 shapes.
# Usage: bench/compare/lowp.sh [BENCH_DIR]   (ROUNDS=5 by default; as root it installs missing
# peers). Prints a markdown table for BENCHMARKS.md: median time per call, the rate, and each
# low-precision workload's speed against the f32 GEMM of the same rounds and against its peer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bench=$(cd "${1:-$root/../shared/bench}" && pwd)
py=/usr/bin/python3
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2 GOMAXPROCS=2
$py -c 'import numpy, torch, onnx' 2>/dev/null || apt-get install -y python3-numpy python3-torch python3-onnx >&2
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || apt-get install -y libopenblas0-pthread >&2
# As in run.sh: OpenBLAS 0.3.21 does not know the newest Xeons and would run its SSE3 kernels.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo &&
	OPENBLAS_VERBOSE=2 $py -c 'import numpy' 2>&1 | grep -q 'Core: Prescott'; then
	export OPENBLAS_CORETYPE=SkylakeX
fi
[ -d "$here/node_modules/onnxruntime-node" ] ||
	npm install --prefix "$here" --ignore-scripts --no-save --no-audit --no-fund onnxruntime-node@1.30.0 >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/axle" ./cmd/axle)
names="gemm_f32_2048 gemm_bf16_2048 gemm_s8_2048 gemm_u8s8_1024x4096"
rounds=${ROUNDS:-5}
uptime >"$tmp/load.before"
for r in $(seq 1 "$rounds"); do
	for n in $names; do
		echo "axle $n (round $r)" >&2
		"$tmp/axle" run --backend cpu --threads 2 --warmup 2 --repeat 7 --json "$bench/$n.hlo" | tail -n 1 >"$tmp/axle.$n.$r.json"
	done
	$py "$here/lowp.py" "$tmp" "$r"
	node "$here/ort.js" "$tmp" >"$tmp/ort.$r.json"
done
uptime >"$tmp/load.after"
export ORT_VERSION=$(node -p "require('$here/node_modules/onnxruntime-node/package.json').version")
ROUNDS="$rounds" NAMES="$names" $py - "$tmp" <<'EOF'
import json, os, statistics, subprocess, sys
import torch
d, rounds, names = sys.argv[1], int(os.environ["ROUNDS"]), os.environ["NAMES"].split()
def med(files, key):
    # None where every round's peer failed (ort.js: an error, or a result
    # that is not numpy's: ONNX Runtime's u8×s8 on AVX2 without VNNI).
    vals = [v for v in (json.load(open(f)).get(key) for f in files) if v is not None]
    return statistics.median(vals) if vals else None
axle = {n: statistics.median(json.load(open(f"{d}/axle.{n}.{r}.json"))["run_ms"]["median"] for r in range(1, rounds + 1)) for n in names}
tfiles = [f"{d}/torch.json"] + [f"{d}/torch.{r}.json" for r in range(2, rounds + 1)]
torch_ms = {n: med(tfiles, n) for n in ("gemm_f32_2048", "gemm_bf16_2048")}
ort_ms = {n: med([f"{d}/ort.{r}.json" for r in range(1, rounds + 1)], n) for n in ("gemm_s8_2048", "gemm_u8s8_1024x4096")}
ops = {"gemm_f32_2048": 2 * 2048**3, "gemm_bf16_2048": 2 * 2048**3, "gemm_s8_2048": 2 * 2048**3, "gemm_u8s8_1024x4096": 2 * 1024 * 4096 * 1024}
peer = {"gemm_f32_2048": ("numpy (OpenBLAS)", torch_ms), "gemm_bf16_2048": ("PyTorch (oneDNN)", torch_ms),
        "gemm_s8_2048": ("ONNX Runtime MatMulInteger", ort_ms), "gemm_u8s8_1024x4096": ("ONNX Runtime MatMulInteger", ort_ms)}
f32rate = ops["gemm_f32_2048"] / axle["gemm_f32_2048"]
lscpu = dict(l.split(":", 1) for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines() if ":" in l)
print(f"Date: {subprocess.run(['date', '-u', '+%Y-%m-%d %H:%M UTC'], capture_output=True, text=True).stdout.strip()}. "
      f"Machine: {lscpu['Model name'].strip()} (family {lscpu['CPU family'].strip()} model {lscpu['Model'].strip()}), {lscpu['CPU(s)'].strip()} CPUs. "
      f"PyTorch {torch.__version__}, onnxruntime-node {os.environ.get('ORT_VERSION')}; 2 threads each; median of {rounds} rounds' medians.")
print(f"Load before: {open(f'{d}/load.before').read().strip()}; after: {open(f'{d}/load.after').read().strip()}")
print()
print("| workload | Axle | rate (G op/s) | × Axle's f32 GEMM rate | peer | peer's time | Axle's speed / peer's |")
print("|---|---|---|---|---|---|---|")
for n in names:
    p, t = peer[n]
    pt = t.get(n)
    print(f"| {n} | {axle[n]:.1f} ms | {ops[n] / axle[n] / 1e6:.0f} | {ops[n] / axle[n] / f32rate:.2f} | {p} | "
          f"{'—' if pt is None else f'{pt:.1f} ms'} | {'—' if pt is None else f'{pt / axle[n]:.2f}'} |")
EOF
