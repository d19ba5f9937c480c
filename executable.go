package axle

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

// program is what a backend compiles a module to. *cpu.Executable is one.
type program interface {
	// RunChecked runs on arguments the caller has checked against the
	// entry's parameters.
	RunChecked(args []*hlo.Literal, donated []bool) (*hlo.Literal, error)
	// RunOn is RunChecked under a stop flag (cancellation, nil: none;
	// see context.go), as one device of a launch (part nil: a single
	// device).
	RunOn(args []*hlo.Literal, donated []bool, stop *atomic.Bool, part *collective.Participant) (*hlo.Literal, error)
	Recycle(out *hlo.Literal)
	PeakBytes() int64
}

// MemoryStats describes a cpu executable's buffer assignment.
type MemoryStats = cpu.MemoryStats

// Executable is a module compiled for a client. It may run from many
// goroutines at once.
type Executable struct {
	client *Client
	prog   program
	cpu    *cpu.Executable // nil on the interp backend
	module *hlo.Module     // as compiled
	params []hlo.Shape
	names  []string // the parameters' names, for errors
	entry  string
	tuple  bool // the result is a tuple, untupled into one buffer per element
	// copyResult: the program is the evaluator, whose results may be the
	// module's constants or parts of the arguments; they are copied so
	// that the caller owns them.
	copyResult bool
	// contained: the program is the cpu backend's compiled code, whose
	// executions turn every panic into an error themselves (naming the
	// step), so runProgram sets up no recover of its own (a defer and a
	// recover per call, a scalar call's hundredth).
	contained bool
	closed    atomic.Bool // see lifecycle.go
	cached    cacheKey    // the compile cache's key for it
	need      int64       // bytes an execution reserves under the memory limit (memory.go)
	// assign places a multi-device module's programs (nil: one device);
	// local are the devices this process runs, by id (devices.go).
	assign  *collective.Assignment
	local   []*Device
	program uint64 // the module's fingerprint, in exchanges' keys
}

// ExecuteOptions modify one execution.
type ExecuteOptions struct {
	// Donate lists arguments the caller gives up: the execution may reuse
	// their storage for its outputs, and the Buffers are unusable after,
	// even if the execution fails (it may have written over them). A
	// rejected call (bad arguments, or an argument in use) takes nothing
	// and changes nothing other goroutines can observe.
	Donate []int
}

// Execute runs the executable on args, one per entry parameter, and
// returns its result: one buffer per element of a tuple result (as PJRT
// untuples), else one buffer. The caller owns the results; Release gives
// their storage back for reuse. On a closed executable or client it fails
// with ErrClosed.
func (x *Executable) Execute(args ...*Buffer) ([]*Buffer, error) {
	return x.ExecuteWith(ExecuteOptions{}, args...)
}

// ExecuteWith is Execute with options.
func (x *Executable) ExecuteWith(opts ExecuteOptions, args ...*Buffer) ([]*Buffer, error) {
	return x.execute(nil, opts, args, nil)
}

// execute is ExecuteWith under a stop flag (ExecuteContext's; nil: none).
func (x *Executable) execute(stop *atomic.Bool, opts ExecuteOptions, args []*Buffer, part *collective.Participant) ([]*Buffer, error) {
	if err := x.enter(); err != nil {
		return nil, err
	}
	defer x.leave()
	if part == nil && x.assign != nil {
		return nil, x.needsDevices()
	}
	if len(args) != len(x.params) {
		return nil, x.countError(len(args))
	}
	donated, err := x.donation(opts.Donate)
	if err != nil {
		return nil, err
	}
	one, lits := x.newCall(len(args))
	if err := x.acquire(args, donated, lits); err != nil {
		return nil, err
	}
	if donated != nil {
		endDonated(args, donated) // their storage is the execution's now
	}
	out, err := x.run(lits, donated, stop, part)
	if err != nil {
		unholdKept(args, donated)
		return nil, fmt.Errorf("axle: executing %s: %w", x.entry, err)
	}
	bufs := x.wrap(one, out, lits, donated)
	if donated != nil {
		recycleUntaken(args, lits, donated, bufs)
	}
	// Only now, with every result in storage of its own, may a concurrent
	// Release recycle a kept argument's storage.
	unholdKept(args, donated)
	clear(lits) // the result must not keep the arguments alive
	return bufs, nil
}

// runProgram runs the program, turning a panic that escaped the backend's
// own containment (a bug outside any kernel) into an error, and copies an
// evaluator's result, which may share storage with the module's constants
// or the arguments.
func (x *Executable) runProgram(args []*hlo.Literal, donated []bool, stop *atomic.Bool, part *collective.Participant) (*hlo.Literal, error) {
	if x.contained {
		return x.cpu.RunOn(args, donated, stop, part)
	}
	return x.runRecovered(args, donated, stop, part)
}

// runRecovered is runProgram with the recover a contained program does
// not need.
func (x *Executable) runRecovered(args []*hlo.Literal, donated []bool, stop *atomic.Bool, part *collective.Participant) (out *hlo.Literal, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	out, err = x.prog.RunOn(args, donated, stop, part)
	if err == nil && x.copyResult {
		out = out.Clone()
	}
	return out, err
}

func unholdKept(args []*Buffer, donated []bool) {
	for i, b := range args {
		if !isDonated(donated, i) {
			b.unhold()
		}
	}
}

func isDonated(donated []bool, i int) bool { return donated != nil && donated[i] }

// call is the one allocation of a common execution: the argument list
// handed to the backend and the buffer of an array result.
type call struct {
	buf  Buffer
	list [1]*Buffer
	args [4]*hlo.Literal
}

// newCall returns the execution's call (nil for tuple results) and its
// argument list.
func (x *Executable) newCall(n int) (*call, []*hlo.Literal) {
	if x.tuple {
		return nil, make([]*hlo.Literal, n)
	}
	one := new(call)
	if n <= len(one.args) {
		return one, one.args[:n]
	}
	return one, make([]*hlo.Literal, n)
}

// ExecuteLiterals runs the executable on literals (not copied, not
// modified) and returns its untupled result as literals the caller owns.
func (x *Executable) ExecuteLiterals(args ...*hlo.Literal) ([]*hlo.Literal, error) {
	if err := x.usable(); err != nil {
		return nil, err
	}
	if len(args) != len(x.params) {
		return nil, x.countError(len(args))
	}
	for i, l := range args {
		if l == nil {
			return nil, x.argError(i, "is nil")
		}
		if err := x.checkShape(i, l.Shape()); err != nil {
			return nil, err
		}
		if err := checkLiteral(l); err != nil {
			return nil, &ArgumentError{Index: i, Parameter: x.names[i], Err: err}
		}
	}
	if err := x.enter(); err != nil {
		return nil, err
	}
	if x.assign != nil {
		return nil, x.needsDevices()
	}
	out, err := x.run(args, nil, nil, nil)
	x.leave()
	if err != nil {
		return nil, fmt.Errorf("axle: executing %s: %w", x.entry, err)
	}
	elems := x.untuple(out)
	for i, e := range elems {
		if aliased(e, elems[:i], args, nil) {
			elems[i] = e.Clone()
		}
	}
	return elems, nil
}

var errNoExecutable = errors.New("axle: nil or zero Executable (executables come from Compile)")

// ArgumentError is an argument that cannot be used because of its
// buffer's state (ErrReleased, ErrDonated, ErrInUse) or its values
// (an elided literal).
type ArgumentError struct {
	Index     int
	Parameter string
	Err       error
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("axle: argument %d (parameter %s): %s", e.Index, e.Parameter, strings.TrimPrefix(e.Err.Error(), "axle: "))
}

func (e *ArgumentError) Unwrap() error { return e.Err }

// acquire checks each argument and holds it (or, donated, takes it) for
// the execution, filling lits. A rejected call changes nothing anyone
// can see: it holds the kept arguments first (a hold may wait for
// another call's pending donation, which itself never waits, so two
// calls never wait on each other), then reserves the donated ones, and
// commits the donations only when every argument is secured.
func (x *Executable) acquire(args []*Buffer, donated []bool, lits []*hlo.Literal) error {
	for i, b := range args {
		if err := x.checkBuffer(i, b); err != nil {
			return err
		}
	}
	for i, b := range args {
		if isDonated(donated, i) {
			continue
		}
		if b.tryHold() {
			lits[i] = b.lit
			continue
		}
		if err := b.hold(); err != nil {
			x.undo(args[:i], donated, 0)
			return &ArgumentError{Index: i, Parameter: x.names[i], Err: err}
		}
		lits[i] = b.lit
	}
	if donated == nil {
		return nil
	}
	for i, b := range args {
		if !isDonated(donated, i) {
			continue
		}
		if err := b.reserve(); err != nil {
			x.undo(args, donated, i)
			return &ArgumentError{Index: i, Parameter: x.names[i], Err: err}
		}
		lits[i] = b.lit
	}
	for i, b := range args {
		if isDonated(donated, i) {
			b.commit()
		}
	}
	return nil
}

// undo gives back what acquire took before failing: the holds on
// args' kept buffers, and the reservations of the donated ones before
// index reserved.
func (x *Executable) undo(args []*Buffer, donated []bool, reserved int) {
	for i, b := range args {
		switch {
		case !isDonated(donated, i):
			b.unhold()
		case i < reserved:
			b.cancel()
		}
	}
}

func (x *Executable) checkBuffer(i int, b *Buffer) error {
	if b == nil {
		return x.argError(i, "is nil")
	}
	if b.lit == nil {
		return x.argError(i, "is a zero Buffer")
	}
	if b.client != x.client {
		return x.argError(i, "is a buffer of another client")
	}
	if b.lit.HasCompatibleShape(&x.params[i]) {
		return nil
	}
	return x.checkShape(i, b.lit.Shape())
}

func (x *Executable) checkShape(i int, s hlo.Shape) error {
	if s.Compatible(x.params[i]) {
		return nil
	}
	return fmt.Errorf("axle: argument %d (parameter %s): %s does not match the parameter's %s",
		i, x.names[i], s.HumanString(), x.params[i].HumanString())
}

func (x *Executable) argError(i int, what string) error {
	return fmt.Errorf("axle: argument %d (parameter %s) %s", i, x.names[i], what)
}

// countError says how many arguments the entry takes, naming them.
func (x *Executable) countError(got int) error {
	plural := "s"
	if len(x.params) == 1 {
		plural = ""
	}
	return fmt.Errorf("axle: %s expects %d argument%s (%s), got %d",
		x.entry, len(x.params), plural, strings.Join(x.names, ", "), got)
}

// donation turns the donated argument indices into Run's flags (nil when
// nothing is donated, the common case, which then allocates nothing).
func (x *Executable) donation(idx []int) ([]bool, error) {
	if len(idx) == 0 {
		return nil, nil
	}
	donated := make([]bool, len(x.params))
	for _, i := range idx {
		if i < 0 || i >= len(x.params) {
			return nil, fmt.Errorf("axle: donated argument %d out of range: %s takes %d arguments", i, x.entry, len(x.params))
		}
		donated[i] = true
	}
	return donated, nil
}

// wrap untuples the result into buffers: the call's for an array, one
// slab for a tuple.
func (x *Executable) wrap(one *call, out *hlo.Literal, lits []*hlo.Literal, donated []bool) []*Buffer {
	if !x.tuple {
		x.own(&one.buf, out, nil, lits, donated)
		one.list[0] = &one.buf
		return one.list[:]
	}
	elems := out.Elements()
	bufs := make([]Buffer, len(elems))
	list := make([]*Buffer, len(elems))
	for i, e := range elems {
		x.own(&bufs[i], e, elems[:i], lits, donated)
		list[i] = &bufs[i]
	}
	return list
}

// own makes b hold the result e. An e that shares storage with an
// argument or an earlier result is copied, so that releasing one buffer
// never recycles storage another still shows.
func (x *Executable) own(b *Buffer, e *hlo.Literal, earlier, lits []*hlo.Literal, donated []bool) {
	b.client, b.lit, b.pool = x.client, e, x
	switch {
	case !e.Shape().IsArray():
		b.pool = nil // nested tuples: too rare to check their leaves
	case aliased(e, earlier, lits, donated):
		b.lit, b.pool = e.Clone(), nil
	}
	if x.need >= minAccounted || b.pool == nil { // else no output is counted
		x.client.mem.output(b)
	}
}

func (x *Executable) untuple(out *hlo.Literal) []*hlo.Literal {
	if x.tuple {
		return out.Elements()
	}
	return []*hlo.Literal{out}
}

// aliased reports whether the array e shares storage with an earlier
// result or a kept (not donated) argument.
func aliased(e *hlo.Literal, earlier, args []*hlo.Literal, donated []bool) bool {
	p := storage(e)
	if p == nil {
		return false
	}
	for _, o := range earlier {
		if storage(o) == p {
			return true
		}
	}
	for i, a := range args {
		if (donated == nil || !donated[i]) && storage(a) == p {
			return true
		}
	}
	return false
}

// recycleUntaken gives back the storage of donated arguments that no
// result took over: a training step's optimizer state that could not be
// updated in place would otherwise become garbage each step while the
// next step allocates its like anew.
func recycleUntaken(args []*Buffer, lits []*hlo.Literal, donated []bool, results []*Buffer) {
	for i, d := range donated {
		p := storage(lits[i])
		if !d || p == nil {
			continue
		}
		taken := false
		for _, r := range results {
			taken = taken || storage(r.lit) == p
		}
		if !taken {
			args[i].recycle()
		}
	}
}

// storage is the address of an array literal's first element (nil for
// tuples and empty arrays).
func storage(l *hlo.Literal) unsafe.Pointer {
	if l.Len() == 0 {
		return nil
	}
	switch d := l.Data().(type) {
	case []bool:
		return unsafe.Pointer(&d[0])
	case []int8:
		return unsafe.Pointer(&d[0])
	case []int16:
		return unsafe.Pointer(&d[0])
	case []int32:
		return unsafe.Pointer(&d[0])
	case []int64:
		return unsafe.Pointer(&d[0])
	case []uint8:
		return unsafe.Pointer(&d[0])
	case []uint16:
		return unsafe.Pointer(&d[0])
	case []uint32:
		return unsafe.Pointer(&d[0])
	case []uint64:
		return unsafe.Pointer(&d[0])
	case []float32:
		return unsafe.Pointer(&d[0])
	case []float64:
		return unsafe.Pointer(&d[0])
	case []complex64:
		return unsafe.Pointer(&d[0])
	case []complex128:
		return unsafe.Pointer(&d[0])
	}
	return nil
}

// Module is the module as compiled: optimized and fused on the cpu
// backend, as given on the interp backend. Callers must not modify it.
func (x *Executable) Module() *hlo.Module {
	if x == nil {
		return nil
	}
	return x.module
}

// Client is the client the executable was compiled for.
func (x *Executable) Client() *Client {
	if x == nil {
		return nil
	}
	return x.client
}

// ParameterShapes are the shapes the arguments must have. Callers must not
// modify them.
func (x *Executable) ParameterShapes() []hlo.Shape {
	if x == nil {
		return nil
	}
	return x.params
}

// Engine says how the executable runs: "compiled", or "evaluator" with
// the cpu backend's cost-model reason (always "evaluator" on interp).
func (x *Executable) Engine() string {
	switch {
	case x == nil || x.prog == nil:
		return ""
	case x.cpu == nil:
		return "evaluator"
	}
	return x.cpu.Engine
}

// Lowering counts how the cpu backend lowered the instructions ("gemm",
// "tile-fusion", "evaluator", ...); nil on the interp backend.
func (x *Executable) Lowering() map[string]int {
	if x == nil || x.cpu == nil {
		return nil
	}
	return x.cpu.Lowering
}

// Fallbacks lists, as "opcode shape", the instructions the cpu backend
// left to the evaluator because no kernel takes them (including those
// of the computations the module calls); nil on the interp backend and
// when the cost model ran the whole module on the evaluator.
func (x *Executable) Fallbacks() []string {
	if x == nil || x.cpu == nil {
		return nil
	}
	return x.cpu.Fallbacks
}

// Memory reports the cpu backend's buffer assignment (zero on interp).
func (x *Executable) Memory() MemoryStats {
	if x == nil || x.cpu == nil {
		return MemoryStats{}
	}
	return x.cpu.Memory()
}

// Profile is the time spent in each kernel over all executions so far,
// when compiled with CompileOptions.Profile on the cpu backend.
func (x *Executable) Profile() []cpu.KernelTime {
	if x == nil || x.cpu == nil {
		return nil
	}
	return x.cpu.Profile()
}

// ProfileTable prints the n most expensive kernels of Profile (all of them
// where n is zero or less).
func (x *Executable) ProfileTable(n int) string {
	if x == nil || x.cpu == nil {
		return ""
	}
	return x.cpu.ProfileTable(n)
}
