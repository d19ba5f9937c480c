//go:build !linux || !amd64 || purego

package jit

// streamed: no Func runs on this platform.
func streamed(f *Func) bool { return false }
