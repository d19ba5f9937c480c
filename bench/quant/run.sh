#!/usr/bin/env bash
# Times the f32 dense layer against the same layer as ONNX Runtime's dynamic
# quantization writes it (examples/onnx/qlinear/make_qlinear.py), and a convolution likewise
# (examples/onnx/qconv/make_qconv.py), at the
# issue's shape (X 1024x4096, W 4096x1024) and a transformer's FFN shape
# (128x768 · 768x3072). The models (16 MiB of f32 weights) are written into
# a temp dir, not kept in git. Each round runs `axle run --backend cpu
# --threads 2 --warmup 5 --repeat 20 --json` (the ONNX models' timing, as
# bench/onnx/run.sh and issue 38 take it; two warm-ups timed an ONNX
# session's slower early calls) on f32 then on quant, alternating, so both
# see the same machine minutes; printed are the medians over rounds of each
# run's median and f32/quant (the quantized layer's speed-up), then the
# fastest run of each (two-thread runs of small products are bimodal on a
# shared host; the minimum shows what the code does when undisturbed).
#
# usage: bench/quant/run.sh [AXLE] [ROUNDS]   (AXLE: a built axle; default: build one)
# Needs python3-numpy and python3-onnx.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
axle=${1:-}
rounds=${2:-5}
if [ -z "$axle" ]; then
	axle="$work/axle"
	go build -o "$axle" "$root/cmd/axle"
fi
# Dense shapes M K N, then "conv N C O HW": a ResNet layer (3x3, 64 -> 64 channels, 56x56, batch 8)
# as dynamic quantization writes a Conv (examples/onnx/qconv/make_qconv.py: ConvInteger).
for shape in "1024 4096 1024" "128 768 3072" "conv 8 64 64 56"; do
	set -- $shape
	if [ "$1" = conv ]; then
		shift
		dir="$work/conv${1}x${2}x${4}x${4}to${3}"
		/usr/bin/python3 "$root/examples/onnx/qconv/make_qconv.py" --n "$1" --c "$2" --o "$3" --hw "$4" "$dir"
	else
		dir="$work/${1}x${2}x${3}"
		/usr/bin/python3 "$root/examples/onnx/qlinear/make_qlinear.py" --m "$1" --k "$2" --n "$3" "$dir"
	fi
	f32=() q=()
	for _ in $(seq "$rounds"); do
		for kind in f32 quant; do
			ms=$("$axle" run --backend cpu --threads 2 --warmup 5 --repeat 20 --json "$dir/$kind.onnx" |
				tail -1 | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin)["run_ms"]; print(r["median"], r["min"], sep=":")')
			if [ "$kind" = f32 ]; then f32+=("$ms"); else q+=("$ms"); fi
		done
	done
	/usr/bin/python3 - "${f32[*]}" "${q[*]}" "$(basename "$dir")" <<'PY'
import statistics, sys
f = [tuple(map(float, x.split(":"))) for x in sys.argv[1].split()]
q = [tuple(map(float, x.split(":"))) for x in sys.argv[2].split()]
mf, mq = statistics.median(x[0] for x in f), statistics.median(x[0] for x in q)
nf, nq = min(x[1] for x in f), min(x[1] for x in q)
print(f"{sys.argv[3]} f32_ms={mf:.3f} quant_ms={mq:.3f} speedup={mf/mq:.2f} min: f32_ms={nf:.3f} quant_ms={nq:.3f} speedup={nf/nq:.2f}")
print(f"  medians: f32 {[x[0] for x in f]}, quant {[x[0] for x in q]}")
PY
done
