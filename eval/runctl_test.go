package eval_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/internal/faults"
)

func parse(t *testing.T, text string) *hlo.Module {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A loop whose condition and body are bare parameters evaluates no
// instruction at all; it still stops when interrupted.
func TestInterruptStopsBareLoop(t *testing.T) {
	m := parse(t, `HloModule bare
cond {
  ROOT p = pred[] parameter(0)
}
body {
  ROOT p = pred[] parameter(0)
}
ENTRY e {
  t = pred[] constant(true)
  ROOT w = pred[] while(t), condition=cond, body=body
}`)
	var stop atomic.Bool
	time.AfterFunc(20*time.Millisecond, func() { stop.Store(true) })
	ev := eval.Evaluator{Interrupt: &stop}
	start := time.Now()
	if _, err := ev.Run(m); !errors.Is(err, eval.ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	t.Logf("stopped %v after the start", time.Since(start))
}

// A panic in a reducer's computation (one the fast reductions do not
// take: max(acc+x, acc), for positive x the sum) names the innermost
// instruction and keeps the panicking stack.
func TestPanicInReducerContained(t *testing.T) {
	m := parse(t, `HloModule red
addmax {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT q = f32[] maximum(s, a)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=addmax
}`)
	x, err := hlo.LiteralFromSlice([]float32{1, 2, 3, 4}, 4)
	if err != nil {
		t.Fatal(err)
	}
	disarm := faults.PanicAt("s", false)
	_, err = eval.Run(m, x)
	disarm()
	var pe *eval.PanicError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Instruction, "s (computation addmax)") ||
		!strings.Contains(string(pe.Stack), "faults.Panic") {
		t.Fatalf("err %v, want a PanicError naming s", err)
	}
	if !strings.Contains(err.Error(), "instruction r") {
		t.Errorf("%q does not say which entry instruction was running", err)
	}
	r, err := eval.Run(m, x)
	if err != nil || r.GetFloat64(0) != 10 {
		t.Fatalf("after the panic: %v %v, want 10", r, err)
	}
}

// The evaluator keeps every value of a computation until it returns:
// a = p+p and b = a*a (4 KiB each) and the 4-byte sum are live together.
func TestPeakBytes(t *testing.T) {
	m := parse(t, `HloModule peak
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] add(p, p)
  b = f32[1024] multiply(a, a)
  t = (f32[1024], f32[1024]) tuple(a, b)
  g = f32[1024] get-tuple-element(t), index=1
  z = f32[] constant(0)
  ROOT r = f32[] reduce(g, z), dimensions={0}, to_apply=add
}`)
	ev := eval.Evaluator{MeasurePeak: true}
	if _, err := ev.Run(m, hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 1024))); err != nil {
		t.Fatal(err)
	}
	// The reducer's sum (4 bytes, dropped as each application returns)
	// or the reduce's result on top of a and b; t and g share their
	// storage, the constant is the module's.
	if got := ev.PeakBytes(); got != 8192+4 {
		t.Fatalf("peak %d, want 8196", got)
	}
}
