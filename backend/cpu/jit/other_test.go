//go:build !linux || !amd64 || purego

package jit

import "testing"

// streamed: no Func runs on this platform.
func streamed(f *Func) bool { return false }

// rowsStream: no Func runs on this platform.
func rowsStream(f *Func) bool { return false }

// bothWidths runs f: there is one width of code (none) here.
func bothWidths(t *testing.T, f func(t *testing.T)) { t.Run("default", f) }
