//go:build linux && amd64 && !purego

package jit

import (
	"testing"
	"unsafe"
)

// TestArgsAligned checks that argument blocks put their vector slots on
// 64-byte boundaries (a ZMM vector's): a slot straddling two cache lines turns every
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
		if p := uintptr(unsafe.Pointer(&a.spill[0])); p%64 != 0 {
			t.Fatalf("spill slots at %#x, not 64-byte aligned", p)
		}
		if p := uintptr(unsafe.Pointer(&a.splat[0])); p%64 != 0 {
			t.Fatalf("splat slots at %#x, not 64-byte aligned", p)
		}
	}
	for _, fr := range keep {
		fr.put()
	}
}

// streamed reports whether f has generated its non-temporal loop, which
// it does on the first call that streams.
func streamed(f *Func) bool { return f.codeNT != nil }

// rowsStream reports whether f's rows are whole vectors of its code, as
// streaming stores need.
func rowsStream(f *Func) bool { return f.rowLen*4%f.vecBytes() == 0 }

// bothWidths runs f as the machine generates code, and, where that can
// be 16-lane (AVX-512), again with every f32 program 16-lane and again
// with 8-lane code only.
func bothWidths(t *testing.T, f func(t *testing.T)) {
	t.Run("default", f)
	if wideCode {
		wideAlways = true
		t.Run("wide", f)
		wideAlways, wideCode = false, false
		defer func() { wideCode = true }()
		t.Run("avx2", f)
	}
}
