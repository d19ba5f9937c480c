package command

import (
	"math"
	"runtime/debug"
	"testing"
)

// quietStart turns the collector off and its undo puts back the
// settings it found, unless GOGC is set, when it changes nothing.
func TestQuietStart(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(137)
	defer debug.SetGCPercent(before)
	undo := quietStart()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GC percent %d during start, want -1 (off)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != startLimit {
		t.Fatalf("memory limit %d during start, want %d", got, startLimit)
	}
	undo()
	if got := debug.SetGCPercent(137); got != 137 {
		t.Fatalf("GC percent %d after the first result, want 137 back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("memory limit %d after the first result, want none", got)
	}
	t.Setenv("GOGC", "50")
	quietStart()()
	if got := debug.SetGCPercent(137); got != 137 {
		t.Fatalf("with GOGC set, quietStart changed the GC percent to %d", got)
	}
}
