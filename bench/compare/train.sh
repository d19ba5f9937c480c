#!/usr/bin/env bash
# The training recipes of examples/dense and examples/cnn with Axle and
# with PyTorch (bench/compare/train_torch.py), one after the other in one
# session, each printing its result line:
#   test_accuracy=<x> steps=<n> train_seconds=<s> ms_per_step=<ms>
#
# Usage: bench/compare/train.sh [dense-seeds] [cnn-epochs]
#   dense-seeds  seeds of the dense recipe to run on both (default 1 2 3 4 5 as "1,2,3,4,5")
#   cnn-epochs   epochs of the CNN (default 3; 0 skips it)
# Needs Debian's dataset-fashion-mnist and python3-torch (run with /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=${1:-1,2,3,4,5}
epochs=${2:-3}
export OMP_WAIT_POLICY=passive
bin=$(mktemp -d)
go -C examples build -o "$bin/dense" ./dense   # examples/ is a module of its own
go -C examples build -o "$bin/cnn" ./cnn
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%F)"
for s in ${seeds//,/ }; do
	echo "== dense seed $s: axle";  "$bin/dense" --seed "$s" --plot "" 2>/dev/null | tail -1
	echo "== dense seed $s: torch"; /usr/bin/python3 bench/compare/train_torch.py dense --seed "$s" 2>/dev/null | tail -1
done
if [ "$epochs" != 0 ]; then
	echo "== cnn $epochs epochs: axle";  "$bin/cnn" --epochs "$epochs" --plot cnn.png 2>/dev/null | grep -E "^epoch|^test_accuracy"
	echo "== cnn $epochs epochs: torch"; /usr/bin/python3 bench/compare/train_torch.py cnn --epochs "$epochs" 2>/dev/null | grep -E "^epoch|^test_accuracy"
fi
