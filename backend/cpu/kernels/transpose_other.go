//go:build !amd64 || purego

package kernels

import "unsafe"

func transpose32Vec(dst, src unsafe.Pointer, rows, cols, dr, sc int) (int, int) { return 0, 0 }
func transpose64Vec(dst, src unsafe.Pointer, rows, cols, dr, sc int) (int, int) { return 0, 0 }
func copyRunsVec(dst, src unsafe.Pointer, rows, n, ds, ss int) bool             { return false }
