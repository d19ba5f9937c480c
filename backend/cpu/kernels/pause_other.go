//go:build !amd64 || purego

package kernels

import "sync/atomic"

// spinWord is read by pause's loop, which the compiler may not drop.
var spinWord atomic.Int32

// pause waits a moment without the PAUSE instruction: about as long as
// n of them take on amd64, in loads that only this core's cache serves.
func pause(n int) {
	for range 32 * n {
		spinWord.Load()
	}
}
