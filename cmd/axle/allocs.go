package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// allocMeter counts what the timed runs allocate on the Go heap (a
// serving loop's garbage, which the collector's concurrent marking then
// takes from the same threads the kernels run on) and, with --memprofile,
// writes a profile of every allocation with its call stack.
type allocMeter struct {
	profile string // pprof allocation profile to write, or ""
	before  runtime.MemStats
}

// recordAllocations makes the runtime record every allocation from now on
// when a profile is asked for: Go's default samples one in 512 KiB, and a
// profile mixing rates scales the sampled ones' counts out of proportion,
// so the rate is set once, before the model is loaded.
func recordAllocations(profile string) {
	if profile != "" {
		runtime.MemProfileRate = 1
	}
}

// start begins counting.
func (m *allocMeter) start() { runtime.ReadMemStats(&m.before) }

// stop ends counting after runs runs, writes the profile and returns the
// allocations and bytes a run.
func (m *allocMeter) stop(runs int) (allocs, bytes float64, err error) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	n := float64(max(runs, 1))
	allocs = float64(after.Mallocs-m.before.Mallocs) / n
	bytes = float64(after.TotalAlloc-m.before.TotalAlloc) / n
	if m.profile == "" {
		return allocs, bytes, nil
	}
	// The profile holds the allocations as of the last completed
	// collection: one now publishes the timed runs'.
	runtime.GC()
	f, err := os.Create(m.profile)
	if err != nil {
		return allocs, bytes, fmt.Errorf("--memprofile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return allocs, bytes, fmt.Errorf("--memprofile: %w", err)
	}
	return allocs, bytes, f.Close()
}

// allocLine is the report's line for a run's allocations.
func allocLine(allocs, bytes float64) string {
	return fmt.Sprintf("allocations a run: %.0f (%s)", allocs, byteSize(int64(bytes)))
}
