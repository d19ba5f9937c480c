/* allreduce_mpi times MPI_Allreduce of N float32 values (sum) across the
 * job's processes: W warm-up rounds, then R timed rounds separated by
 * barriers. It prints the minimum and median time and the algorithm
 * bandwidth (bytes of one buffer / time), the figure the Go benchmark in
 * allreduce/ prints for the same size.
 *
 * mpicc -O2 -o allreduce_mpi allreduce_mpi.c
 * mpirun -np 2 ./allreduce_mpi [bytes] [rounds]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long bytes = argc > 1 ? atol(argv[1]) : 64L << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	long n = bytes / 4;
	float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
	double *t = malloc(rounds * sizeof(double));
	for (long i = 0; i < n; i++) in[i] = (float)(rank + 1) + (float)(i % 7);
	for (int i = 0; i < 3; i++) MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int r = 0; r < rounds; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		double dt = MPI_Wtime() - t0, worst;
		/* a round lasts as long as its slowest process */
		MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		t[r] = worst;
	}
	float want = (float)size * (size + 1) / 2 + (float)size * (float)(5 % 7);
	if (out[5] != want) fprintf(stderr, "rank %d: out[5] = %g, want %g\n", rank, out[5], want);
	qsort(t, rounds, sizeof(double), cmp);
	if (rank == 0)
		printf("mpi procs=%d bytes=%ld min_ms=%.3f median_ms=%.3f GB/s=%.3f\n", size, bytes,
		       t[0] * 1e3, t[rounds / 2] * 1e3, bytes / t[rounds / 2] / 1e9);
	MPI_Finalize();
	return 0;
}
