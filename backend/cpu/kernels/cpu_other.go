//go:build !amd64 || purego

package kernels

const useAsm = false

const useAVX512 = false

const useVNNI = false
