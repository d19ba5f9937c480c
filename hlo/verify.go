package hlo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// VerifyOptions select among XLA's HloVerifier options. The zero value is
// what XLA's tests use (ParseAndReturnVerifiedModule): layouts are ignored
// and floating-point precisions may mix.
type VerifyOptions struct {
	// NoMixedPrecision is XLA's allow_mixed_precision=false: floating-point
	// operands of one instruction must share a precision, results must
	// have exactly the inferred element type, and reductions must take
	// their operands' types.
	NoMixedPrecision bool
	// AllowUnboundedDynamism accepts shapes with unbounded dimensions
	// (`?`), which XLA's verifier rejects unless told otherwise.
	AllowUnboundedDynamism bool
}

// Verify checks the invariants XLA's HloVerifier checks: the structure of
// the module (unique names, parameter numbering, roots, operands in the
// same computation, no cycles), every instruction's shape against the
// shape inferred from its operands and attributes, the signatures of called
// computations, async and collective invariants, and the entry computation
// layout. The error names the computation and instruction of the first
// problem (and lists up to maxProblems).
func Verify(m *Module) error { return VerifyWithOptions(m, VerifyOptions{}) }

// VerifyWithOptions is Verify with options.
func VerifyWithOptions(m *Module, opts VerifyOptions) error {
	v := &verifier{m: m, opts: opts}
	v.run()
	if len(v.problems) == 0 {
		return nil
	}
	return &VerifyError{Problems: v.problems}
}

// maxProblems bounds how many problems one verification reports: past the
// first few, problems are usually consequences of the first.
const maxProblems = 20

// VerifyError lists the problems found in a module, in the order found.
type VerifyError struct {
	Problems []error
}

func (e *VerifyError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Error()
	}
	var b strings.Builder
	b.WriteString(e.Problems[0].Error())
	fmt.Fprintf(&b, " (and %d more problems:", len(e.Problems)-1)
	for _, p := range e.Problems[1:] {
		b.WriteString("\n\t")
		b.WriteString(p.Error())
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap gives errors.Is and errors.As every problem.
func (e *VerifyError) Unwrap() []error { return e.Problems }

type verifier struct {
	m        *Module
	opts     VerifyOptions
	problems []error
	comps    map[*Computation]bool
	// used holds the instructions something uses; users lists the users
	// of those whose users are checked (asyncUsers), each user once.
	used  map[*Instruction]bool
	users map[*Instruction][]*Instruction
	// fusionOf and asyncOf map fused and async-wrapped computations to a
	// caller.
	fusionOf map[*Computation]*Instruction
	asyncOf  map[*Computation]*Instruction
}

func (v *verifier) add(err error) {
	if len(v.problems) < maxProblems {
		v.problems = append(v.problems, err)
	}
}

func (v *verifier) moduleErr(format string, args ...any) {
	name := ""
	if v.m != nil {
		name = v.m.Name
	}
	v.add(fmt.Errorf("module %q: %s", name, fmt.Sprintf(format, args...)))
}

func (v *verifier) compErr(c *Computation, format string, args ...any) {
	v.add(fmt.Errorf("computation %q: %s", c.Name, fmt.Sprintf(format, args...)))
}

func (v *verifier) instrErr(c *Computation, in *Instruction, format string, args ...any) {
	v.add(&InstructionError{Computation: c.Name, Instruction: in.Name, Err: fmt.Errorf(format, args...)})
}

// InstructionError is a verification problem of one instruction.
type InstructionError struct {
	Computation, Instruction string
	Err                      error
}

func (e *InstructionError) Error() string {
	return fmt.Sprintf("computation %q, instruction %q: %v", e.Computation, e.Instruction, e.Err)
}

func (e *InstructionError) Unwrap() error { return e.Err }

func (v *verifier) run() {
	m := v.m
	if m == nil {
		v.add(errors.New("nil module"))
		return
	}
	if m.Name == "" {
		v.moduleErr("the module has no name")
	}
	v.comps = map[*Computation]bool{}
	names := map[string]bool{}
	for _, c := range m.Computations {
		if c == nil {
			v.moduleErr("nil computation")
			return
		}
		if names[c.Name] {
			v.moduleErr("computation name %q is not unique", c.Name)
		}
		names[c.Name] = true
		v.comps[c] = true
		if c.Parent != m {
			v.compErr(c, "the computation's parent is not the module")
		}
	}
	if m.Entry == nil {
		v.moduleErr("the module has no entry computation")
		return
	}
	if !v.comps[m.Entry] {
		v.moduleErr("the entry computation %q is not one of the module's computations", m.Entry.Name)
		return
	}
	n := 0
	for _, c := range m.Computations {
		n += len(c.Instructions)
	}
	v.used, v.users = make(map[*Instruction]bool, n), map[*Instruction][]*Instruction{}
	for _, c := range m.Computations {
		v.checkStructure(c)
	}
	v.checkCallGraph()
	if len(v.problems) > 0 {
		// Shape checks assume a well-formed graph; problems found so far
		// would only be repeated as shape errors.
		return
	}
	v.checkNames()
	v.findCallers()
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			v.checkInstruction(c, in)
		}
		v.checkCalledComputation(c)
	}
	v.checkEntryLayout()
	v.checkAllReduceLayouts()
}

// checkNames checks that instruction names are unique within the module.
func (v *verifier) checkNames() {
	seen := map[string]*Computation{}
	for _, c := range v.m.Computations {
		for _, in := range c.Instructions {
			if prev, dup := seen[in.Name]; dup {
				v.instrErr(c, in, "the instruction name is not unique within the module; computation %q has an instruction of the same name", prev.Name)
				continue
			}
			seen[in.Name] = c
		}
	}
}

// checkStructure checks one computation's graph: parents, parameters,
// root, operands and control predecessors inside the computation, and no
// cycles. It records users.
func (v *verifier) checkStructure(c *Computation) {
	if len(c.Instructions) == 0 {
		v.compErr(c, "the computation has no instructions")
		return
	}
	member := make(map[*Instruction]bool, len(c.Instructions))
	for _, in := range c.Instructions {
		if in == nil {
			v.compErr(c, "nil instruction")
			return
		}
		member[in] = true
	}
	if c.Root == nil {
		v.compErr(c, "the computation has no root")
	} else if !member[c.Root] {
		v.compErr(c, "the root %q is not an instruction of the computation", c.Root.Name)
	}
	var params []*Instruction
	for _, in := range c.Instructions {
		if in.Parent != c {
			v.instrErr(c, in, "the instruction's parent is not the computation that holds it")
		}
		if err := validShape(in.Shape); err != nil {
			v.instrErr(c, in, "invalid shape %s: %v", in.Shape.HumanString(), err)
		}
		if in.Opcode == OpParameter {
			params = append(params, in)
		}
		for i, o := range in.Operands {
			switch {
			case o == nil:
				v.instrErr(c, in, "operand %d is nil", i)
			case !member[o]:
				v.instrErr(c, in, "operand %d (%s) is not in the same computation", i, o.Name)
			default:
				v.addUser(o, in)
			}
		}
		for _, p := range in.ControlPredecessors {
			if p == nil || !member[p] {
				v.instrErr(c, in, "a control predecessor is not in the same computation")
			}
		}
	}
	v.checkParams(c, params)
	v.checkAcyclic(c)
}

// addUser records that user uses o, and user among o's users where
// those are checked (lists of every instruction's users and a set of
// pairs to keep them distinct cost a quarter of verifying a large
// module). A user's operands are recorded together, so a second use by
// the same user is the list's last entry.
func (v *verifier) addUser(o, user *Instruction) {
	v.used[o] = true
	if _, ok := asyncUsers[o.Opcode]; !ok {
		return
	}
	us := v.users[o]
	if len(us) > 0 && us[len(us)-1] == user {
		return
	}
	v.users[o] = append(us, user)
}

// checkParams checks that parameters are numbered 0..n-1, each once, and
// that c.Params lists them by number.
func (v *verifier) checkParams(c *Computation, params []*Instruction) {
	byNumber := make([]*Instruction, len(params))
	ok := true
	for _, p := range params {
		n := p.ParamNumber
		switch {
		case n < 0 || n >= int64(len(params)):
			v.instrErr(c, p, "parameter number %d is out of range: the computation has %d parameters, numbered from 0", n, len(params))
			ok = false
		case byNumber[n] != nil:
			v.instrErr(c, p, "parameter number %d is also used by %q", n, byNumber[n].Name)
			ok = false
		default:
			byNumber[n] = p
		}
	}
	if !ok {
		return
	}
	if len(c.Params) != len(byNumber) {
		v.compErr(c, "Params lists %d parameters, but the computation has %d parameter instructions", len(c.Params), len(byNumber))
		return
	}
	for i, p := range byNumber {
		if c.Params[i] != p {
			v.compErr(c, "Params[%d] is not the parameter numbered %d (%s)", i, i, p.Name)
			return
		}
	}
}

// checkAcyclic reports a cycle through operands or control predecessors.
func (v *verifier) checkAcyclic(c *Computation) {
	const (
		unvisited = iota
		active
		done
	)
	state := make(map[*Instruction]int, len(c.Instructions))
	type frame struct {
		in   *Instruction
		next int
	}
	// pred returns predecessor i of in, operands first: indexing, not
	// building the list per step, keeps the walk linear in the edges
	// (a 40k-operand tuple took 10 s).
	npreds := func(in *Instruction) int { return len(in.Operands) + len(in.ControlPredecessors) }
	pred := func(in *Instruction, i int) *Instruction {
		if i < len(in.Operands) {
			return in.Operands[i]
		}
		return in.ControlPredecessors[i-len(in.Operands)]
	}
	for _, start := range c.Instructions {
		if state[start] != unvisited {
			continue
		}
		stack := []frame{{in: start}}
		state[start] = active
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == npreds(top.in) {
				state[top.in] = done
				stack = stack[:len(stack)-1]
				continue
			}
			p := pred(top.in, top.next)
			top.next++
			if p == nil || p.Parent != c {
				continue
			}
			switch state[p] {
			case active:
				v.instrErr(c, p, "the computation has a cycle through this instruction")
				return
			case unvisited:
				state[p] = active
				stack = append(stack, frame{in: p})
			}
		}
	}
}

// findCallers records which computations are fused or async-wrapped.
func (v *verifier) findCallers() {
	v.fusionOf = map[*Computation]*Instruction{}
	v.asyncOf = map[*Computation]*Instruction{}
	for _, c := range v.m.Computations {
		for _, in := range c.Instructions {
			switch in.Opcode {
			case OpFusion:
				if f := in.Computation("calls"); f != nil {
					v.fusionOf[f] = in
				}
			case OpAsyncStart, OpAsyncUpdate, OpAsyncDone:
				if a := in.Computation("calls"); a != nil {
					v.asyncOf[a] = in
				}
			}
		}
	}
}

// checkEntryLayout checks entry_computation_layout against the entry.
func (v *verifier) checkEntryLayout() {
	m := v.m
	l := m.EntryLayout
	if l == nil {
		return
	}
	e := m.Entry
	if e.Root != nil && !compatibleShapes(e.Root.Shape, l.Result, exactTypes) {
		v.compErr(e, "shape of the root instruction of entry computation (%s) should be compatible to one specified in module's entry computation layout (%s)",
			e.Root.Shape.HumanString(), l.Result.HumanString())
	}
	if len(l.Params) != len(e.Params) {
		v.compErr(e, "number of parameters in entry computation layout (%d) must be same as number of parameters of entry computation (%d)", len(l.Params), len(e.Params))
		return
	}
	for i, p := range e.Params {
		if p != nil && !compatibleShapes(p.Shape, l.Params[i], exactTypes) {
			v.instrErr(e, p, "shape of the entry computation parameter %d is %s should be compatible to the one specified in module's entry computation layout %s",
				i, p.Shape.HumanString(), l.Params[i].HumanString())
		}
	}
}

// checkCallGraph reports a cycle among called computations (a computation
// that calls itself through call, while, conditional, fusion, map, a
// reducer, ...): HLO has no recursion, and evaluating one would never end.
// The walk is iterative and visits each computation once, so deep or
// widely shared call graphs cost time linear in their size.
func (v *verifier) checkCallGraph() {
	const (
		unvisited = iota
		active
		done
	)
	state := make(map[*Computation]int, len(v.m.Computations))
	callees := func(c *Computation) []*Computation {
		var out []*Computation
		for _, in := range c.Instructions {
			if in == nil {
				continue
			}
			for _, cc := range in.CalledComputations() {
				if cc != nil && v.comps[cc] {
					out = append(out, cc)
				}
			}
		}
		return out
	}
	for _, start := range v.m.Computations {
		if state[start] != unvisited {
			continue
		}
		state[start] = active
		stack := []callFrame{{start, callees(start)}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.callee) == 0 {
				state[top.c] = done
				stack = stack[:len(stack)-1]
				continue
			}
			next := top.callee[0]
			top.callee = top.callee[1:]
			switch state[next] {
			case active:
				v.reportCycle(next, stack)
				return
			case unvisited:
				state[next] = active
				stack = append(stack, callFrame{next, callees(next)})
			}
		}
	}
}

// callFrame is a computation on the call-graph walk's stack and the
// callees it has yet to visit.
type callFrame struct {
	c      *Computation
	callee []*Computation
}

// reportCycle names the computations of the cycle that closes at c, the
// path from c down the DFS stack and back to c.
func (v *verifier) reportCycle(c *Computation, stack []callFrame) {
	var names []string
	for i := len(stack) - 1; i >= 0; i-- {
		names = append(names, stack[i].c.Name)
		if stack[i].c == c {
			break
		}
	}
	slices.Reverse(names)
	names = append(names, c.Name)
	v.compErr(c, "the call graph has a cycle: %s (HLO computations cannot be recursive)", strings.Join(names, " -> "))
}
