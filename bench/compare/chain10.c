// chain10_16m's ten elementwise ops hand-fused in C, against a negate of the same 16M f32,
// in one process: what a native loop reaches on this machine. Built by run.sh with
// gcc -O3 -march=native -ffast-math -fopenmp, so gcc vectorizes tanhf and expf through glibc's
// libmvec (16 lanes with AVX-512, 8 with AVX2; documented to 4 ulp); the negate keeps
// ordinary stores, as STREAM's loops do. Median of 21 runs each, 2 OpenMP threads.
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (4096 * 4096)
#define RUNS 21

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(void) {
	float *x = aligned_alloc(64, sizeof(float) * N), *y = aligned_alloc(64, sizeof(float) * N);
#pragma omp parallel for
	for (long i = 0; i < N; i++) x[i] = (float)((i * 2654435761u) % 2000) / 1000.0f - 1.0f, y[i] = 0;
	double neg[RUNS], chain[RUNS];
	for (int r = 0; r < RUNS; r++) {
		double t = now();
#pragma omp parallel for simd
		for (long i = 0; i < N; i++) y[i] = -x[i];
		neg[r] = now() - t;
		t = now();
#pragma omp parallel for simd
		for (long i = 0; i < N; i++) { // the ops of chain10_16m.hlo, in its order
			float a1 = x[i] * 0.5f, a2 = a1 + x[i], a3 = tanhf(a2), a4 = a3 * a3, a5 = a4 - 0.5f;
			float a6 = expf(a5), a7 = a6 * a3, a8 = fabsf(a7), a9 = sqrtf(a8);
			y[i] = a9 - a1;
		}
		chain[r] = now() - t;
	}
	qsort(neg, RUNS, sizeof(double), cmp);
	qsort(chain, RUNS, sizeof(double), cmp);
	printf("{\"threads\": %d, \"negate_ms\": %.3f, \"chain10_ms\": %.3f}\n", omp_get_max_threads(), neg[RUNS / 2] * 1e3,
	       chain[RUNS / 2] * 1e3);
	return y[7] == 12345;
}
