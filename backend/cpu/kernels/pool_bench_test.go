package kernels

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkParallelWake is the cost of one parallel call on two threads
// whose helper is parked (the call follows a pause longer than any spin),
// which decides how much work is worth splitting.
func BenchmarkParallelWake(b *testing.B) {
	parallel(2, func(int) {}) // start the pool
	var total time.Duration
	for b.Loop() {
		time.Sleep(200 * time.Microsecond)
		start := time.Now()
		parallel(2, func(int) {})
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/wake")
}

// BenchmarkParallelWakeWork is one parallel call of about 100 µs of work
// split in two, whose helper is parked: what a late worker costs a call.
// It reports the median call (a parked worker on these VMs wakes after
// 20 µs to milliseconds; the mean is the outliers') and logs one part's
// time alone. With the caller taking back a part no worker has started,
// the median is about the two parts run one after the other.
func BenchmarkParallelWakeWork(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i)
	}
	part := func(int) {
		for range 500 {
			if SumF32(x) < 0 {
				panic("negative sum")
			}
		}
	}
	parallel(2, part) // start the pool
	start := time.Now()
	part(0)
	b.Logf("one part alone: %v", time.Since(start))
	var calls []time.Duration
	for b.Loop() {
		time.Sleep(200 * time.Microsecond)
		start := time.Now()
		parallel(2, part)
		calls = append(calls, time.Since(start))
	}
	slices.Sort(calls)
	b.ReportMetric(float64(calls[len(calls)/2].Nanoseconds()), "ns/median-call")
}
