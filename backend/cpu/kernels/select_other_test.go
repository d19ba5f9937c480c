//go:build !amd64 || purego

package kernels

var useAsmVar *bool
