package pass

import (
	"fmt"
	"strings"
	"time"
)

// Timings accumulates, per pass name, how often it ran, how often it
// changed the module and the total time, in first-run order.
type Timings struct {
	Entries []Timing
	index   map[string]int
}

// Timing is one pass's totals.
type Timing struct {
	Pass          string
	Runs, Changed int
	Total         time.Duration
}

func (t *Timings) add(name string, changed bool, d time.Duration) {
	if t == nil {
		return
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	i, ok := t.index[name]
	if !ok {
		i = len(t.Entries)
		t.index[name] = i
		t.Entries = append(t.Entries, Timing{Pass: name})
	}
	e := &t.Entries[i]
	e.Runs++
	if changed {
		e.Changed++
	}
	e.Total += d
}

// Total is the time of all passes.
func (t *Timings) Total() time.Duration {
	var d time.Duration
	for _, e := range t.Entries {
		d += e.Total
	}
	return d
}

// String is a table: pass, runs, changed, total time.
func (t *Timings) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-32s %5s %8s %12s\n", "pass", "runs", "changed", "time")
	for _, e := range t.Entries {
		fmt.Fprintf(&b, "%-32s %5d %8d %12s\n", e.Pass, e.Runs, e.Changed, e.Total)
	}
	fmt.Fprintf(&b, "%-32s %5s %8s %12s\n", "total", "", "", t.Total())
	return b.String()
}
