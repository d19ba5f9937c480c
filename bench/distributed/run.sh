#!/bin/sh
# run.sh compares an all-reduce of 64 MiB of float32 across processes
# launched by mpirun on this host (2 and 4 processes) between Axle and
# OpenMPI's MPI_Allreduce (allreduce_mpi.c). Three Axle figures:
#   axle_run  `axle run --distributed` of allreduce_64mib_N.hlo: the
#             runtime's real path (collective.Do over package
#             distributed), median of process 0's runs;
#   axle      the same algorithm written directly over Exchange
#             (./allreduce: no runtime, no HLO);
#   tcp       ./allreduce with the same-host shared-memory rings off
#             (AXLE_DISTRIBUTED_NO_SHM=1).
# The runs alternate (REPEAT times each) so that all see the same machine
# load; the table keeps each side's best median. Needs mpirun and mpicc
# (apt-get install openmpi-bin libopenmpi-dev).
set -eu
cd "$(dirname "$0")"
BYTES=67108864
ROUNDS=${ROUNDS:-20}
REPEAT=${REPEAT:-3}
PROCS=${PROCS:-"2 4"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpicc -O2 -o "$out/allreduce_mpi" allreduce_mpi.c
(cd ../.. && CGO_ENABLED=0 go build -o "$out/allreduce" ./bench/distributed/allreduce && CGO_ENABLED=0 go build -o "$out/axle" ./cmd/axle)
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
run() { np=$1; shift; mpirun $root --oversubscribe -np "$np" "$@"; }
for np in $PROCS; do
	for i in $(seq "$REPEAT"); do
		run "$np" "$out/axle" run --backend cpu --distributed --warmup 3 --repeat "$ROUNDS" --json "allreduce_64mib_$np.hlo" |
			grep '^{' | head -1 | sed 's/.*"median":\([0-9.]*\).*/median_ms=\1/' >>"$out/run.$np"
		run "$np" "$out/allreduce" -bytes "$BYTES" -rounds "$ROUNDS" | grep GB/s >>"$out/axle.$np"
		AXLE_DISTRIBUTED_NO_SHM=1 run "$np" -x AXLE_DISTRIBUTED_NO_SHM "$out/allreduce" -bytes "$BYTES" -rounds "$ROUNDS" | grep GB/s >>"$out/tcp.$np"
		run "$np" "$out/allreduce_mpi" "$BYTES" "$ROUNDS" | grep GB/s >>"$out/mpi.$np"
	done
done
best() { sed 's/.*median_ms=\([0-9.]*\).*/\1/' "$1" | sort -n | head -1; }
printf '%-6s %12s %8s %8s %8s %13s %9s %13s %8s %9s\n' procs axle_run_ms axle_ms tcp_ms mpi_ms axle_run_GB/s mpi_GB/s axle_run/mpi axle/mpi tcp/mpi
for np in $PROCS; do
	r=$(best "$out/run.$np")
	a=$(best "$out/axle.$np")
	c=$(best "$out/tcp.$np")
	m=$(best "$out/mpi.$np")
	awk -v np="$np" -v b="$BYTES" -v r="$r" -v a="$a" -v c="$c" -v m="$m" 'BEGIN {
		printf "%-6s %12.2f %8.2f %8.2f %8.2f %13.3f %9.3f %13.2f %8.2f %9.2f\n", np, r, a, c, m, b/r/1e6, b/m/1e6, m/r, m/a, m/c }'
done
