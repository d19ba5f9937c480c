//go:build amd64 && !purego

package kernels

var useAsmVar = &useAsm

var useAVX512Var = &useAVX512

var useVNNIVar = &useVNNI
