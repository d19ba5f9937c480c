//go:build !linux

package cpu

// populate is a no-op off Linux (storage_linux.go).
func populate([]byte) {}
