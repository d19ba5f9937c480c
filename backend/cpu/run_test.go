package cpu

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/faults"
)

// callSpin runs, inside a call, a loop counting i from 0 up to n: with n
// = -1 it runs 2^32 iterations, for a test an endless loop, nested in a
// compiled body.
const callSpin = `HloModule callspin
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
spin {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
ENTRY e {
  n = s32[] parameter(0)
  ROOT c = s32[] call(n), to_apply=spin
}`

func TestRunControlledStopsNestedLoop(t *testing.T) {
	_, x := compileText(t, callSpin, Options{NoOptimize: true}) // keep the call
	if x.Lowering["call"] != 1 {
		t.Fatalf("lowering %v: want the call compiled", x.Lowering)
	}
	var stop atomic.Bool
	time.AfterFunc(30*time.Millisecond, func() { stop.Store(true) })
	start := time.Now()
	_, err := x.RunControlled([]*hlo.Literal{hlo.ScalarLiteral(int32(-1))}, nil, &stop)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stopped after %v", d)
	}
	out, err := x.RunControlled([]*hlo.Literal{hlo.ScalarLiteral(int32(7))}, nil, new(atomic.Bool))
	if err != nil || out.GetInt64(0) != 7 {
		t.Fatalf("after the stop: %v %v, want 7", out, err)
	}
}

// countdown is a context whose Err turns Canceled at its n-th call.
type countdown struct {
	context.Context
	n atomic.Int32
}

func (c *countdown) Done() <-chan struct{} { return make(chan struct{}) }

func (c *countdown) Err() error {
	if c.n.Add(-1) <= 0 {
		return context.Canceled
	}
	return nil
}

func TestCompileStopsBetweenPasses(t *testing.T) {
	m, _ := compileText(t, controlFlow, Options{})
	ctx := &countdown{Context: context.Background()}
	ctx.n.Store(3) // the check before optimizing, and two passes
	_, err := Compile(m, Options{Context: ctx})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after pass") {
		t.Fatalf("err %v, want a cancellation after a pass", err)
	}
	ctx.n.Store(1 << 30)
	if _, err := Compile(m, Options{Context: ctx}); err != nil {
		t.Fatal(err)
	}
}

// A panic in a compiled while body comes back as an error naming the
// body's instruction, with the stack; the executable still runs.
func TestPanicInBodyContained(t *testing.T) {
	m, x := compileText(t, controlFlow, Options{NoOptimize: true})
	var name string
	for _, s := range x.subs {
		if s.entry.Name == "body" {
			name = s.steps[s.root].in.Name
		}
	}
	if name == "" {
		t.Fatal("no compiled while body")
	}
	disarm := faults.PanicAt(name, false)
	_, err := x.Execute(hlo.ScalarLiteral(int32(0)))
	disarm()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Instruction != name || !strings.Contains(string(pe.Stack), "faults.Panic") {
		t.Fatalf("err %v (%#v), want a PanicError naming %s", err, pe, name)
	}
	checkAgainstEvaluator(t, m, x, 2)
}

func TestPeakBytesDonation(t *testing.T) {
	const text = `HloModule neg
ENTRY e {
  p = f32[1024] parameter(0)
  ROOT n = f32[1024] negate(p)
}`
	_, x := compileText(t, text, Options{})
	arg := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 1024))
	if _, err := x.Run([]*hlo.Literal{arg}, []bool{true}); err != nil {
		t.Fatal(err)
	}
	if got := x.PeakBytes(); got != 0 { // the output took the argument's storage
		t.Fatalf("peak %d with the argument donated, want 0", got)
	}
	if _, err := x.Run([]*hlo.Literal{hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 1024))}, nil); err != nil {
		t.Fatal(err)
	}
	if got := x.PeakBytes(); got != 4096 {
		t.Fatalf("peak %d, want the 4096-byte output", got)
	}
}
