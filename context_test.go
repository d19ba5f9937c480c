package axle_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/faults"
)

// spinText counts i from 0 up to its argument n: with n = -1 it runs 2^32
// iterations (hours on either backend), a loop that for a test never ends.
const spinText = `HloModule spin
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT ne = pred[] compare(i, n), direction=NE
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}`

// engine is a way to run a module: a backend, and for cpu whether the
// cost model runs it on the evaluator (ExpectedRuns 1).
type engine struct {
	name, backend string
	runs          int
}

var engines = []engine{{"interp", "interp", 0}, {"cpu", "cpu", 0}, {"cpu-evaluator", "cpu", 1}}

func compileOn(t *testing.T, e engine, text string) *axle.Executable {
	t.Helper()
	c := newClient(t, e.backend)
	x, err := c.CompileText(text, axle.CompileOptions{ExpectedRuns: e.runs})
	if err != nil {
		t.Fatal(err)
	}
	if e.name == "cpu-evaluator" && !strings.HasPrefix(x.Engine(), "evaluator") {
		t.Fatalf("engine %q, want the evaluator", x.Engine())
	}
	return x
}

func TestExecuteContextStopsEndlessLoop(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			x := compileOn(t, e, spinText)
			c := x.Client()
			n, err := axle.BufferFromScalar(c, int32(-1))
			if err != nil {
				t.Fatal(err)
			}
			for _, byDeadline := range []bool{false, true} {
				latency, err := spinUntilStopped(x, n, byDeadline)
				want := context.Canceled
				if byDeadline {
					want = context.DeadlineExceeded
				}
				if !errors.Is(err, want) {
					t.Fatalf("err %v, want %v", err, want)
				}
				t.Logf("deadline %v: returned %v after the cancellation", byDeadline, latency)
				if latency > 2*time.Second {
					t.Errorf("returned %v after the cancellation, want milliseconds", latency)
				}
			}
			if got := ints(t, n); len(got) != 1 || got[0] != -1 {
				t.Fatalf("argument after cancellation: %v, want [-1]", got)
			}
			// The executable still runs: a loop of 10 iterations ends at 10.
			ten, _ := axle.BufferFromScalar(c, int32(10))
			out, err := x.ExecuteContext(context.Background(), axle.ExecuteOptions{}, ten)
			if err != nil {
				t.Fatal(err)
			}
			if got := ints(t, out[0]); got[0] != 10 {
				t.Fatalf("after cancellation: %v, want [10]", got)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if out, err = x.ExecuteContext(ctx, axle.ExecuteOptions{}, ten); err != nil || ints(t, out[0])[0] != 10 {
				t.Fatalf("cancellable context, not cancelled: %v, %v", out, err)
			}
		})
	}
}

// spinUntilStopped runs the endless loop and stops it after 50 ms, by
// cancelling its context or by its deadline, and returns how long the
// execution took to return after that.
func spinUntilStopped(x *axle.Executable, n *axle.Buffer, byDeadline bool) (time.Duration, error) {
	const after = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	stopAt := time.Now().Add(after)
	if byDeadline {
		ctx, cancel = context.WithDeadline(context.Background(), stopAt)
	} else {
		time.AfterFunc(after, cancel)
	}
	defer cancel()
	_, err := x.ExecuteContext(ctx, axle.ExecuteOptions{}, n)
	return time.Since(stopAt), err
}

func ints(t *testing.T, b *axle.Buffer) []int32 {
	t.Helper()
	v, err := axle.ToSlice[int32](b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestExecuteContextDonatedArgument(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			x := compileOn(t, e, spinText)
			n, _ := axle.BufferFromScalar(x.Client(), int32(-1))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := x.ExecuteContext(ctx, axle.ExecuteOptions{Donate: []int{0}}, n)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v, want the deadline's", err)
			}
			if _, err := axle.ToSlice[int32](n); !errors.Is(err, axle.ErrDonated) {
				t.Fatalf("donated argument after a cancelled execution: %v, want ErrDonated", err)
			}
		})
	}
}

func TestCompileContext(t *testing.T) {
	for _, backend := range []string{"interp", "cpu"} {
		c := newClient(t, backend)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.CompileTextContext(ctx, spinText, axle.CompileOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: compiling under a cancelled context: %v", backend, err)
		}
		if s := c.CacheStats(); s.Entries != 0 {
			t.Fatalf("%s: a cancelled compilation left %d cache entries", backend, s.Entries)
		}
		x, err := c.CompileTextContext(context.Background(), spinText, axle.CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		three, _ := axle.BufferFromScalar(c, int32(3))
		out, err := x.Execute(three)
		if err != nil || ints(t, out[0])[0] != 3 {
			t.Fatalf("%s: %v %v, want [3]", backend, out, err)
		}
	}
}

// hugeText's output is 40 GB (10^10 f32 elements).
const hugeText = `HloModule huge
ENTRY e {
  c = f32[] constant(1)
  ROOT b = f32[10000000000] broadcast(c), dimensions={}
}`

func TestMemoryLimitRefusesBeforeAllocating(t *testing.T) {
	for _, backend := range []string{"interp", "cpu"} {
		c, err := axle.NewClient(axle.ClientOptions{Backend: backend, MemoryLimit: 8 << 30})
		if err != nil {
			t.Fatal(err)
		}
		x := compile(t, c, hugeText)
		_, err = x.Execute()
		if !errors.Is(err, axle.ErrMemoryLimit) {
			t.Fatalf("%s: err %v, want ErrMemoryLimit", backend, err)
		}
		var me *axle.MemoryLimitError
		if !errors.As(err, &me) || me.Need != 40e9 || me.Limit != 8<<30 || me.InUse != 0 {
			t.Fatalf("%s: %#v, want 40e9 bytes needed, none in use, 8 GiB limit", backend, me)
		}
		for _, s := range []string{"40000000000 bytes", "8589934592 bytes"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %s", backend, err, s)
			}
		}
		if got := c.MemoryInUse(); got != 0 {
			t.Errorf("%s: %d bytes still reserved after the refusal", backend, got)
		}
		if x.PeakBytes() != 0 {
			t.Errorf("%s: a refused execution measured %d bytes", backend, x.PeakBytes())
		}
	}
}

func TestMemoryLimitBuffers(t *testing.T) {
	c, err := axle.NewClient(axle.ClientOptions{MemoryLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	big, err := axle.BufferFromSlice(c, make([]float32, 1<<18)) // 1 MiB: at the limit
	if err != nil {
		t.Fatal(err)
	}
	big.Release()
	_, err = axle.BufferFromSlice(c, make([]float32, 1<<18+1))
	if !errors.Is(err, axle.ErrMemoryLimit) || !strings.Contains(err.Error(), "1048580 bytes") {
		t.Fatalf("a 1048580-byte buffer under a 1 MiB limit: %v", err)
	}
	l, err := hlo.LiteralFromSlice(make([]float64, 1<<17+1), 1<<17+1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BufferFromLiteral(l); !errors.Is(err, axle.ErrMemoryLimit) {
		t.Fatalf("a 1 MiB + 8 byte literal under a 1 MiB limit: %v", err)
	}
	// A 512 KiB buffer counts until it is released or donated.
	half := func() (*axle.Buffer, error) { return axle.BufferFromSlice(c, make([]float32, 1<<17)) }
	a, _ := half()
	b, _ := half()
	if got := c.MemoryInUse(); got != 1<<20 {
		t.Fatalf("two 512 KiB buffers: %d bytes in use", got)
	}
	if _, err := half(); !errors.Is(err, axle.ErrMemoryLimit) || !strings.Contains(err.Error(), "1048576 bytes (1.0 MiB) in use") {
		t.Fatalf("a third 512 KiB buffer: %v", err)
	}
	a.Release()
	// An execution's 512 KiB output counts while the caller holds it.
	x := compile(t, c, `HloModule m
ENTRY e { p = f32[131072] parameter(0)
  ROOT n = f32[131072] negate(p) }`)
	out, err := x.Execute(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Execute(b); !errors.Is(err, axle.ErrMemoryLimit) {
		t.Fatalf("an execution needing 512 KiB with 1 MiB in use: %v", err)
	}
	out[0].Release()
	if out, err = x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, b); err != nil {
		t.Fatal(err)
	}
	if got := c.MemoryInUse(); got != 1<<19 {
		t.Fatalf("after donating one 512 KiB buffer to another's output: %d bytes in use, want 524288", got)
	}
	// One dropped without Release stops counting once collected.
	runtime.KeepAlive(out) // and no further: the output is garbage from here
	for deadline := time.Now().Add(2 * time.Second); c.MemoryInUse() != 0 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := c.MemoryInUse(); got != 0 {
		t.Fatalf("a dropped output still counts: %d bytes in use", got)
	}
	// An execution whose 4 MiB output passes the limit is refused.
	x = compile(t, c, `HloModule m
ENTRY e { c = f32[] constant(2)
  ROOT b = f32[1048576] broadcast(c), dimensions={} }`)
	if _, err := x.Execute(); !errors.Is(err, axle.ErrMemoryLimit) {
		t.Fatalf("4 MiB output under a 1 MiB limit: %v", err)
	}
}

func TestMemoryLimitDefault(t *testing.T) {
	c := newClient(t, "cpu")
	if lim := c.MemoryLimit(); lim == 0 || lim < -1 {
		t.Fatalf("default limit %d", lim)
	}
	c, _ = axle.NewClient(axle.ClientOptions{MemoryLimit: -5})
	if c.MemoryLimit() != -1 {
		t.Fatalf("negative limit: %d, want -1 (none)", c.MemoryLimit())
	}
	x := compile(t, c, hugeText)
	if x == nil {
		t.Fatal("no executable")
	}
}

// peakText holds a = p+p (4 KiB) while computing m = a*a (4 KiB).
const peakText = `HloModule peak
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] add(p, p)
  ROOT m = f32[1024] multiply(a, a)
}`

func TestPeakBytes(t *testing.T) {
	// The evaluator holds both values (8 KiB); the compiled code fuses
	// them into one kernel writing the 4 KiB output, with no arena.
	want := map[string]int64{"interp": 8192, "cpu": 4096, "cpu-evaluator": 8192}
	for _, e := range engines {
		x := compileOn(t, e, peakText)
		if x.PeakBytes() != 0 {
			t.Fatalf("%s: peak %d before any execution", e.name, x.PeakBytes())
		}
		p := buffer(t, x.Client(), make([]float32, 1024), 1024)
		if _, err := x.Execute(p); err != nil {
			t.Fatal(err)
		}
		if got := x.PeakBytes(); got != want[e.name] {
			t.Errorf("%s: peak %d bytes, want %d", e.name, got, want[e.name])
		}
	}
}

func TestExecutionPanicContained(t *testing.T) {
	for _, e := range engines {
		for _, worker := range []bool{false, true} {
			x := compileOn(t, e, peakText)
			root := x.Module().Entry.Root.Name
			p := buffer(t, x.Client(), fill(1024, func(i int) float32 { return float32(i) }), 1024)
			disarm := faults.PanicAt(root, worker)
			_, err := x.Execute(p)
			disarm()
			var pe *axle.ExecutionPanicError
			if !errors.As(err, &pe) {
				t.Fatalf("%s (worker %v): err %v, want an ExecutionPanicError", e.name, worker, err)
			}
			if !strings.HasPrefix(pe.Instruction, root) || !strings.Contains(string(pe.Stack), "faults.Panic") {
				t.Fatalf("%s: instruction %q (want %s), stack:\n%s", e.name, pe.Instruction, root, pe.Stack)
			}
			// On compiled code the armed kernel panics in a pool worker.
			if onWorker := strings.Contains(string(pe.Stack), "kernels.worker"); e.name == "cpu" && onWorker != worker {
				t.Fatalf("%s: panicked on a worker: %v, want %v; stack:\n%s", e.name, onWorker, worker, pe.Stack)
			}
			out, err := x.Execute(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := floats(t, out[0]); got[3] != 36 || got[1023] != 4*1023*1023 {
				t.Fatalf("%s: after the panic: m[3] = %v, want (3+3)^2 = 36", e.name, got[3])
			}
		}
	}
}

// A rejected call takes nothing: a donated argument still counts.
func TestMemoryLimitRejectedDonation(t *testing.T) {
	c, _ := axle.NewClient(axle.ClientOptions{MemoryLimit: 1 << 20})
	x := compile(t, c, `HloModule m
ENTRY e { p = f32[131072] parameter(0)
  q = f32[131072] parameter(1)
  ROOT a = f32[131072] add(p, q) }`)
	a := buffer(t, c, make([]float32, 1<<17), 1<<17)
	b := buffer(t, c, make([]float32, 1<<17), 1<<17)
	b.Release()
	if _, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, a, b); !errors.Is(err, axle.ErrReleased) {
		t.Fatalf("a released argument: %v", err)
	}
	if got := c.MemoryInUse(); got != 1<<19 {
		t.Fatalf("after a rejected donation: %d bytes in use, want a's 524288", got)
	}
}
