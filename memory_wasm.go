//go:build wasm

package axle

// physicalMemory on WebAssembly is the 4 GiB a 32-bit linear memory can
// address at most.
func physicalMemory() int64 { return 4 << 30 }
