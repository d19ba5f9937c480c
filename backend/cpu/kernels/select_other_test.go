//go:build !amd64 || purego

package kernels

var useAsmVar *bool

var useAVX512Var *bool

var useVNNIVar *bool
