package kernels

import "testing"

// TestNextPairShare checks the prefetch streams that the tiles of one
// pair of B slivers run: together they start at the next pair, follow
// each other without a gap, never skip a line (a step of at most 64
// bytes), and cover the next pair whenever a line every two steps a tile
// is enough to.
func TestNextPairShare(t *testing.T) {
	for _, tc := range []struct{ cols, kb, calls int }{
		{32, 2304, 9}, {32, 256, 6}, {16, 2304, 9}, {32, 1152, 1}, {32, 384, 3}, {8, 100, 4}, {32, 2, 1},
	} {
		bytes := (tc.cols + sgemmNR - 1) / sgemmNR * sgemmNR * tc.kb * 4
		per := tc.kb / 2
		at := 2 * sgemmNR * tc.kb * 4 // the next pair's first byte
		for call := range tc.calls {
			pf := nextPairShare(tc.cols, tc.kb, tc.calls, call)
			if pf.step <= 0 || pf.step > 64 {
				t.Fatalf("%+v call %d: step %d", tc, call, pf.step)
			}
			if pf.off != at {
				t.Fatalf("%+v call %d: starts at %d, want %d (the previous stream's end)", tc, call, pf.off, at)
			}
			at += per * pf.step
		}
		if end := 2*sgemmNR*tc.kb*4 + bytes; tc.calls*per*64 >= bytes && at < end-64 {
			t.Errorf("%+v: the streams end at %d, short of the next pair's last line (%d)", tc, at, end-64)
		}
	}
	for _, none := range [][3]int{{0, 256, 4}, {32, 256, 0}, {32, 1, 3}} {
		if pf := nextPairShare(none[0], none[1], none[2], 0); pf != (prefetchRange{}) {
			t.Errorf("cols %d kb %d calls %d: %+v, want no stream", none[0], none[1], none[2], pf)
		}
	}
}

// TestPanelShare checks the stream over the next panel's first pair: it
// starts at that panel, wherever it lies from the pair the tiles read,
// and asks for the pair (or the panel, if shorter) and no more.
func TestPanelShare(t *testing.T) {
	const kb = 256
	whole := make([]float32, 8*sgemmNR*kb)
	b, next := whole[4*sgemmNR*kb:], whole[:3*sgemmNR*kb] // next lies before b
	first := panelShare(b, next, kb, 4, 0)
	if want := -4 * sgemmNR * kb * 4; first.off != want {
		t.Fatalf("starts at %d bytes from b, want %d", first.off, want)
	}
	last := panelShare(b, next, kb, 4, 3)
	if end := last.off + kb/2*last.step; end < first.off+2*sgemmNR*kb*4-64 || end > first.off+2*sgemmNR*kb*4+4*64 {
		t.Errorf("the streams end %d bytes past the panel's start, want about its first pair, %d", end-first.off, 2*sgemmNR*kb*4)
	}
	if pf := panelShare(b, nil, kb, 4, 0); pf != (prefetchRange{}) {
		t.Errorf("no next panel: %+v, want no stream", pf)
	}
}
