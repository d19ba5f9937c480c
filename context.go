package axle

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// ExecuteContext is ExecuteWith under a context. A context already done
// runs nothing and takes nothing: the call returns ctx.Err(). Cancelling
// the context stops the execution before its next kernel, while-loop
// iteration or evaluated instruction (a kernel already running finishes
// first): the call then returns an error wrapping ctx.Err(), undonated
// arguments stay usable, donated ones are consumed (as for any failed
// execution), and the executable runs the next call as usual.
//
// A context that can never be cancelled (ctx.Done() == nil, as
// context.Background's) costs nothing over ExecuteWith.
func (x *Executable) ExecuteContext(ctx context.Context, opts ExecuteOptions, args ...*Buffer) ([]*Buffer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return x.ExecuteWith(opts, args...)
	}
	if x == nil {
		return nil, errNoExecutable
	}
	stop := new(atomic.Bool)
	unregister := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer unregister()
	out, err := x.execute(stop, opts, args, nil)
	if err != nil && stop.Load() && errors.Is(err, eval.ErrInterrupted) {
		return nil, fmt.Errorf("axle: executing %s: %w", x.entry, ctx.Err())
	}
	return out, err
}

// run runs the program on checked, acquired arguments under stop (nil:
// no cancellation), within the client's memory limit. The backends turn
// their kernels' and handlers' panics into *ExecutionPanicError.
func (x *Executable) run(lits []*hlo.Literal, donated []bool, stop *atomic.Bool, part *collective.Participant) (*hlo.Literal, error) {
	mem := &x.client.mem
	switch {
	case x.need >= minAccounted && mem.limit > 0:
	case x.contained: // runProgram's first case, a call less
		return x.cpu.RunOn(lits, donated, stop, part)
	default:
		return x.runProgram(lits, donated, stop, part)
	}
	if err := mem.reserve(x.need, x.executing); err != nil {
		return nil, err
	}
	out, err := x.runProgram(lits, donated, stop, part)
	mem.release(x.need)
	return out, err
}

func (x *Executable) executing() string { return "executing " + x.entry }

// ExecutionPanicError is a panic raised inside a kernel or the evaluator
// during an execution (on the executing goroutine or a worker's), turned
// into the execution's error: Instruction names the instruction being
// computed, Stack is the stack of the goroutine that panicked. The
// executable stays usable.
type ExecutionPanicError = eval.PanicError

// PeakBytes is the most memory one execution has measurably used so far:
// on the cpu backend its arena, the outputs it drew, and the peaks of the
// bodies its control flow ran; on the evaluator the high-water mark of
// its live values. Arguments are not counted.
func (x *Executable) PeakBytes() int64 {
	if x == nil || x.prog == nil {
		return 0
	}
	return x.prog.PeakBytes()
}

// CompileContext is Compile under a context, checked between the
// compiler's passes and stages: a cancelled compilation returns an error
// wrapping ctx.Err() and caches nothing. A call that finds the same
// compilation already running in another goroutine waits for it
// regardless of ctx.
func (c *Client) CompileContext(ctx context.Context, m *hlo.Module, opts CompileOptions) (*Executable, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("axle: nil module")
	}
	if m.Entry == nil {
		return nil, fmt.Errorf("axle: module %s has no entry computation", m.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	key := cacheKey{fingerprint(m), opts}
	for try := 0; ; try++ {
		x, err := c.cache.get(key, func() (*Executable, error) { return c.compile(ctx, m, key.module, opts) })
		// Another caller's cancelled compilation, found running (the
		// cache forgets it): ours was not cancelled, so compile again.
		if err != nil && ctx.Err() == nil && try < 3 && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue
		}
		if err == nil && c.closed.Load() { // closed while compiling
			x.Close()
			return nil, closedError("client")
		}
		return x, err
	}
}

// CompileTextContext is CompileText under a context (CompileContext).
func (c *Client) CompileTextContext(ctx context.Context, text string, opts CompileOptions) (*Executable, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	return c.CompileContext(ctx, m, opts)
}
