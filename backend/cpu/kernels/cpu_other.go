//go:build !amd64 || purego

package kernels

const useAsm = false
