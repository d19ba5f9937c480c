//go:build amd64 && !purego

package kernels

import "unsafe"

// transpose32Vec transposes the whole 8×8 squares of a rows×cols block
// of 32-bit words and returns the rows and columns they cover (0, 0
// without AVX2).
func transpose32Vec(dst, src unsafe.Pointer, rows, cols, dr, sc int) (int, int) {
	r, c := rows&^7, cols&^7
	if !useAsm || r == 0 || c == 0 {
		return 0, 0
	}
	transpose32AVX((*uint32)(dst), (*uint32)(src), r, c, dr, sc)
	return r, c
}

// transpose64Vec is transpose32Vec for 64-bit words, 4×4 squares.
func transpose64Vec(dst, src unsafe.Pointer, rows, cols, dr, sc int) (int, int) {
	r, c := rows&^3, cols&^3
	if !useAsm || r == 0 || c == 0 {
		return 0, 0
	}
	transpose64AVX((*uint64)(dst), (*uint64)(src), r, c, dr, sc)
	return r, c
}

// copyRunsVec is CopyRuns in bytes on the AVX kernel (false without
// AVX2).
func copyRunsVec(dst, src unsafe.Pointer, rows, n, ds, ss int) bool {
	if !useAsm {
		return false
	}
	copyRunsAVX((*byte)(dst), (*byte)(src), rows, n, ds, ss)
	return true
}
