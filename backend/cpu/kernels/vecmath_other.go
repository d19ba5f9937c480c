//go:build !amd64 || purego

package kernels

func expF32(dst, x []float32)         { mapGo(dst, x, exp32) }
func tanhF32(dst, x []float32)        { mapGo(dst, x, tanh32) }
func logisticF32(dst, x []float32)    { mapGo(dst, x, logistic32) }
func sumBlockF32(x []float32) float32 { return sumGo(x) }
func maxF32(x []float32) float32      { return maxGo(x) }
func minF32(x []float32) float32      { return minGo(x) }
func addTo(dst, x []float32)          { addToGo(dst, x) }
func maxTo(dst, x []float32)          { maxToGo(dst, x) }

func colSumVec(d, src []float32, rows, stride int) int { return 0 }

func rowsVec(op int, dst, x []float32, cols int) bool { return false }
