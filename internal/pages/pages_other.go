//go:build !linux

package pages

// MinPopulate is the smallest range Populate maps.
const MinPopulate = 64 << 10

// Populate is a no-op off Linux (pages_linux.go).
func Populate([]byte) {}
