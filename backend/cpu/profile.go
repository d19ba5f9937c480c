package cpu

import (
	"context"
	"fmt"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Profiling: with Options.Profile, every thunk runs under a pprof label
// naming its HLO instruction (so `go tool pprof -tagfocus` attributes
// samples to instructions) and its time is added to a per-instruction
// table that `axle run --profile` prints. The table is the module's:
// the bodies its control flow runs add to it too.

// KernelTime is one instruction's accumulated execution time.
type KernelTime struct {
	Instruction, Opcode, Lowering string
	Calls                         int
	Total                         time.Duration
	// Median is the median of its last calls' times (up to
	// profileSamples of them). On a shared machine a few slow calls
	// pull Total/Calls well above it (15% for ResNet's kernels on two
	// threads): compare medians with the run's median, means with
	// each other.
	Median time.Duration
}

// profileSamples bounds the call times a profile keeps per instruction
// for its median: the most recent ones.
const profileSamples = 1024

type profile struct {
	mu    sync.Mutex
	times map[*hlo.Instruction]*kernelCalls // by instruction: names may repeat across computations
}

// kernelCalls is one instruction's accumulated time and its last call
// times, a ring of up to profileSamples (KernelTime.Median's).
type kernelCalls struct {
	KernelTime
	samples []time.Duration
}

// wrap wraps k to label and time it.
func (p *profile) wrap(in *hlo.Instruction, how string, k kernel) kernel {
	if k == nil {
		return nil
	}
	labels := pprof.Labels("hlo", in.Name, "op", in.Opcode.String())
	return func(ev *runState, dst *hlo.Literal, ops []*hlo.Literal) (out *hlo.Literal, err error) {
		start := time.Now()
		pprof.Do(context.Background(), labels, func(ctx context.Context) {
			kernels.LabelTasks(ctx) // the pool's workers take them too
			defer kernels.LabelTasks(context.Background())
			out, err = k(ev, dst, ops)
		})
		p.add(in, how, time.Since(start))
		return out, err
	}
}

func (p *profile) add(in *hlo.Instruction, how string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.times[in]
	if k == nil {
		k = &kernelCalls{KernelTime: KernelTime{Instruction: in.Name, Opcode: in.Opcode.String(), Lowering: how}}
		p.times[in] = k
	}
	k.Calls++
	k.Total += d
	if len(k.samples) < profileSamples {
		k.samples = append(k.samples, d)
	} else {
		k.samples[(k.Calls-1)%profileSamples] = d
	}
}

// median is the median of ds (0 for none), which it leaves unchanged.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Profile returns the per-instruction times so far, slowest first (empty
// unless compiled with Options.Profile).
func (x *Executable) Profile() []KernelTime {
	if x.prof == nil {
		return nil
	}
	x.prof.mu.Lock()
	defer x.prof.mu.Unlock()
	var out []KernelTime
	for _, k := range x.prof.times {
		kt := k.KernelTime
		kt.Median = median(k.samples)
		out = append(out, kt)
	}
	slices.SortFunc(out, func(a, b KernelTime) int { return int(b.Total - a.Total) })
	return out
}

// ProfileTable formats the top n entries of Profile (every entry where n
// is zero or less).
func (x *Executable) ProfileTable(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %-14s %-12s %6s %12s %12s\n", "instruction", "opcode", "lowering", "calls", "total", "median")
	for i, k := range x.Profile() {
		if n > 0 && i == n {
			break
		}
		fmt.Fprintf(&b, "%-40s %-14s %-12s %6d %12s %12s\n", k.Instruction, k.Opcode, k.Lowering, k.Calls, k.Total, k.Median)
	}
	return b.String()
}
