package cpu

import (
	"strings"
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

// ProfileTable lists the n slowest kernels, slowest first, and all of
// them for n ≤ 0.
func TestProfileTableRows(t *testing.T) {
	p := &profile{times: map[*hlo.Instruction]*kernelCalls{}}
	x := &Executable{prof: p}
	for i, name := range []string{"fast", "slow", "middle"} {
		in := &hlo.Instruction{Name: name, Opcode: hlo.OpAdd}
		p.add(in, "elementwise", time.Duration([]int{1, 3, 2}[i])*time.Millisecond)
	}
	rows := func(n int) []string {
		var names []string
		for _, l := range strings.Split(strings.TrimSpace(x.ProfileTable(n)), "\n")[1:] {
			names = append(names, strings.Fields(l)[0])
		}
		return names
	}
	for _, c := range []struct {
		n    int
		want string
	}{{1, "slow"}, {2, "slow middle"}, {3, "slow middle fast"}, {5, "slow middle fast"}, {0, "slow middle fast"}, {-1, "slow middle fast"}} {
		if got := strings.Join(rows(c.n), " "); got != c.want {
			t.Errorf("ProfileTable(%d) lists %q, want %q", c.n, got, c.want)
		}
	}
}
