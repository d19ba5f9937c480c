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
