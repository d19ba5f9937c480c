//go:build !linux && !wasm

package axle

// physicalMemory is unknown off Linux (without cgo or system calls per
// OS): the default memory limit is then none.
func physicalMemory() int64 { return 0 }
