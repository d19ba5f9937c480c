package kernels

import (
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
