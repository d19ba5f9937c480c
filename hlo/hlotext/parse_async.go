package hlotext

import (
	"slices"
	"strconv"

	"github.com/axle-ml/axle/hlo"
)

// expandAsyncSugar turns `x = shape custom-call-start(a, b), attrs` into an
// async-start calling a new computation that wraps one custom-call, the
// form XLA's parser builds. -update and -done forms reuse the computation
// of the async op they take.
func (p *parser) expandAsyncSugar(in *hlo.Instruction, wrappedName string, pos int) error {
	wrappedOp, _ := hlo.OpcodeByName(wrappedName)
	if in.Opcode != hlo.OpAsyncStart {
		if len(in.Operands) != 1 || !in.Operands[0].Opcode.Has(hlo.Async) || in.Operands[0].Opcode == hlo.OpAsyncDone {
			return p.errorAt(pos, "AsyncUpdate and AsyncDone expect a single async op as their operand.")
		}
		start := in.Operands[0]
		wrapped := start.Computation("calls")
		if wrapped == nil || wrapped.Root == nil {
			return p.errorAt(pos, "AsyncUpdate and AsyncDone expect a single async op as their operand.")
		}
		if wrapped.Root.Opcode != wrappedOp {
			return p.errorAt(pos, "Expect async wrapped opcode to be %s, but got %s", wrapped.Root.Opcode, wrappedOp)
		}
		return nil
	}
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 || !in.Shape.Tuple[0].IsTuple() {
		return p.errorAt(pos, "AsyncStart expects the op shape to be in the form of ((async-operands), async-outputs, state).")
	}
	comp := &hlo.Computation{Name: p.uniqueCompName("async_wrapped"), Parent: p.mod}
	wrapped := &hlo.Instruction{Name: wrappedName, Opcode: wrappedOp, Shape: in.Shape.Tuple[1].Clone()}
	for i, o := range in.Operands {
		prm := &hlo.Instruction{Name: p.uniqueName("async_param." + strconv.Itoa(i)), Opcode: hlo.OpParameter, ParamNumber: int64(i), Shape: o.Shape.Clone()}
		comp.AddInstruction(prm)
		comp.Params = append(comp.Params, prm)
		wrapped.Operands = append(wrapped.Operands, prm)
	}
	// The wrapped op takes the attributes written on the sugared form,
	// except those of the async op itself.
	keep := in.Attrs[:0:0]
	for _, a := range in.Attrs {
		if a.Name == "async_execution_thread" || a.Name == "calls" {
			keep = append(keep, a)
		} else {
			wrapped.Attrs = append(wrapped.Attrs, a)
		}
	}
	in.Attrs = keep
	wrapped.Name = p.uniqueName(wrappedName)
	comp.AddInstruction(wrapped)
	comp.Root = wrapped
	if t, ok := in.StringAttr("async_execution_thread"); ok {
		comp.ExecutionThread = t
	}
	p.comps[comp.Name] = &compState{comp: comp, defined: true, wrapped: true}
	p.mod.AddComputation(comp)
	in.SetAttr("calls", comp)
	return nil
}

// checkAsync applies XLA's parser checks to async-start/update/done and
// gives update and done their start's computation when not written.
func (p *parser) checkAsync(in *hlo.Instruction, pos int) error {
	if in.Opcode == hlo.OpAsyncStart {
		if !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 || !in.Shape.Tuple[0].IsTuple() {
			return p.errorAt(pos, "AsyncStart expects the op shape to be in the form of ((async-operands), async-outputs, state).")
		}
		c := in.Computation("calls")
		if c == nil {
			return p.errorAt(pos, "async-start needs calls=")
		}
		if p.asyncUsers[c] {
			return p.errorAt(pos, "Computation %s is called by more than one async op", c.Name)
		}
		p.asyncUsers[c] = true
		return nil
	}
	if len(in.Operands) != 1 || (in.Operands[0].Opcode != hlo.OpAsyncStart && in.Operands[0].Opcode != hlo.OpAsyncUpdate) {
		return p.errorAt(pos, "AsyncUpdate and AsyncDone expect a single async op as their operand.")
	}
	prev := in.Operands[0]
	if in.Opcode == hlo.OpAsyncUpdate && !in.Shape.Compatible(prev.Shape) {
		return p.errorAt(pos, "AsyncUpdate expects the op shape to be the same as the operand shape.")
	}
	want := prev.Computation("calls")
	if got := in.Computation("calls"); got == nil {
		in.SetAttr("calls", want)
	} else if got != want {
		return p.errorAt(pos, "Expect async_wrapped_computation to be %s, but got %s", want.Name, got.Name)
	}
	wantThread, ok := prev.StringAttr("async_execution_thread")
	if !ok {
		wantThread = "main"
	}
	if t, ok := in.StringAttr("async_execution_thread"); ok && t != wantThread {
		return p.errorAt(pos, "Expect async_execution_thread to be %s, but got %s", wantThread, t)
	}
	return nil
}

func (p *parser) uniqueCompName(base string) string {
	name := base
	for i := 0; p.comps[name] != nil; i++ {
		name = base + "." + strconv.Itoa(i)
	}
	return name
}

// SingleInstructionAsync reports whether an async op's wrapped computation
// is parameters feeding one root instruction in order, so that the op can
// print as `<opcode>-start(...)` (XLA's syntax sugar for async ops).
func SingleInstructionAsync(c *hlo.Computation) bool {
	if c == nil || c.Root == nil || len(c.Instructions) != len(c.Params)+1 {
		return false
	}
	return slices.Equal(c.Root.Operands, c.Params)
}
