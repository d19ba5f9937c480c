package axle_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// fuzzModules all take and give f32[4] arrays, so any buffer can be any
// argument. Their results alias a parameter, a constant, each other, or
// are computed (in place over a donated argument on the cpu backend).
var fuzzModules = []string{
	`HloModule add
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] add(a, b)
}`,
	`HloModule id
ENTRY main {
  ROOT p = f32[4] parameter(0)
}`,
	`HloModule k
ENTRY main {
  p = f32[4] parameter(0)
  ROOT k = f32[4] constant({1, 2, 3, 4})
}`,
	`HloModule tuple
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  n = f32[4] negate(b)
  k = f32[4] constant({-1, 0, 1, 2})
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(a, n, k, a)
}`,
	`HloModule neg
ENTRY main {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}`,
}

var parsedFuzzModules = sync.OnceValues(func() ([]*hlo.Module, error) {
	var ms []*hlo.Module
	for _, text := range fuzzModules {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
})

// FuzzRuntime decodes its input to operations on a few buffers and
// executables, spread over 2-4 goroutines, on one of three engines, and
// checks them against a model of who owns what: every result has the
// evaluator's values, and an operation fails only with the sentinel of
// something that may have happened to its buffer or executable (its
// release, donation or close having begun), and must fail once that has
// finished. Run it with -race.
func FuzzRuntime(f *testing.F) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 43))
		data := make([]byte, 40+16*seed)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mods, err := parsedFuzzModules()
		if err != nil {
			t.Fatal(err)
		}
		in := &fuzzInput{data: data}
		w := newWorld(t, in.next(), in.next(), mods)
		goroutines := 2 + int(in.next()%3)
		plans := make([][]fuzzOp, goroutines)
		for n := 0; n < 48 && in.more(); n++ {
			g := int(in.next()) % goroutines
			plans[g] = append(plans[g], fuzzOp{kind: in.next() % opKinds, a: in.next(), b: in.next(), c: in.next()})
		}
		var wg sync.WaitGroup
		for _, plan := range plans {
			wg.Go(func() {
				for _, op := range plan {
					for range 1 + op.b>>5 { // repeated, to overlap other goroutines' ops
						w.do(op)
					}
				}
			})
		}
		// Another user of the client's host storage: a buffer released
		// too early shows its values.
		var stop atomic.Bool
		var churn sync.WaitGroup
		churn.Go(func() {
			for !stop.Load() {
				if b, err := axle.BufferFromSlice(w.c, []float32{-99, -99, -99, -99}); err == nil {
					b.Release()
				}
				runtime.Gosched()
			}
		})
		wg.Wait()
		stop.Store(true)
		churn.Wait()
		w.closeClient()
	})
}

type fuzzInput struct {
	data []byte
	pos  int
}

func (in *fuzzInput) more() bool { return in.pos < len(in.data) }

func (in *fuzzInput) next() byte {
	if in.pos >= len(in.data) {
		return 0
	}
	in.pos++
	return in.data[in.pos-1]
}

type fuzzOp struct{ kind, a, b, c byte }

const (
	opNewBuffer = iota
	opExecute
	opDonate
	opCancelled
	opSoonCancelled
	opRead
	opRelease
	opClose
	opRejected
	opKinds
)

// slot is a buffer with what the model knows of it: its values, whether
// its release has begun (set before the call) or finished (after it
// returned), how many calls donating it are running, and whether one of
// them may have taken it (set before that call counts itself out) or
// surely did.
type slot struct {
	buf                   *axle.Buffer
	want                  []float32
	releasing, released   atomic.Bool
	donors                atomic.Int32
	mayBeDonated, donated atomic.Bool
}

// ended reports whether the buffer's life surely ended.
func (s *slot) ended() bool { return s.released.Load() || s.donated.Load() }

// exe is an executable with its close begun and finished.
type exe struct {
	x               *axle.Executable
	closing, closed atomic.Bool
}

type world struct {
	t     *testing.T
	c     *axle.Client
	runs  []int // per module: CompileOptions.ExpectedRuns
	mods  []*hlo.Module
	exes  []atomic.Pointer[exe]
	slots [6]atomic.Pointer[slot]
	dead  *axle.Buffer // released: a call passing it is rejected
}

// newWorld makes a client of the interp backend (backend%3 == 0) or the
// cpu backend, where module i runs on the evaluator when bit i of
// evaluated is set (the cost model's choice for one expected run), else
// compiled: results then pass between the two engines.
func newWorld(t *testing.T, backend, evaluated byte, mods []*hlo.Module) *world {
	name := "cpu"
	if backend%3 == 0 {
		name = "interp"
	}
	c, err := axle.NewClient(axle.ClientOptions{Backend: name})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, c: c, runs: make([]int, len(mods)), mods: mods, exes: make([]atomic.Pointer[exe], len(mods))}
	for i := range mods {
		w.runs[i] = int(evaluated>>i) & 1
	}
	for i := range mods {
		x, err := w.compile(i)
		if err != nil {
			t.Fatal(err)
		}
		w.exes[i].Store(&exe{x: x})
	}
	for i := range w.slots {
		w.slots[i].Store(w.newSlot([]float32{float32(i), 1, -2, 3}))
	}
	w.dead = w.newSlot(make([]float32, 4)).buf
	w.dead.Release()
	return w
}

func (w *world) compile(i int) (*axle.Executable, error) {
	return w.c.Compile(w.mods[i], axle.CompileOptions{ExpectedRuns: w.runs[i]})
}

func (w *world) newSlot(vals []float32) *slot {
	b, err := axle.BufferFromSlice(w.c, vals)
	if err != nil {
		w.t.Error(err)
	}
	return &slot{buf: b, want: vals}
}

func (w *world) do(op fuzzOp) {
	s := w.slots[int(op.a)%len(w.slots)].Load()
	switch op.kind {
	case opNewBuffer:
		vals := []float32{float32(op.b%16) - 8, float32(op.c%16) - 8, float32(op.b >> 4), -float32(op.c >> 4)}
		w.slots[int(op.a)%len(w.slots)].Store(w.newSlot(vals))
	case opExecute, opDonate, opCancelled, opSoonCancelled:
		w.execute(op)
	case opRead:
		ended := s.ended()
		v, err := axle.ToSlice[float32](s.buf)
		switch {
		case err != nil:
			w.checkSentinel(s, err, "reading")
		case ended:
			w.t.Errorf("reading a buffer whose life had ended gave %v", v)
		case !slices.Equal(v, s.want):
			w.t.Errorf("reading: got %v, want %v", v, s.want)
		}
	case opRelease:
		s.releasing.Store(true)
		s.buf.Release()
		s.released.Store(true)
	case opClose:
		w.closeExe(int(op.b) % len(w.mods))
	case opRejected:
		w.rejected(s)
	}
}

// rejected makes calls that donate s and a released buffer beside it:
// each is rejected and must change nothing others can see (a read
// of s in another goroutine never fails with ErrDonated because of it).
func (w *world) rejected(s *slot) {
	e := w.exes[0].Load() // add: two parameters
	for range 16 {
		_, err := e.x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0, 1}}, s.buf, w.dead)
		var ae *axle.ArgumentError
		switch {
		case err == nil:
			w.t.Error("a call with a released argument succeeded")
		case errors.Is(err, axle.ErrClosed) && e.closing.Load():
		case errors.As(err, &ae) && ae.Index == 1 && errors.Is(err, axle.ErrReleased):
		case errors.As(err, &ae) && ae.Index == 0 && errors.Is(err, axle.ErrInUse):
		case errors.As(err, &ae) && ae.Index == 0:
			w.checkSentinel(s, err, "rejected donation")
		default:
			w.t.Errorf("rejected donation: %v", err)
		}
	}
}

// checkSentinel checks that err is the sentinel of something that may
// have happened to s.
func (w *world) checkSentinel(s *slot, err error, what string) {
	switch {
	case errors.Is(err, axle.ErrReleased) && s.releasing.Load():
	case errors.Is(err, axle.ErrDonated) && (s.donors.Load() > 0 || s.mayBeDonated.Load()):
	default:
		w.t.Errorf("%s: unexpected error %v (release begun %v, donations running %d, maybe donated %v)",
			what, err, s.releasing.Load(), s.donors.Load(), s.mayBeDonated.Load())
	}
}

// execute runs module b%n on slots picked by c, donating them for
// opDonate and opSoonCancelled when c's high bit says so.
func (w *world) execute(op fuzzOp) {
	mi := int(op.b) % len(w.mods)
	e := w.exes[mi].Load()
	nparams := len(w.mods[mi].Entry.Params)
	args := make([]*slot, nparams)
	for i := range args {
		args[i] = w.slots[(int(op.a)+i*int(op.c|1))%len(w.slots)].Load()
	}
	donate := op.kind == opDonate || op.kind == opSoonCancelled && op.c&0x80 != 0
	var opts axle.ExecuteOptions
	if donate {
		opts.Donate = []int{0}
		args[0].donors.Add(1)
	}
	// A release, donation or close that finished before the call makes
	// its failure certain.
	mustFail := e.closed.Load()
	for _, a := range args {
		mustFail = mustFail || a.ended()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch op.kind {
	case opCancelled:
		cancel()
	case opSoonCancelled:
		ctx, cancel = context.WithTimeout(ctx, time.Duration(op.c&0x7f)*time.Microsecond)
		defer cancel()
	}
	bufs := make([]*axle.Buffer, nparams)
	for i, a := range args {
		bufs[i] = a.buf
	}
	if op.c&0x40 != 0 && !donate { // released while the call runs
		args[0].releasing.Store(true)
		go args[0].buf.Release()
	}
	outs, err := e.x.ExecuteContext(ctx, opts, bufs...)
	if donate {
		uncertain := op.kind == opSoonCancelled && errors.Is(err, context.DeadlineExceeded)
		if err == nil || uncertain {
			args[0].mayBeDonated.Store(true)
		}
		if err == nil {
			args[0].donated.Store(true)
		}
		args[0].donors.Add(-1)
	}
	what := fmt.Sprintf("%s(%d args, donate %v, op %d)", w.mods[mi].Name, nparams, donate, op.kind)
	if err != nil {
		w.checkExecError(e, args, donate, op.kind, err, what)
		return
	}
	if mustFail {
		w.t.Errorf("%s: succeeded on an argument already released or donated, or a closed executable", what)
	}
	if op.kind == opCancelled {
		w.t.Errorf("%s: ran under a cancelled context", what)
	}
	w.checkResults(mi, args, outs, what, op.a)
}

func (w *world) checkExecError(e *exe, args []*slot, donate bool, kind byte, err error, what string) {
	switch {
	case errors.Is(err, axle.ErrClosed) && e.closing.Load():
		return
	case kind == opCancelled && errors.Is(err, context.Canceled):
		if donate {
			w.t.Errorf("%s: a cancelled call donated", what)
		}
		return
	case kind == opSoonCancelled && errors.Is(err, context.DeadlineExceeded):
		return // a donated argument may or may not have been taken
	case donate && errors.Is(err, axle.ErrInUse):
		return // another call held or reserved it
	}
	var ae *axle.ArgumentError
	if !errors.As(err, &ae) || ae.Index >= len(args) {
		w.t.Errorf("%s: %v", what, err)
		return
	}
	w.checkSentinel(args[ae.Index], err, what)
}

// checkResults compares outs with the evaluator's result on the
// arguments' values, and keeps them as slots.
func (w *world) checkResults(mi int, args []*slot, outs []*axle.Buffer, what string, at byte) {
	lits := make([]*hlo.Literal, len(args))
	for i, a := range args {
		lits[i], _ = hlo.LiteralFromSlice(slices.Clone(a.want))
	}
	want, err := eval.Run(w.mods[mi], lits...)
	if err != nil {
		w.t.Error(err)
		return
	}
	elems := []*hlo.Literal{want}
	if want.Shape().IsTuple() {
		elems = want.Elements()
	}
	if len(outs) != len(elems) {
		w.t.Errorf("%s: %d results, want %d", what, len(outs), len(elems))
		return
	}
	for i, o := range outs {
		wv, _ := hlo.LiteralToSlice[float32](elems[i])
		got, err := axle.ToSlice[float32](o)
		if err != nil || !slices.Equal(got, wv) {
			w.t.Errorf("%s: result %d is %v (%v), want %v", what, i, got, err, wv)
		}
		w.slots[(int(at)+i)%len(w.slots)].Store(&slot{buf: o, want: wv})
	}
}

// closeExe closes module i's executable and compiles the module again,
// which must give a live executable, not the closed one.
func (w *world) closeExe(i int) {
	e := w.exes[i].Load()
	e.closing.Store(true)
	if err := e.x.Close(); err != nil {
		w.t.Errorf("closing: %v", err)
	}
	e.closed.Store(true)
	x, err := w.compile(i)
	if err != nil {
		w.t.Error(err)
		return
	}
	if x == e.x {
		w.t.Error("compiling after Close gave the closed executable")
	}
	w.exes[i].CompareAndSwap(e, &exe{x: x})
}

// closeClient ends the input: after Client.Close every use fails with
// ErrClosed.
func (w *world) closeClient() {
	if err := w.c.Close(); err != nil {
		w.t.Fatal(err)
	}
	x := w.exes[0].Load().x
	s := w.slots[0].Load()
	if _, err := x.Execute(s.buf, s.buf); !errors.Is(err, axle.ErrClosed) {
		w.t.Errorf("executing on a closed client: %v", err)
	}
	if _, err := axle.BufferFromSlice(w.c, []float32{1}); !errors.Is(err, axle.ErrClosed) {
		w.t.Errorf("a buffer of a closed client: %v", err)
	}
}
