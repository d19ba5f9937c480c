package kernels

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A part's panic on a worker reaches the caller as a *WorkerPanic, once
// every part is done, with the worker's stack; the pool goes on working.
func TestParallelPanicReachesCaller(t *testing.T) {
	var started, callerDone atomic.Bool
	var sawCallerDone bool
	func() {
		defer func() {
			r := recover()
			p, ok := r.(*WorkerPanic)
			if !ok {
				t.Fatalf("recovered %v, want a *WorkerPanic", r)
			}
			if p.Value != "boom" || !strings.Contains(string(p.Stack), "TestParallelPanicReachesCaller") {
				t.Fatalf("value %v, stack:\n%s", p.Value, p.Stack)
			}
			sawCallerDone = callerDone.Load()
		}()
		parallel(2, func(part int) {
			if part == 0 {
				started.Store(true)
				panic("boom")
			}
			// The caller's part: wait (a while) for a worker to start part
			// 0, then outlast its panic.
			for deadline := time.Now().Add(time.Second); !started.Load() && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(5 * time.Millisecond)
			callerDone.Store(true)
		})
		t.Fatal("parallel returned after a part panicked")
	}()
	if !sawCallerDone {
		t.Fatal("the panic reached the caller before its own part was done")
	}
	var sum atomic.Int64
	parallel(4, func(part int) { sum.Add(int64(part)) })
	if sum.Load() != 0+1+2+3 {
		t.Fatalf("after the panic the parts summed to %d, want 6", sum.Load())
	}
}

// waitFor polls cond for up to two seconds.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// An idle worker parks; Busy wakes it and keeps it polling however long
// the execution lasts; once the execution ends it parks again.
func TestBusyKeepsWorkersUp(t *testing.T) {
	if spinYields() {
		t.Skip("GOMAXPROCS 1: workers yield rather than poll")
	}
	Parallel(2, func(int) {}) // start the pool
	workers := int32(max(runtime.GOMAXPROCS(0)-1, 1))
	if !waitFor(func() bool { return parked.Load() == workers }) {
		t.Fatalf("%d of %d workers parked after the pool went idle", parked.Load(), workers)
	}
	done := Busy()
	if !waitFor(func() bool { return parked.Load() == 0 }) {
		done()
		t.Fatalf("%d workers still parked after Busy", parked.Load())
	}
	time.Sleep(10 * spinFor)
	if n := parked.Load(); n != 0 {
		done()
		t.Fatalf("%d workers parked during an execution", n)
	}
	done()
	if !waitFor(func() bool { return parked.Load() == workers }) {
		t.Fatalf("%d of %d workers parked after the execution ended", parked.Load(), workers)
	}
}

// A caller whose part ends before a worker's polls for it, during an
// execution (Busy), however long it takes, rather than blocking on it
// (the Go scheduler would wake it later, on an idle vCPU); outside one it
// polls for spinFor and then blocks.
func TestCallerPollsDuringExecution(t *testing.T) {
	if spinYields() {
		t.Skip("GOMAXPROCS 1: callers yield rather than poll")
	}
	// call runs two parts: the worker's holds until hold returns, the
	// caller's until the worker has its part, so the caller cannot take
	// it back and must wait for it. Earlier tests' parts that their
	// callers took back may still fill the queue, where the new part
	// would not be queued: call waits for the workers to drain it.
	call := func(hold func()) {
		if !waitFor(func() bool { return len(pool.tasks) == 0 }) {
			t.Fatal("the pool's queue stays full")
		}
		started := make(chan struct{})
		Parallel(2, func(part int) {
			if part == 0 { // a worker's (the caller's is the last)
				close(started)
				hold()
				return
			}
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Error("no worker started the part")
			}
		})
	}
	done := Busy()
	before := blockedCalls.Load()
	call(func() { time.Sleep(20 * spinFor) })
	blocked := blockedCalls.Load() - before
	done()
	if blocked != 0 {
		t.Errorf("the caller blocked during an execution")
	}
	// Outside an execution the worker's part holds until the caller has
	// given up polling (a fixed sleep would race a caller the host
	// deschedules for longer than it), or for ten seconds.
	before = blockedCalls.Load()
	call(func() {
		waitFor := time.Now().Add(10 * time.Second)
		for blockedCalls.Load() == before && time.Now().Before(waitFor) {
			time.Sleep(spinFor)
		}
	})
	if blockedCalls.Load() == before {
		t.Errorf("the caller polled past spinFor outside an execution")
	}
}
