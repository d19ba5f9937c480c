// STREAM-style bandwidth (McCalpin's Copy and Scale kernels) over 16M float32,
// the size of the elementwise workloads: bytes counted as STREAM counts them,
// one read and one write per element (the write-allocate read not counted).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (4096 * 4096)

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void) {
	float *a = aligned_alloc(64, sizeof(float) * N), *b = aligned_alloc(64, sizeof(float) * N);
#pragma omp parallel for
	for (long i = 0; i < N; i++) a[i] = 1.0f + i % 7, b[i] = 0;
	double best_copy = 1e9, best_scale = 1e9;
	for (int r = 0; r < 20; r++) {
		double t = now();
#pragma omp parallel for
		for (long i = 0; i < N; i++) b[i] = a[i];
		t = now() - t;
		if (t < best_copy) best_copy = t;
		t = now();
#pragma omp parallel for
		for (long i = 0; i < N; i++) a[i] = 3.0f * b[i];
		t = now() - t;
		if (t < best_scale) best_scale = t;
	}
	double bytes = 2.0 * sizeof(float) * N;
	printf("{\"threads\": %d, \"copy_gbs\": %.2f, \"scale_gbs\": %.2f, \"copy_ms\": %.3f, \"scale_ms\": %.3f}\n",
	       omp_get_max_threads(), bytes / best_copy / 1e9, bytes / best_scale / 1e9, best_copy * 1e3, best_scale * 1e3);
	return a[7] == 12345 ? 1 : 0;
}
