//go:build amd64 && !purego

package kernels

// kernelBF16 computes a (MR·ablocks)×(NR·bblocks) tile over kp pair
// steps with the AVX512_BF16 kernels where they run, the Go twin
// elsewhere: a holds ablocks A slivers back to back, b bblocks B slivers,
// each kp steps long.
func kernelBF16(ablocks, bblocks, kp int, a, b []uint32, c []float32, ldc int, overwrite bool) {
	if !useBF16 || kp == 0 {
		kernelBF16Go(ablocks, bblocks, kp, a, b, c, ldc, overwrite)
		return
	}
	_ = c[(ablocks*bf16MR-1)*ldc+bblocks*bf16NR-1] // the tile must be inside c
	_ = a[ablocks*bf16MR*kp-1]
	_ = b[bblocks*bf16NR*kp-1]
	switch ablocks<<2 | bblocks {
	case 2<<2 | 2:
		bf16gemm12x32(kp, &a[0], &b[0], &c[0], ldc, overwrite)
	case 1<<2 | 2:
		bf16gemm6x32(kp, &a[0], &b[0], &c[0], ldc, overwrite)
	case 2<<2 | 1:
		bf16gemm12x16(kp, &a[0], &b[0], &c[0], ldc, overwrite)
	case 1<<2 | 1:
		bf16gemm6x16(kp, &a[0], &b[0], &c[0], ldc, overwrite)
	default:
		panic("kernels: no bf16 kernel of that shape")
	}
}
