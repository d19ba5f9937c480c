package cpu

import (
	"cmp"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/faults"
	"github.com/axle-ml/axle/internal/runctl"
)

// Execution control: a stop flag polled between steps and at every while
// iteration (a cancelled context), panics turned into errors naming the
// step, and the measured peak of each execution's memory.

// ErrInterrupted is what an execution stopped by its stop flag returns
// (wrapped); it is the evaluator's, so that both engines say the same.
var ErrInterrupted = runctl.ErrInterrupted

// PanicError is a kernel's panic, turned into an error (the evaluator's
// type, which its handlers' panics come back as).
type PanicError = runctl.PanicError

// RunControlled is RunChecked under a stop flag: once stop is set (by a
// cancelled context's AfterFunc) the execution stops before its next step
// or while iteration, in its compiled bodies and on the evaluator alike,
// and returns an error wrapping ErrInterrupted. A kernel already running
// finishes first. stop may be nil: nothing is polled then. On compiled
// code (not Interpreted) it never panics: runSteps turns a panic anywhere
// in it into an error, which the runtime relies on to set up no recover
// of its own.
func (x *Executable) RunControlled(args []*hlo.Literal, donated []bool, stop *atomic.Bool) (*hlo.Literal, error) {
	return x.RunOn(args, donated, stop, nil)
}

// RunOn is RunControlled as one device of a multi-device launch:
// replica-id and partition-id return part's, and collectives exchange
// values with the other devices through it (package collective). part
// nil is a single device.
func (x *Executable) RunOn(args []*hlo.Literal, donated []bool, stop *atomic.Bool, part *collective.Participant) (*hlo.Literal, error) {
	if x.interp {
		return x.runEvaluator(args, stop, part)
	}
	return x.runSteps(args, donated, stop, part)
}

// runEvaluator runs the module on a fresh evaluator (it is not safe for
// concurrent use), measuring its live values.
func (x *Executable) runEvaluator(args []*hlo.Literal, stop *atomic.Bool, part *collective.Participant) (*hlo.Literal, error) {
	ev, err := newEvaluator(stop, true)
	if err != nil {
		return nil, err
	}
	ev.SetParticipant(part)
	out, err := ev.Run(x.module, args...)
	x.notePeak(ev.PeakBytes())
	return out, err
}

// runSteps runs the schedule on a pooled frame. A panic leaves the frame
// and the outputs drawn to the garbage collector: a kernel may have
// stopped halfway through writing them, or may still hold them.
func (x *Executable) runSteps(args []*hlo.Literal, donated []bool, stop *atomic.Bool, part *collective.Participant) (out *hlo.Literal, err error) {
	f := x.getFrame()
	cur := -1
	defer func() {
		if r := recover(); r != nil {
			name := "(before the first step)"
			if cur >= 0 {
				name = x.steps[cur].in.Name
			}
			out, err = nil, fmt.Errorf("cpu: %w", newPanicError(name, r))
			return
		}
		x.putFrame(f)
	}()
	if f.ev.Interrupt != stop { // a store costs a write barrier check
		f.ev.Interrupt = stop
	}
	if f.ev.part != part {
		f.ev.setParticipant(part)
	}
	if x.threads > 1 {
		if !x.serial.Load() {
			defer kernels.Busy()()
		}
		// An execution that handed the pool nothing (a recurrence of
		// small inline kernels) keeps no worker polling next time.
		before := kernels.Dispatched()
		defer func() { x.serial.Store(kernels.Dispatched() == before) }()
	}
	copy(f.vals, f.lits)
	outs := x.outputBuffers(f, args, donated)
	// The loop of an execution nobody can stop polls nothing.
	checked := stop != nil || faults.Any()
	next := 0 // the next section
	for i := 0; i < len(x.steps); i++ {
		cur = i
		if next < len(x.sections) && x.sections[next].from == i {
			sec := &x.sections[next]
			if err := x.runSection(f, sec, args, outs, stop, checked); err != nil {
				return nil, err
			}
			next++
			i = sec.to - 1
			continue
		}
		if err := x.checkAndRun(f, &f.ops, i, args, outs, stop, checked); err != nil {
			return nil, err
		}
	}
	if donated != nil || x.subs != nil {
		x.measure(f, outs, args, donated)
	} else if x.peak.Load() < x.plainPeak { // once: then a load a call
		x.notePeak(x.plainPeak)
	}
	return x.result(f), nil
}

// check stops before step i once stop is set, and injects an armed fault.
func (x *Executable) check(i int, stop *atomic.Bool) error {
	if stop != nil && stop.Load() {
		return fmt.Errorf("cpu: before instruction %s: %w", x.steps[i].in.Name, ErrInterrupted)
	}
	injectFault(x.steps[i].in.Name, x.threads)
	return nil
}

// newPanicError names the step that panicked, keeping the stack of the
// goroutine that did (a pool worker's, carried over by kernels.Parallel).
func newPanicError(name string, r any) *PanicError {
	if p, ok := r.(*kernels.WorkerPanic); ok {
		return &PanicError{Instruction: name, Value: p.Value, Stack: p.Stack}
	}
	return runctl.NewPanicError(name, r)
}

// injectFault panics where a test armed a fault (internal/faults): on
// this goroutine, or in a part of a parallel loop that a pool worker runs.
func injectFault(name string, threads int) {
	armed, worker := faults.Armed(name)
	switch {
	case !armed:
	case !worker:
		faults.Panic(name)
	default:
		// The caller's own part waits (a while) for a worker to start
		// part 0, so that the panic is a worker's.
		var started atomic.Bool
		n := max(threads, 2)
		kernels.Parallel(n, func(t int) {
			switch t {
			case 0:
				started.Store(true)
				faults.Panic(name)
			case n - 1:
				for deadline := time.Now().Add(time.Second); !started.Load() && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}

// measure records the execution's memory: its arena, the outputs it
// drew (donated storage excluded) and the largest measured peak of the
// computations its control flow ran (run one at a time, each on top of
// this arena).
// An execution without either always measures plainPeak: runSteps
// notes it without calling this.
func (x *Executable) measure(f *frame, outs []pooled, args []*hlo.Literal, donated []bool) {
	n := int64(len(f.arena))
	for _, o := range outs {
		if donated == nil || !isDonated(o.mem, args, donated) {
			n += int64(len(o.mem))
		}
	}
	var sub int64
	for _, s := range x.subs {
		sub = max(sub, s.peak.Load())
	}
	x.notePeak(n + sub)
}

// isDonated reports whether mem is a donated argument's storage. (A
// flag in pooled could say so, but a pooled of five words rather than
// four cost a scalar call about 20 ns, BenchmarkExecuteScalarAdd.)
func isDonated(mem []byte, args []*hlo.Literal, donated []bool) bool {
	for p, d := range donated {
		if b := bytesOf(args[p]); d && len(b) > 0 && len(mem) > 0 && &b[0] == &mem[0] {
			return true
		}
	}
	return false
}

func (x *Executable) notePeak(n int64) {
	for {
		p := x.peak.Load()
		if n <= p || x.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// PeakBytes is the most memory one execution has measurably used so far:
// on compiled code its arena, the outputs it drew from the pool or
// allocated, and its control flow's bodies' peaks; on the evaluator the
// high-water mark of its live values (frontend.Evaluator.PeakBytes).
// Arguments are not counted.
func (x *Executable) PeakBytes() int64 { return x.peak.Load() }

// runSub runs a called computation (a while body, a branch, a call) for
// a kernel, under the calling execution's stop flag.
func (x *Executable) runSub(ev *runState, args ...*hlo.Literal) (*hlo.Literal, error) {
	if err := x.entry.CheckArguments(args); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	return x.RunOn(args, nil, ev.Interrupt, ev.part)
}

// runSection runs a section's steps: those a branch depends on, then the
// two branches at once (the first on a pool worker, or here when none is
// free), then the rest. A failed step stops its branch (the first
// branch's error is returned when both fail).
func (x *Executable) runSection(f *frame, sec *section, args []*hlo.Literal, outs []pooled, stop *atomic.Bool, checked bool) error {
	run := func(ops *[]*hlo.Literal, steps []int) error {
		for _, i := range steps {
			if err := x.checkAndRun(f, ops, i, args, outs, stop, checked); err != nil {
				return err
			}
		}
		return nil
	}
	if err := run(&f.ops, sec.pre); err != nil {
		return err
	}
	var errs [2]error
	kernels.Parallel(2, func(t int) {
		ops := &f.ops
		if t == 0 {
			ops = &f.opsB
		}
		errs[t] = run(ops, sec.branch[t])
	})
	if err := cmp.Or(errs[0], errs[1]); err != nil {
		return err
	}
	return run(&f.ops, sec.post)
}

// checkAndRun runs step i (stopping first when checked and stop is set).
func (x *Executable) checkAndRun(f *frame, ops *[]*hlo.Literal, i int, args []*hlo.Literal, outs []pooled, stop *atomic.Bool, checked bool) error {
	if checked {
		if err := x.check(i, stop); err != nil {
			return err
		}
	}
	return x.runStep(f, ops, i, args, outs)
}
