package eval

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/runctl"
)

// ErrUnimplemented marks an opcode (or an opcode's variant) the evaluator
// does not support yet.
var ErrUnimplemented = errors.New("not implemented in the evaluator")

// handler computes one instruction from its operands' values.
type handler func(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error)

// handlers is the dispatch table, indexed by opcode; each op-family file
// fills its rows in init.
var handlers = make([]handler, hlo.NumOpcodes())

func register(fn handler, ops ...hlo.Opcode) {
	for _, op := range ops {
		if handlers[op] != nil {
			panic(fmt.Sprintf("eval: %s registered twice", op))
		}
		handlers[op] = fn
	}
}

// Evaluator runs computations. Its zero value is ready to use; it is not
// safe for concurrent use (it caches per-computation plans during a Run).
type Evaluator struct {
	// Seed drives rng and the values invented for elided constants.
	Seed uint64
	// ReplicaID and PartitionID are what replica-id and partition-id return.
	ReplicaID, PartitionID uint32
	// Participant, when set, is this device's part in a multi-device
	// launch: collectives exchange values with the other devices through
	// it (package collective).
	Participant *collective.Participant

	plans map[*hlo.Computation]*compPlan
	// rngCalls counts rng evaluations, so repeated ones (a loop body)
	// draw different values yet a run is reproducible from Seed.
	rngCalls uint64
	// rngState is rng-get-and-update-state's counter.
	rngState runctl.RngState

	// Interrupt, when set, is polled before every instruction: once it
	// is true, evaluation stops with ErrInterrupted (a caller's context
	// was cancelled). Nil costs one comparison per instruction.
	Interrupt *atomic.Bool
	// MeasurePeak makes the evaluator track the bytes its live values hold
	// (see PeakBytes).
	MeasurePeak bool
	mem         memTrack
}

// Run evaluates the module's entry computation on args, one per parameter.
func Run(m *hlo.Module, args ...*hlo.Literal) (*hlo.Literal, error) {
	var e Evaluator
	return e.Run(m, args...)
}

// Run evaluates the module's entry computation on args.
func (e *Evaluator) Run(m *hlo.Module, args ...*hlo.Literal) (*hlo.Literal, error) {
	if m.Entry == nil {
		return nil, errors.New("eval: module has no entry computation")
	}
	if err := m.Entry.CheckArguments(args); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	if err := CheckSupported(m); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	e.plans = nil // plans refer to the previous module
	e.mem = memTrack{}
	return e.Computation(m.Entry, args...)
}

// Computation evaluates one computation on its arguments. A panic in an
// instruction's handler comes back as a *PanicError naming it.
func (e *Evaluator) Computation(c *hlo.Computation, args ...*hlo.Literal) (v *hlo.Literal, err error) {
	var cur *hlo.Instruction // for the panic's error
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, newPanicError(c, cur, r)
		}
	}()
	if e.interrupted() { // a loop whose bodies hold nothing but parameters
		return nil, ErrInterrupted
	}
	p := e.plan(c)
	values := make([]*hlo.Literal, len(c.Instructions))
	var frame int64 // bytes this call's values hold (MeasurePeak)
	var ops []*hlo.Literal
	for i, in := range c.Instructions {
		if in.Opcode == hlo.OpParameter {
			if int(in.ParamNumber) >= len(args) {
				return nil, fmt.Errorf("computation %s, instruction %s: parameter %d has no argument", c.Name, in.Name, in.ParamNumber)
			}
			v, err := asParam(in, args[in.ParamNumber])
			if err != nil {
				return nil, fmt.Errorf("computation %s, instruction %s: %w", c.Name, in.Name, err)
			}
			values[i] = v
			continue
		}
		if e.interrupted() {
			return nil, ErrInterrupted
		}
		cur = in
		ops = ops[:0]
		for _, j := range p.operands[i] {
			if j < 0 || values[j] == nil {
				return nil, fmt.Errorf("computation %s, instruction %s: an operand is not computed before its use", c.Name, in.Name)
			}
			ops = append(ops, values[j])
		}
		h := handlers[in.Opcode]
		if h == nil {
			return nil, fmt.Errorf("computation %s, instruction %s: %s: %w", c.Name, in.Name, in.Opcode, ErrUnimplemented)
		}
		testHook(in)
		// Handlers may keep the operand slice; give each its own.
		v, err := h(e, in, append([]*hlo.Literal(nil), ops...))
		if err != nil {
			return nil, fmt.Errorf("computation %s, instruction %s: %w", c.Name, in.Name, err)
		}
		values[i] = v
		if e.MeasurePeak {
			frame += e.mem.add(in, v, ops)
		}
	}
	e.mem.drop(frame)
	if p.root < 0 {
		return nil, fmt.Errorf("computation %s has no root instruction", c.Name)
	}
	return values[p.root], nil
}

// compPlan is a computation resolved to positions: each instruction's
// operands as indices into the instruction list, so evaluating it (once
// per element for reducers and comparators) indexes a slice instead of
// hashing pointers.
type compPlan struct {
	operands [][]int
	root     int
}

// plan returns c's plan, building it on first use. Plans live as long as
// the Evaluator's current Run.
func (e *Evaluator) plan(c *hlo.Computation) *compPlan {
	if p, ok := e.plans[c]; ok {
		return p
	}
	pos := make(map[*hlo.Instruction]int, len(c.Instructions))
	for i, in := range c.Instructions {
		pos[in] = i
	}
	p := &compPlan{operands: make([][]int, len(c.Instructions)), root: -1}
	for i, in := range c.Instructions {
		p.operands[i] = make([]int, len(in.Operands))
		for k, o := range in.Operands {
			j, ok := pos[o]
			if !ok || j >= i {
				j = -1 // reported when evaluated
			}
			p.operands[i][k] = j
		}
	}
	if r, ok := pos[c.Root]; ok {
		p.root = r
	}
	if e.plans == nil {
		e.plans = make(map[*hlo.Computation]*compPlan)
	}
	e.plans[c] = p
	return p
}

// Instruction evaluates one instruction on its operands' values (constant
// folding's entry point). Parameters cannot be evaluated alone.
func (e *Evaluator) Instruction(in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if in.Opcode == hlo.OpParameter {
		return nil, fmt.Errorf("instruction %s: a parameter has no value on its own", in.Name)
	}
	if len(ops) != len(in.Operands) {
		return nil, fmt.Errorf("instruction %s: %d operand values for %d operands", in.Name, len(ops), len(in.Operands))
	}
	h := handlers[in.Opcode]
	if h == nil {
		return nil, fmt.Errorf("instruction %s: %s: %w", in.Name, in.Opcode, ErrUnimplemented)
	}
	e.plans = nil // called computations may belong to any module
	v, err := h(e, in, ops)
	if err != nil {
		return nil, fmt.Errorf("instruction %s: %w", in.Name, err)
	}
	return v, nil
}

// asParam converts a floating-point argument to the precision of the
// parameter that receives it. XLA's verifier lets a reducer or comparator
// work in another precision than its operands (a reduce of f16 data with an
// f32 adder), so the values cross the call as a convert would carry them;
// callers store results back with setFrom, which converts again.
func asParam(p *hlo.Instruction, v *hlo.Literal) (*hlo.Literal, error) {
	want, got := p.Shape.DType, v.DType()
	if want == got || !p.Shape.IsArray() || !v.Shape().IsArray() || !isFloating(want) || !isFloating(got) {
		return v, nil
	}
	return v.Convert(want)
}

func isFloating(t hlo.DType) bool { return t.IsFloat() || t.IsComplex() }
