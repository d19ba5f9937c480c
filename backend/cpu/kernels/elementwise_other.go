//go:build !amd64 || purego

package kernels

func addF32(dst, a, b []float32)        { addGo(dst, a, b) }
func subF32(dst, a, b []float32)        { subGo(dst, a, b) }
func mulF32(dst, a, b []float32)        { mulGo(dst, a, b) }
func divF32(dst, a, b []float32)        { divGo(dst, a, b) }
func maximumF32(dst, a, b []float32)    { maximumGo(dst, a, b) }
func minimumF32(dst, a, b []float32)    { minimumGo(dst, a, b) }
func clampF32(dst, lo, x, hi []float32) { clampGo(dst, lo, x, hi) }
func negF32(dst, a []float32)           { negGo(dst, a) }
func absF32(dst, a []float32)           { absGo(dst, a) }
func sqrtF32(dst, a []float32)          { sqrtGo(dst, a) }
func rsqrtF32(dst, a []float32)         { rsqrtGo(dst, a) }

func u8ToF32Vec(dst []float32, src []uint8) int     { return 0 }
func interleave3Vec(dst, s0, s1, s2 []float32) int  { return 0 }
func WindowFoldFast(c int) bool                     { return false }
func packCols16Vec(d, src []float32, ld, k int) int { return 0 }
func windowFoldVec(dst, src []float32, taps []int, n, c, step int, min bool) bool {
	return false
}
func bf16ToF32Vec(dst []float32, src []uint16) int { return 0 }
func f32ToBF16Vec(dst []uint16, src []float32) int { return 0 }
func f16ToF32Vec(dst []float32, src []uint16) int  { return 0 }
func f32ToF16Vec(dst []uint16, src []float32) int  { return 0 }
