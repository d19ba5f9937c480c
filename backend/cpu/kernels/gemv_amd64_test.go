//go:build amd64 && !purego

package kernels

import "testing"

// TestGemvF32AVX2 runs the AVX2 kernels on an AVX-512 machine too.
func TestGemvF32AVX2(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2")
	}
	defer func(v bool) { useAVX512 = v }(useAVX512)
	useAVX512 = false
	for _, m := range []int{1, 2, 3, 4, 6} {
		for _, n := range []int{3, 8, 9, 24, 40, 288} {
			checkGemv(t, m, n, 96)
		}
	}
}
