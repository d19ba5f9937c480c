package collective_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// launch is one run of a collective on every device of a default
// assignment, each device a goroutine over one Local transport.
type launch struct {
	replicas, partitions int
	// text is the module; name the collective instruction in its entry.
	text, name string
	// inputs are each device's operands.
	inputs func(device, replica, partition int) []*hlo.Literal
	apply  collective.ScalarApply
	// inPlace writes each device's result over its first operand.
	inPlace bool
	// module, when set, gives a device its own module text (to make
	// devices disagree).
	module func(device int) string
}

// run returns every device's result and error, by device id. When one
// device fails the others are cancelled, as the runtime does, and a
// timeout stops any hang.
func (l launch) run(t *testing.T) ([]*hlo.Literal, []error) {
	t.Helper()
	a, err := collective.DefaultAssignment(l.replicas, l.partitions)
	if err != nil {
		t.Fatal(err)
	}
	n := a.Size()
	ctx, cancel := context.WithTimeoutCause(context.Background(), 10*time.Second, errors.New("test timeout"))
	defer cancel()
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	net := collective.NewLocal()
	outs, errs := make([]*hlo.Literal, n), make([]error, n)
	var wg sync.WaitGroup
	for d := range n {
		text := l.text
		if l.module != nil {
			text = l.module(d)
		}
		in := instruction(t, text, l.name)
		r, pt, _ := a.Logical(d)
		p := &collective.Participant{Device: d, Replica: r, Partition: pt, Assign: a, Net: net, Ctx: ctx, Program: 7, Launch: 1}
		ops := l.inputs(d, r, pt)
		wg.Go(func() {
			out := hlo.NewLiteral(resultShape(in))
			if l.inPlace {
				out = ops[0]
			}
			if err := collective.Do(p, in, ops, out, l.apply); err != nil {
				errs[d] = err
				fail(fmt.Errorf("device %d failed", d))
				return
			}
			outs[d] = out
		})
	}
	wg.Wait()
	return outs, errs
}

// mustRun is run expecting every device to succeed.
func (l launch) mustRun(t *testing.T) []*hlo.Literal {
	t.Helper()
	outs, errs := l.run(t)
	for d, err := range errs {
		if err != nil {
			t.Errorf("device %d: %v", d, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return outs
}

func instruction(t *testing.T, text, name string) *hlo.Instruction {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	in := m.Entry.Instruction(name)
	if in == nil {
		t.Fatalf("no instruction %s", name)
	}
	return in
}

// resultShape is what Do writes: the result part of a start op.
func resultShape(in *hlo.Instruction) hlo.Shape {
	switch in.Opcode {
	case hlo.OpAllGatherStart, hlo.OpCollectivePermuteStart:
		return in.Shape.Tuple[1]
	}
	return in.Shape
}

func f32s(t *testing.T, vals []float32, dims ...int64) *hlo.Literal {
	t.Helper()
	l, err := hlo.LiteralFromSlice(vals, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func s32s(t *testing.T, vals []int32, dims ...int64) *hlo.Literal {
	t.Helper()
	l, err := hlo.LiteralFromSlice(vals, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// wantData checks a literal's (or a tuple element's) values.
func wantData[T hlo.Native](t *testing.T, what string, l *hlo.Literal, want []T) {
	t.Helper()
	got, err := hlo.LiteralToSlice[T](l)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// evalApply is the slow path's evaluator: the to_apply computation run
// by package eval on two scalars.
func evalApply(comp *hlo.Computation, a, b *hlo.Literal) (*hlo.Literal, error) {
	var e eval.Evaluator
	return e.Computation(comp, a, b)
}

const addF32 = `
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
`

const addS32 = `
adds {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
`

// module wraps an entry body with a header and the add computations.
func module(replicas, partitions int, body string) string {
	return fmt.Sprintf("HloModule m, replica_count=%d, num_partitions=%d\n%s%s\nENTRY e {\n%s\n}\n",
		replicas, partitions, addF32, addS32, body)
}
