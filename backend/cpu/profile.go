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
}

type profile struct {
	mu    sync.Mutex
	times map[*hlo.Instruction]*KernelTime // by instruction: names may repeat across computations
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
		k = &KernelTime{Instruction: in.Name, Opcode: in.Opcode.String(), Lowering: how}
		p.times[in] = k
	}
	k.Calls++
	k.Total += d
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
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b KernelTime) int { return int(b.Total - a.Total) })
	return out
}

// ProfileTable formats the top n entries of Profile.
func (x *Executable) ProfileTable(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %-14s %-12s %6s %12s\n", "instruction", "opcode", "lowering", "calls", "total")
	for i, k := range x.Profile() {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "%-40s %-14s %-12s %6d %12s\n", k.Instruction, k.Opcode, k.Lowering, k.Calls, k.Total)
	}
	return b.String()
}
