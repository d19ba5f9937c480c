#!/bin/sh
# run.sh compares an all-reduce of BYTES (64 MiB) of float32 between
# package distributed and OpenMPI's MPI_Allreduce, both launched by
# mpirun with 2 and 4 processes on this host. The runs alternate
# (REPEAT times each) so that both see the same machine load; the table
# keeps each side's best median. axle_tcp is package distributed with
# its same-host rings switched off (AXLE_DISTRIBUTED_NO_SHM=1). Needs mpirun and mpicc (apt-get install
# openmpi-bin libopenmpi-dev).
set -eu
cd "$(dirname "$0")"
BYTES=${BYTES:-67108864}
ROUNDS=${ROUNDS:-20}
REPEAT=${REPEAT:-3}
PROCS=${PROCS:-"2 4"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpicc -O2 -o "$out/allreduce_mpi" allreduce_mpi.c
(cd ../.. && CGO_ENABLED=0 go build -o "$out/allreduce" ./bench/distributed/allreduce)
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
run() { np=$1; shift; mpirun $root --oversubscribe -np "$np" "$@" | grep GB/s; }
for np in $PROCS; do
	for i in $(seq "$REPEAT"); do
		run "$np" "$out/allreduce" -bytes "$BYTES" -rounds "$ROUNDS" >>"$out/axle.$np"
		AXLE_DISTRIBUTED_NO_SHM=1 run "$np" -x AXLE_DISTRIBUTED_NO_SHM "$out/allreduce" -bytes "$BYTES" -rounds "$ROUNDS" >>"$out/tcp.$np"
		run "$np" "$out/allreduce_mpi" "$BYTES" "$ROUNDS" >>"$out/mpi.$np"
	done
done
best() { sed 's/.*median_ms=\([0-9.]*\).*/\1/' "$1" | sort -n | head -1; }
printf '%-6s %-9s %8s %8s %8s %9s %9s %9s %10s %9s\n' procs bytes axle_ms tcp_ms mpi_ms axle_GB/s tcp_GB/s mpi_GB/s axle/mpi tcp/mpi
for np in $PROCS; do
	a=$(best "$out/axle.$np")
	c=$(best "$out/tcp.$np")
	m=$(best "$out/mpi.$np")
	awk -v np="$np" -v b="$BYTES" -v a="$a" -v c="$c" -v m="$m" 'BEGIN {
		printf "%-6s %-9s %8.2f %8.2f %8.2f %9.3f %9.3f %9.3f %10.2f %9.2f\n", np, b, a, c, m, b/a/1e6, b/c/1e6, b/m/1e6, m/a, m/c }'
done
