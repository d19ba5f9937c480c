#!/usr/bin/env bash
# Times Axle and ONNX Runtime on the ONNX model corpus in the same minutes:
# for each model, ONNX Runtime (../shared/bench/onnx/ort_latency.py, npm
# onnxruntime-node@1.30.0), then `axle run --backend cpu --threads T --warmup 5
# --repeat 20 --inputs in.npz model.onnx`, for T in 1 and 2; prints one line per
# model and thread count with both medians and Axle's ratio.
#
# usage: [ROUNDS=N] bench/onnx/run.sh [ORT_MODULE] [MODELS_DIR]
# With ROUNDS above 1 each model's pair of measurements (ONNX Runtime, then
# Axle) repeats N times in turn, a line each, and a last line per model and
# thread count gives the median of the rounds' ratios: on a shared host one
# process's median can sit 10-40% off its neighbours', for either engine.
# Needs python3-numpy, python3-onnx, node and onnxruntime-node (see ../shared/bench/onnx/README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ort=${1:-/tmp/ort/node_modules/onnxruntime-node}
models=${2:-$root/../shared/corpus/onnx-models}
work=$(mktemp -d)
go build -o "$work/axle" "$root/cmd/axle"
rounds=${ROUNDS:-1}
for d in $(find "$models" -name model.onnx -printf '%h\n' | sort); do
	name=$(basename "$d")
	/usr/bin/python3 "$here/pb2npz.py" "$d" "$work/$name.npz"
	: >"$work/ratios"
	for r in $(seq "$rounds"); do
		ortout=$(/usr/bin/python3 "$root/../shared/bench/onnx/ort_latency.py" --ort-module "$ort" --threads 1,2 "$d")
		for t in 1 2; do
			o=$(echo "$ortout" | awk -v t="threads=$t" '$3==t {sub("median_ms=","",$4); print $4}')
			a=$("$work/axle" run --backend cpu --threads $t --warmup 5 --repeat 20 --json --inputs "$work/$name.npz" "$d/model.onnx" |
				tail -1 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["run_ms"]["median"])')
			/usr/bin/python3 -c "import sys; o,a=float('$o'),float('$a'); print(f'$name threads=$t ort_ms={o:.3f} axle_ms={a:.3f} ratio={a/o:.2f}')" | tee -a "$work/ratios"
		done
	done
	if [ "$rounds" -gt 1 ]; then
		/usr/bin/python3 - "$work/ratios" <<'EOF'
import statistics, sys
rows = [dict(f.split("=") for f in l.split()[1:]) | {"name": l.split()[0]} for l in open(sys.argv[1]) if l.strip()]
for t in ("1", "2"):
    rs = [float(r["ratio"]) for r in rows if r["threads"] == t]
    print(f"{rows[0]['name']} threads={t} rounds={len(rs)} median_ratio={statistics.median(rs):.2f} range={min(rs):.2f}-{max(rs):.2f}")
EOF
	fi
done
