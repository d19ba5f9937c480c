package progress

import (
	"strings"
	"testing"
)

func TestBarDrawsAndThrottles(t *testing.T) {
	var out strings.Builder
	b := New(&out, "train", 4)
	for s := 1; s <= 4; s++ {
		b.Update(s, 0.5)
	}
	b.Done()
	s := out.String()
	// The first update draws; the next two are within 100 ms and skipped;
	// the last step always draws, and Done draws once more.
	if n := strings.Count(s, "\r"); n != 3 {
		t.Fatalf("%d redraws in %q, want 3", n, s)
	}
	if !strings.Contains(s, "[==============================] 4/4 loss 0.5000") || !strings.HasSuffix(s, "\n") {
		t.Fatalf("final bar: %q", s)
	}
}
