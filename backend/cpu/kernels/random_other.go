//go:build !amd64 || purego

package kernels

func philox8(n int, c *[4]uint32, k0, k1 uint32, dst *uint32) {
	panic("kernels: no AVX2 kernel")
}
