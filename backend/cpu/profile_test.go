package cpu

import (
	"testing"
	"time"

	"github.com/axle-ml/axle/hlo"
)

// A profile's median is of the calls' own times, hand-worked: odd and
// even counts, and only the last profileSamples calls once there are
// more.
func TestProfileMedian(t *testing.T) {
	in := &hlo.Instruction{Name: "k", Opcode: hlo.OpAdd}
	p := &profile{times: map[*hlo.Instruction]*kernelCalls{}}
	x := &Executable{prof: p}
	ms := time.Millisecond
	for _, d := range []time.Duration{9 * ms, 1 * ms, 7 * ms, 3 * ms, 5 * ms} {
		p.add(in, "elementwise", d)
	}
	if k := x.Profile()[0]; k.Median != 5*ms || k.Total != 25*ms || k.Calls != 5 {
		t.Fatalf("after 1,3,5,7,9 ms: median %v, total %v, %d calls", k.Median, k.Total, k.Calls)
	}
	p.add(in, "elementwise", 100*ms)
	if k := x.Profile()[0]; k.Median != 6*ms {
		t.Fatalf("after 1,3,5,7,9,100 ms: median %v, want 6ms", k.Median)
	}
	// profileSamples calls of 2 ms replace all six earlier ones.
	for range profileSamples {
		p.add(in, "elementwise", 2*ms)
	}
	if k := x.Profile()[0]; k.Median != 2*ms || k.Calls != 6+profileSamples {
		t.Fatalf("after %d more calls of 2 ms: median %v, %d calls", profileSamples, k.Median, k.Calls)
	}
}
