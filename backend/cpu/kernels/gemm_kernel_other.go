//go:build !amd64 || purego

package kernels

func kernelF32(k int, a, b, c []float32, ldc int) { kernelGo(sgemmMR, sgemmNR, k, a, b, c, ldc) }

func kernelF64(k int, a, b, c []float64, ldc int) { kernelGo(dgemmMR, dgemmNR, k, a, b, c, ldc) }
