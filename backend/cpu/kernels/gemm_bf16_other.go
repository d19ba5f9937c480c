//go:build !amd64 || purego

package kernels

// kernelBF16 computes a (MR·ablocks)×(NR·bblocks) tile over kp pair
// steps: the Go twin of the AVX512_BF16 kernels, this build having none.
func kernelBF16(ablocks, bblocks, kp int, a, b []uint32, c []float32, ldc int, overwrite bool) {
	kernelBF16Go(ablocks, bblocks, kp, a, b, c, ldc, overwrite)
}
