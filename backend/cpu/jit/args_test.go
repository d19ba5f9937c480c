//go:build linux && amd64 && !purego

package jit

import (
	"testing"
	"unsafe"
)

// TestArgsAligned checks that argument blocks put their vector slots on
// 32-byte boundaries: a slot straddling two cache lines turns every
// spill and splat access into two, and made gelu's loop five times
// slower when the block lived on the stack.
// Frames also hand out every slot inside their buffer.
func TestArgsAligned(t *testing.T) {
	var keep []*frame
	for range 64 {
		fr := getFrame()
		keep = append(keep, fr)
		a := fr.a
		lo, hi := uintptr(unsafe.Pointer(&fr.raw[0])), uintptr(unsafe.Pointer(&fr.raw[0]))+uintptr(len(fr.raw))
		if p := uintptr(unsafe.Pointer(a)); p < lo || p+unsafe.Sizeof(args{}) > hi {
			t.Fatalf("block at %#x outside its buffer [%#x, %#x)", p, lo, hi)
		}
		if p := uintptr(unsafe.Pointer(&a.spill[0])); p%32 != 0 {
			t.Fatalf("spill slots at %#x, not 32-byte aligned", p)
		}
		if p := uintptr(unsafe.Pointer(&a.splat[0])); p%32 != 0 {
			t.Fatalf("splat slots at %#x, not 32-byte aligned", p)
		}
	}
	for _, fr := range keep {
		fr.put()
	}
}

// streamed reports whether f has generated its non-temporal loop, which
// it does on the first call that streams.
func streamed(f *Func) bool { return f.codeNT != nil }
