package kernels

import (
	"sync/atomic"
	"testing"
)

func BenchmarkZZHotRoundTrip(b *testing.B) {
	done := Busy()
	defer done()
	var byWorker atomic.Int64
	for b.Loop() {
		parallel(2, func(t int) {
			if t == 0 {
				byWorker.Add(1)
			}
		})
	}
	b.ReportMetric(float64(byWorker.Load())/float64(b.N), "worker-share")
}
