//go:build !amd64 || purego

package kernels

func compareF32(dir int, dst, a, b []float32) { compareGo(dir, dst, a, b) }
func selectF32(dst, p, a, b []float32)        { selectGo(dst, p, a, b) }
func andF32(dst, a, b []float32)              { andGo(dst, a, b) }
func orF32(dst, a, b []float32)               { orGo(dst, a, b) }
func xorF32(dst, a, b []float32)              { xorGo(dst, a, b) }
