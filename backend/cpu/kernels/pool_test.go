package kernels

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWorkersTakeLabels checks that a pool worker runs a task under the
// pprof labels given to LabelTasks, not the ones it was started with:
// the goroutine profile shows the worker running the task with them.
func TestWorkersTakeLabels(t *testing.T) {
	parallel(2, func(int) {}) // start the pool, unlabelled
	LabelTasks(pprof.WithLabels(context.Background(), pprof.Labels("hlo", "labelled-task")))
	defer LabelTasks(context.Background())
	var dump string
	started := make(chan struct{})
	parallel(2, func(i int) {
		if i == 1 { // the caller's part: it waits, so the worker takes part 0
			<-started
			return
		}
		close(started)
		var b strings.Builder
		if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
			t.Error(err)
		}
		dump = b.String()
	})
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "kernels.worker") && strings.Contains(g, "TestWorkersTakeLabels") {
			if !strings.Contains(g, `"hlo":"labelled-task"`) {
				t.Fatalf("the worker ran the task without its labels:\n%s", g)
			}
			return
		}
	}
	t.Fatalf("no worker running the task in the goroutine profile:\n%s", dump)
}

// TestParallelRunsEachPartOnce checks that every part of a parallel call
// runs exactly once, whether a worker starts it or the caller takes it
// back: the caller's own part returns at once or after a pause, so both
// happen over the calls.
func TestParallelRunsEachPartOnce(t *testing.T) {
	for call := range 200 {
		const threads = 4
		var runs [threads]atomic.Int32
		parallel(threads, func(i int) {
			if i == threads-1 && call%2 == 1 {
				time.Sleep(50 * time.Microsecond)
			}
			runs[i].Add(1)
		})
		for i := range runs {
			if n := runs[i].Load(); n != 1 {
				t.Fatalf("call %d: part %d ran %d times", call, i, n)
			}
		}
	}
}

// TestParallelTakesBackLateParts checks that the caller runs a part no
// worker has started when its own is done: with every worker busy in a
// long part of another call, the second call's parts all run on the
// caller's goroutine.
func TestParallelTakesBackLateParts(t *testing.T) {
	parallel(2, func(int) {}) // start the pool
	release := make(chan struct{})
	busy := make(chan struct{})
	done := make(chan struct{})
	go func() { // occupies a worker: the pool's only one at GOMAXPROCS 2
		defer close(done)
		parallel(2, func(i int) {
			if i == 1 { // its caller's part waits, so a worker takes part 0
				<-busy
				return
			}
			close(busy)
			<-release
		})
	}()
	<-busy
	caller := goroutineID()
	var ran [3]uint64
	parallel(3, func(i int) { ran[i] = goroutineID() })
	close(release)
	<-done
	for i, g := range ran {
		if g == 0 {
			t.Fatalf("part %d did not run", i)
		}
		if runtime.GOMAXPROCS(0) == 2 && g != caller {
			t.Errorf("part %d ran on goroutine %d, not the caller's %d, while the only worker was busy", i, g, caller)
		}
	}
}

// goroutineID is the current goroutine's number, from its stack header.
func goroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := strings.Fields(string(buf[:n]))
	id, _ := strconv.ParseUint(f[1], 10, 64)
	return id
}
