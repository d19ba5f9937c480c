//go:build !amd64 || purego

package kernels

// winoInput is winoInputGo (no assembly here).
func winoInput(m int, d []float32, row, col int, v []float32, vs, c int) {
	winoInputGo(m, d, row, col, v, vs, c)
}

// winoOutput is winoOutputGo (no assembly here).
func winoOutput(t int, m []float32, ms int, y []float32, row, col, n int) {
	winoOutputGo(t, m, ms, y, row, col, n)
}

// absMaxBits is absMaxBitsGo (no assembly here).
func absMaxBits(x []float32) uint32 { return absMaxBitsGo(x) }
