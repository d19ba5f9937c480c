package collective

import (
	"slices"
	"testing"
)

// Boxes of a [2,3,4] array of bytes 0..23 (element (i,j,k) is 12i+4j+k).
func TestPackBox(t *testing.T) {
	src := make([]byte, 24)
	for i := range src {
		src[i] = byte(i)
	}
	dims := []int64{2, 3, 4}
	for _, c := range []struct {
		start, size []int64
		want        []byte
	}{
		{[]int64{1, 1, 1}, []int64{1, 2, 2}, []byte{17, 18, 21, 22}},
		{[]int64{0, 1, 0}, []int64{2, 2, 4}, []byte{4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
		{[]int64{0, 0, 3}, []int64{2, 3, 1}, []byte{3, 7, 11, 15, 19, 23}},
		{[]int64{0, 0, 0}, []int64{2, 0, 4}, []byte{}},
	} {
		got := make([]byte, boxBytes(c.size, 1))
		packBox(got, src, dims, c.start, c.size, 1)
		if !slices.Equal(got, c.want) {
			t.Errorf("box at %v of %v = %v, want %v", c.start, c.size, got, c.want)
		}
		back := make([]byte, 24)
		unpackBox(back, got, dims, c.start, c.size, 1)
		forEachRun(dims, c.start, c.size, 1, func(off, n int) {
			if !slices.Equal(back[off:off+n], src[off:off+n]) {
				t.Errorf("unpack at %v of %v: bytes %d..%d = %v", c.start, c.size, off, off+n, back[off:off+n])
			}
		})
	}
	if got := clampStart([]int64{5, -1, 2}, []int64{1, 2, 4}, dims); !slices.Equal(got, []int64{1, 0, 0}) {
		t.Errorf("clampStart = %v, want [1 0 0]", got)
	}
}
