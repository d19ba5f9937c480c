package hlotext

import (
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Some dumps print an instruction after a line that uses it. XLA's parser
// rejects that; the meaning is unambiguous as long as every name resolves
// in the computation and the operand graph has no cycle, so the parser
// takes it with a warning: an operand named before its definition gets a
// placeholder, and finishComputation resolves the placeholders and puts the
// instructions back in definition order.

// forwardRefs records one computation's operands named before definition.
type forwardRefs struct {
	holders map[string]*hlo.Instruction // placeholder by name
	names   map[*hlo.Instruction]string // name by placeholder
	uses    []forwardUse
	pending []pendingCheck // instructions whose checks need their operands
}

type forwardUse struct {
	name     string
	pos      int        // of the name
	declared *hlo.Shape // shape written before the name, if any
	declPos  int
}

type pendingCheck struct {
	in  *hlo.Instruction
	pos int
}

// forwardOperand returns the placeholder for an operand name not yet
// defined in the current computation.
func (p *parser) forwardOperand(name string, pos int, declared *hlo.Shape, declPos int) *hlo.Instruction {
	cs := p.cur
	if cs.fwd == nil {
		cs.fwd = &forwardRefs{holders: map[string]*hlo.Instruction{}, names: map[*hlo.Instruction]string{}}
	}
	f := cs.fwd
	h, ok := f.holders[name]
	if !ok {
		h = &hlo.Instruction{Name: name}
		f.holders[name], f.names[h] = h, name
	}
	f.uses = append(f.uses, forwardUse{name, pos, declared, declPos})
	return h
}

// forwardOperandOf reports the name of in's first operand that is a
// placeholder, if any.
func (p *parser) forwardOperandOf(in *hlo.Instruction) (string, bool) {
	if p.cur.fwd == nil {
		return "", false
	}
	for _, o := range in.Operands {
		if n, ok := p.cur.fwd.names[o]; ok {
			return n, true
		}
	}
	return "", false
}

// needsDefinedOperands reports why in cannot be parsed with an operand
// that is not defined yet, or "" if it can (its checks are deferred).
func needsDefinedOperands(in *hlo.Instruction, declared *hlo.Shape, sugar string) string {
	switch {
	case declared == nil:
		return "an instruction without a written shape"
	case sugar != "" || in.Opcode == hlo.OpAsyncStart || in.Opcode == hlo.OpAsyncUpdate || in.Opcode == hlo.OpAsyncDone:
		return "an async instruction"
	case in.Opcode == hlo.OpBroadcast && !in.HasAttr("dimensions"):
		return "a broadcast without dimensions"
	}
	return ""
}

// resolveForward replaces placeholders by the instructions of their names,
// warns once per name, reorders the computation so that operands come
// first, and runs the checks that waited for the operands. An undefined
// name or a cycle is an error.
func (p *parser) resolveForward(cs *compState) error {
	f := cs.fwd
	if f == nil {
		return nil
	}
	cs.fwd = nil
	warned := map[string]bool{}
	for _, u := range f.uses {
		in, ok := cs.instrs[u.name]
		if !ok {
			return p.errorAt(u.pos, "instruction does not exist: %s", u.name)
		}
		if u.declared != nil && !u.declared.Compatible(in.Shape) {
			u.declared.SetDefaultLayoutIfMissing()
			return p.errorAt(u.declPos, "The declared operand shape %s is not compatible with the shape of the operand instruction %s.", u.declared, in.Shape)
		}
		if !warned[u.name] {
			warned[u.name] = true
			p.warnAt(u.pos, "%s is used before the line that defines it (XLA's parser rejects this; accepted as the computation is still acyclic)", u.name)
		}
	}
	c := cs.comp
	for _, in := range c.Instructions {
		for i, o := range in.Operands {
			if n, ok := f.names[o]; ok {
				in.Operands[i] = cs.instrs[n]
			}
		}
	}
	order, cycle := operandOrder(c.Instructions)
	if cycle != nil {
		names := make([]string, len(cycle))
		inCycle := map[string]bool{}
		for i, in := range cycle {
			names[i] = in.Name
			inCycle[in.Name] = true
		}
		// Every cycle has an operand named before its definition (text
		// order alone is acyclic): report the first such use.
		for _, u := range f.uses {
			if inCycle[u.name] {
				return p.errorAt(u.pos, "instructions form a cycle: %s", strings.Join(names, " -> "))
			}
		}
	}
	c.Instructions = order
	for _, pc := range f.pending {
		if err := p.checkInstruction(pc.in, pc.pos); err != nil {
			return err
		}
	}
	return nil
}

// operandOrder returns the instructions with every operand before its
// users, keeping text order otherwise, or a cycle (each instruction an
// operand of the next, the last an operand of the first).
func operandOrder(instrs []*hlo.Instruction) ([]*hlo.Instruction, []*hlo.Instruction) {
	const (
		unseen = iota
		active
		done
	)
	state := make(map[*hlo.Instruction]int, len(instrs))
	order := make([]*hlo.Instruction, 0, len(instrs))
	type frame struct {
		in   *hlo.Instruction
		next int
	}
	// Iterative depth-first search: a long chain of forward uses must not
	// exhaust the goroutine stack.
	for _, root := range instrs {
		if state[root] != unseen {
			continue
		}
		stack := []frame{{root, 0}}
		state[root] = active
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.in.Operands) {
				state[top.in] = done
				order = append(order, top.in)
				stack = stack[:len(stack)-1]
				continue
			}
			o := top.in.Operands[top.next]
			top.next++
			switch state[o] {
			case unseen:
				state[o] = active
				stack = append(stack, frame{o, 0})
			case active:
				var cycle []*hlo.Instruction
				for i := len(stack) - 1; i >= 0; i-- {
					cycle = append(cycle, stack[i].in)
					if stack[i].in == o {
						break
					}
				}
				return nil, cycle
			}
		}
	}
	return order, nil
}
