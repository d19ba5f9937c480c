package kernels

//go:generate sh -c "cd _asm && go run ./pause -out ../pause_amd64.s -stubs ../pause_stub_amd64.go -pkg kernels"

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// The kernels split work over a small persistent pool rather than new
// goroutines per call: a 256³ GEMM takes a fraction of a millisecond, and
// waking a fresh goroutine on an idle core costs tens of microseconds.
// Workers poll for the next task while an execution is under way (Busy)
// and briefly after, then park on a channel (this machine's lesson: pools
// that spin while idle slow everything else down).

// spinFor is how long an idle worker polls before parking: long enough to
// catch the next block of one kernel (a convolution hands out hundreds in
// a row; 10 µs made the kernel-gradient convolution 20% slower) and the
// next kernel of a model whose kernels come a few dozen microseconds
// apart, short enough that a run of small inline kernels soon has the
// machine to itself (on the Zen 3 VM a spinning worker slowed the thread
// working). On an Intel AVX-512 host, 150 µs against 50, medians of three
// alternations: mlp_b256 1.56–1.62 ms against 1.70–1.77, softmax
// 1.49–1.57 against 1.63–1.72, ssd_mobilenet 28–31 against 30–31 ms; the
// dense example's training step and the ResNet convolution unchanged;
// the transformer block 70.6–75.8 against 69.0–70.6 ms (noise, or a
// little worse).
const spinFor = 150 * time.Microsecond

// MinParallelWork is the number of element operations (an element through
// one arithmetic op, or one element copied) below which a kernel runs on
// the calling goroutine. Handing work to a parked worker costs about
// 25 µs here (BenchmarkParallelWake), and 2^18 element operations take
// about 100 µs on one core, so smaller work gains nothing from a second.
const MinParallelWork = 1 << 18

type task struct {
	f      func(t int)
	t      int
	g      *group
	labels *context.Context // the caller's pprof labels (LabelTasks), or nil
}

// taskLabels, where set, are the pprof labels of the kernel being run
// (LabelTasks). Workers outlive the calls they serve: a worker started
// without them kept the labels of the call that started the pool, and
// `go tool pprof -tagfocus` put 60% of a transformer block's samples on
// its first product.
var taskLabels atomic.Pointer[context.Context]

// LabelTasks makes the pool's workers run the tasks of parallel calls
// made from now on under ctx's pprof labels (a profiler labelling each
// kernel with its HLO instruction); context.Background() clears them.
// Process-wide: concurrent profiled callers share it.
func LabelTasks(ctx context.Context) { taskLabels.Store(&ctx) }

// group counts a parallel call's outstanding tasks; the last one to
// finish closes finished, for a caller that stopped spinning. taken[t]
// says whether task t has been started, by a worker or by the caller
// taking it back (parallel).
type group struct {
	left     atomic.Int32
	finished chan struct{}
	taken    []atomic.Bool
	panic    atomic.Pointer[WorkerPanic] // the first part's panic
}

// WorkerPanic is a panic raised by a part of a parallel call, re-raised
// on the calling goroutine once every part has stopped (a worker's panic
// would otherwise end the process, out of reach of any recover), with
// the stack of the goroutine that panicked.
type WorkerPanic struct {
	Value any
	Stack []byte
}

func (p *WorkerPanic) String() string { return fmt.Sprintf("panic in a parallel part: %v", p.Value) }

// run runs part t, recording a panic rather than letting it unwind: the
// other parts may still be writing the memory the caller would reuse.
func (g *group) run(f func(t int), t int) {
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(*WorkerPanic) // a nested call's
			if !ok {
				p = &WorkerPanic{Value: r, Stack: debug.Stack()}
			}
			g.panic.CompareAndSwap(nil, p)
		}
	}()
	f(t)
}

func (g *group) taskDone() {
	if g.left.Add(-1) == 0 {
		close(g.finished)
	}
}

var pool struct {
	once  sync.Once
	tasks chan task
}

func startPool() {
	n := max(runtime.GOMAXPROCS(0)-1, 1)
	pool.tasks = make(chan task, 4*n)
	for range n {
		go worker()
	}
}

func worker() {
	for {
		var tk task
		select {
		case tk = <-pool.tasks:
		default:
			tk = spinThenWait()
		}
		if tk.g == nil {
			continue // a nudge (Busy)
		}
		if !tk.g.taken[tk.t].CompareAndSwap(false, true) {
			continue // its caller took it back and ran it
		}
		labels := context.Background()
		if tk.labels != nil {
			labels = *tk.labels
		}
		pprof.SetGoroutineLabels(labels)
		tk.g.run(tk.f, tk.t)
		tk.g.taskDone()
	}
}

// spinThenWait polls for a task for spinFor, and for as long as an
// execution is under way (Busy), then blocks.
func spinThenWait() task {
	var tk task
	if poll(func() bool {
		select {
		case tk = <-pool.tasks:
			return true
		default:
			return false
		}
	}) {
		return tk
	}
	parked.Add(1)
	defer parked.Add(-1)
	return <-pool.tasks
}

// poll calls done between pauses (relax) until it reports true, for
// spinFor, or for as long as an execution is under way (Busy), giving
// its processor to a waiting goroutine every busyTurn; it reports
// whether done did.
func poll(done func() bool) bool {
	yield := spinYields()
	start := time.Now()
	deadline, turn := start.Add(spinFor), start.Add(busyTurn)
	for now := start; now.Before(deadline) || !yield && executions.Load() > 0; now = time.Now() {
		if done() {
			return true
		}
		relax(yield, now.Sub(start))
		if now.After(turn) { // let a goroutine waiting for a processor have this one
			runtime.Gosched()
			turn = now.Add(busyTurn)
		}
	}
	return false
}

// hotShare is how much less work a kernel splits across threads while
// an execution keeps the workers polling (Busy) than where a worker may
// be parked: a part handed to a polling worker starts within a
// microsecond, where waking a parked one costs 25 µs and more (the cold
// thresholds: gemmParallelFlops, directParallelFlops, the depthwise
// bounds). The OCR classifier on two threads (mostly kernels of 10–100
// µs), both ways in one process, runs alternated, medians of the pairs'
// ratios to the cold thresholds: 0.79–0.80 at a thirty-second, which an
// eighth was 5% slower than and a 128th no faster than (Zen 3,
// BENCHMARKS.md); the other ONNX models 0.95–1.0.
const hotShare = 32

// runsAlone reports whether work, counted as its cold threshold is,
// stays on the calling goroutine: under the threshold, or while an
// execution is under way (its workers polling) under a hotShare of it.
// Compile-time choices use the cold threshold alone: a kernel split that
// changes no bits may depend on the moment, a plan may not.
func runsAlone(work, cold int) bool { return below(work, cold, executions.Load() > 0) }

// below reports whether work stays on the calling goroutine under cold,
// its threshold with the workers parked, or, with hot, while an
// execution keeps them polling (a hotShare of it).
func below(work, cold int, hot bool) bool {
	if hot {
		cold /= hotShare
	}
	return work < cold
}

// RunsAlone is runsAlone for the backend's other kernels, with
// MinParallelWork their cold threshold.
func RunsAlone(work, cold int) bool { return runsAlone(work, cold) }

// RunsAloneBy is RunsAlone for kernels that count their work one way
// against a parked worker's wake-up (coldWork against cold) and another
// against a polling worker's hand-off (hotWork against hot, while an
// execution is under way): the fusions' tile programs, whose split
// below a few microseconds costs more in moving their arrays to the
// other core than it saves.
func RunsAloneBy(coldWork, cold, hotWork, hot int) bool {
	if executions.Load() > 0 {
		return hotWork < hot
	}
	return coldWork < cold
}

// dispatched counts the parallel calls that handed parts to the pool.
var dispatched atomic.Int64

// Dispatched returns how many parallel calls have handed parts to the
// pool since the process started: an execution that saw it unchanged
// split no work (Busy would only keep a worker polling for nothing).
func Dispatched() int64 { return dispatched.Load() }

// busyTurn is how long a worker polls while executions are under way
// before it gives its processor to whatever else is waiting for one (a
// second caller's execution where every processor is taken), as the Go
// scheduler would only after 10 ms.
const busyTurn = time.Millisecond

// executions counts the executions under way whose kernels split work
// across the pool (Busy); parked counts the workers blocked on the
// queue.
var executions, parked atomic.Int32

// Busy tells the pool an execution whose kernels split their work across
// it has begun; the function it returns says it has ended. Meanwhile the
// workers keep polling rather than park (as ONNX Runtime's spin for the
// length of a run): an execution's kernels come microseconds apart,
// except where a stretch of small kernels runs on the calling goroutine,
// and a worker parked there took 20 µs to milliseconds to wake for the
// next, which then ran on one thread. A parked worker is woken at once,
// so it is up by the first kernel that needs it.
func Busy() (done func()) {
	executions.Add(1)
	if parked.Load() > 0 { // so the pool has started
		select {
		case pool.tasks <- task{}: // a nudge: the worker skips it
		default:
		}
	}
	return func() { executions.Add(-1) }
}

// A spinning goroutine keeps its processor: it waits between polls with
// the PAUSE instruction rather than runtime.Gosched. Gosched puts the
// spinner on the global run queue and runs whatever its processor's
// own queue holds next; when that is the caller (woken by the worker's
// last part), the worker waits in the global queue for the idle
// processor, whose thread the Go scheduler must wake, and waking an idle
// vCPU on these VMs takes 20 µs to milliseconds. Meanwhile the caller
// takes the next calls' parts back and runs them itself: whole runs went
// serial. ResNet-50 on 2 threads, 100 runs alternated, polling with
// Gosched against without: 250–273 parts taken back against 13–76, 90th
// percentile 13.3–13.8 ms against 9.3–9.8 ms. A spinner holds its
// processor at most spinFor, or busyTurn while executions are under way.
//
// spinYields says whether to yield between polls all the same: where
// GOMAXPROCS is 1 the worker shares the one processor with the caller
// it waits for.
func spinYields() bool { return runtime.GOMAXPROCS(0) == 1 }

// relaxPauses is the PAUSE instructions between polls: about 0.2 µs on
// Intel's cores since Skylake (140 cycles each), less on AMD's.
const relaxPauses = 4

// A poller that has waited osYieldAfter also yields its OS thread's CPU
// (sched_yield) between polls. After an idle spell, Linux may wake a
// process's two threads on one vCPU and take milliseconds to move one:
// the part the poller waits for then runs only when the poller's time
// slice ends. A BiLSTM on two threads, runs in bursts 150 ms apart
// (Zen 3; 320 runs each): runs over 3.5 ms (a slice: the model takes
// 0.7–1.5) 69 of 320 → 1, 90th percentile 5.9 → 2.0 ms; the OCR
// classifier 46 → 7 of 240. Before it, the wait costs no syscall: most
// waits for a part are a few microseconds.
const osYieldAfter = 50 * time.Microsecond

// relax waits between two polls of a loop that has polled for spun.
func relax(yield bool, spun time.Duration) {
	switch {
	case yield:
		runtime.Gosched()
	case spun >= osYieldAfter:
		osYield()
	default:
		pause(relaxPauses)
	}
}

// parallel runs f(0), ..., f(threads-1): the last on the calling
// goroutine, the others on pool workers, or on the caller where no worker
// has started them by the time the caller's own part is done; it returns
// when all are done. Each f(t) runs exactly once, so f(t) must not wait
// for another part.
func parallel(threads int, f func(t int)) {
	if threads <= 1 {
		f(0)
		return
	}
	pool.once.Do(startPool)
	dispatched.Add(1)
	g := &group{finished: make(chan struct{}), taken: make([]atomic.Bool, threads-1)}
	g.left.Store(int32(threads - 1))
	for t := range threads - 1 {
		select {
		case pool.tasks <- task{f: f, t: t, g: g, labels: taskLabels.Load()}:
		default: // pool saturated (nested or concurrent calls): taken back below
		}
	}
	g.run(f, threads-1)
	// A part no worker has started yet (or that found the pool's queue
	// full) is taken back and run here. A parked worker takes 20 µs to
	// milliseconds to wake on these VMs (BENCHMARKS.md); waiting for it
	// costs the call that much, running its part here costs at most the
	// part. And a caller that waits
	// yields its processor to the late worker, after which the two can
	// go on taking turns on one processor while the other stays idle.
	for t := range threads - 1 {
		if g.taken[t].CompareAndSwap(false, true) {
			g.run(f, t)
			g.taskDone()
		}
	}
	waitParts(g)
	if g.left.Load() > 0 {
		blockedCalls.Add(1)
	}
	<-g.finished
	if p := g.panic.Load(); p != nil {
		panic(p)
	}
}

// blockedCalls counts the parallel calls whose caller stopped polling and
// blocked until the workers' parts were done.
var blockedCalls atomic.Int64

// waitParts polls until g's parts are done, for spinFor, or for as long
// as an execution is under way (Busy), as the workers poll for tasks: a
// caller blocked on the group is woken by the Go scheduler on another
// thread, after the waits for an idle vCPU described at relax.
func waitParts(g *group) { poll(func() bool { return g.left.Load() == 0 }) }

// Parallel runs f(0), ..., f(threads-1) on the kernels' worker pool (the
// last on the calling goroutine) and returns when all are done. If a part
// panics, Parallel panics with a *WorkerPanic on the calling goroutine
// once all parts are done. Other
// packages of the CPU backend split their loops with it, so the process
// has one pool.
func Parallel(threads int, f func(t int)) { parallel(threads, f) }
