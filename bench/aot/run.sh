#!/usr/bin/env bash
# Ahead-of-time packages against `axle run`: binary sizes, and the time
# from process start to the first result of mlp_b256 (the AOT command's
# load plus first run, its arguments' making not counted; axle run's
# compile plus first run), over ROUNDS processes each, alternating, in
# the same minutes; also each whole process's wall time.
# Usage: bench/aot/run.sh [ROUNDS] [MODULE.hlo]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-30}
module=${2:-../shared/bench/mlp_b256.hlo}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/axle" ./cmd/axle
sed 's#^module github.com/axle-ml/axle#module example.com/aotbench#' go.mod >"$work/go.mod"
printf '\nrequire github.com/axle-ml/axle v0.0.0\n\nreplace github.com/axle-ml/axle => %s\n' "$PWD" >>"$work/go.mod"
cp go.sum "$work/"
"$work/axle" aot --pkg model -o "$work/model" --main "$module" >/dev/null
(cd "$work" && go build -o "$work/model-bin" ./model/cmd/model)
echo "host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(date -u +%F)"
printf 'size: aot command %d bytes, axle %d bytes (%.2f)\n' "$(stat -c %s "$work/model-bin")" "$(stat -c %s "$work/axle")" \
	"$(echo "$(stat -c %s "$work/model-bin") / $(stat -c %s "$work/axle")" | bc -l)"
for i in $(seq "$rounds"); do
	s=$(date +%s%N); "$work/model-bin" --json | tail -1 >>"$work/aot.jsonl"; e=$(date +%s%N)
	echo $(((e - s) / 1000)) >>"$work/aot.wall"
	s=$(date +%s%N); "$work/axle" run --backend cpu --json "$module" | tail -1 >>"$work/run.jsonl"; e=$(date +%s%N)
	echo $(((e - s) / 1000)) >>"$work/run.wall"
done
python3 - "$work" <<'PY'
import json, statistics, sys
w = sys.argv[1]
aot = [json.loads(l) for l in open(w + "/aot.jsonl")]
run = [json.loads(l) for l in open(w + "/run.jsonl")]
first = [a["first_result_ms"] for a in aot]
load = [a["load_ms"] for a in aot]
comp = [r["compile_ms"] + r["run_ms"]["min"] for r in run]
wa = [int(x) / 1000 for x in open(w + "/aot.wall")]
wr = [int(x) / 1000 for x in open(w + "/run.wall")]
med = statistics.median
print(f"aot: first result {med(first):.2f} ms median (min {min(first):.2f}, max {max(first):.2f}); load {med(load):.2f} ms")
print(f"axle run: compile + first run {med(comp):.2f} ms median (min {min(comp):.2f}, max {max(comp):.2f})")
print(f"whole process (wall, arguments made in both): aot {med(wa):.1f} ms, axle run {med(wr):.1f} ms median")
PY
