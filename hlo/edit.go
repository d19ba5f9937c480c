package hlo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Editing: the few primitive mutations passes build on. The IR keeps no
// user lists (they would have to be maintained by every edit); Users
// computes them when a pass needs them.

// Users maps each instruction of c to the instructions of c that use it as
// an operand, in instruction order (an instruction using a value twice is
// listed once).
func (c *Computation) Users() map[*Instruction][]*Instruction {
	users := make(map[*Instruction][]*Instruction, len(c.Instructions))
	for _, in := range c.Instructions {
		for i, o := range in.Operands {
			if !containsBefore(in.Operands, o, i) {
				users[o] = append(users[o], in)
			}
		}
	}
	return users
}

// containsBefore reports whether x occurs in s before position i.
func containsBefore(s []*Instruction, x *Instruction, i int) bool {
	for _, y := range s[:i] {
		if y == x {
			return true
		}
	}
	return false
}

// ReplaceAllUses makes every use of old in c (operands, control
// predecessors and the root) refer to repl instead. It reports whether
// anything changed.
func (c *Computation) ReplaceAllUses(old, repl *Instruction) bool {
	if old == repl {
		return false
	}
	changed := false
	for _, in := range c.Instructions {
		if in == repl {
			continue // never make repl its own operand
		}
		changed = replaceIn(in, old, repl) || changed
	}
	if c.Root == old {
		c.Root = repl
		changed = true
	}
	return changed
}

// replaceIn makes in's operands and control predecessors that are old
// repl, reporting whether any was.
func replaceIn(in, old, repl *Instruction) bool {
	changed := false
	for i, o := range in.Operands {
		if o == old {
			in.Operands[i] = repl
			changed = true
		}
	}
	for i, o := range in.ControlPredecessors {
		if o == old {
			in.ControlPredecessors[i] = repl
			changed = true
		}
	}
	return changed
}

// UseIndex lists each instruction's readers in a computation: the
// instructions naming it an operand or a control predecessor. A pass
// that replaces many instructions replaces through it, visiting the
// readers alone, where ReplaceAllUses visits every instruction each time
// (CSE and the simplifier over a graph of n instructions took time in
// n²: 1.6 s of a 6,000-instruction graph's compile). The instructions a
// pass adds join it with Add; an index misses any added otherwise.
type UseIndex struct {
	c       *Computation
	readers map[*Instruction][]*Instruction
}

// UseIndex returns the index of c's readers as they are now.
func (c *Computation) UseIndex() *UseIndex {
	x := &UseIndex{c: c, readers: make(map[*Instruction][]*Instruction, len(c.Instructions))}
	for _, in := range c.Instructions {
		x.Add(in)
	}
	return x
}

// Add records in as a reader of its operands and control predecessors.
func (x *UseIndex) Add(in *Instruction) {
	for i, o := range in.Operands {
		if !containsBefore(in.Operands, o, i) {
			x.readers[o] = append(x.readers[o], in)
		}
	}
	for i, p := range in.ControlPredecessors {
		if !containsBefore(in.ControlPredecessors, p, i) && !slices.Contains(in.Operands, p) {
			x.readers[p] = append(x.readers[p], in)
		}
	}
}

// ReplaceAllUses is Computation.ReplaceAllUses over old's readers: every
// use of old (operands, control predecessors, the root) refers to repl
// instead, repl's own excepted. It reports whether anything changed.
func (x *UseIndex) ReplaceAllUses(old, repl *Instruction) bool {
	if old == repl {
		return false
	}
	changed := false
	var kept []*Instruction
	for _, in := range x.readers[old] {
		if in == repl {
			kept = append(kept, in) // never make repl its own operand
			continue
		}
		changed = replaceIn(in, old, repl) || changed
		x.readers[repl] = append(x.readers[repl], in)
	}
	x.readers[old] = kept
	if x.c.Root == old {
		x.c.Root = repl
		changed = true
	}
	return changed
}

// RemoveInstructions deletes the given instructions from c. The caller
// makes sure nothing still uses them; parameters keep their slots only if
// not removed.
func (c *Computation) RemoveInstructions(dead map[*Instruction]bool) {
	if len(dead) == 0 {
		return
	}
	kept := c.Instructions[:0]
	for _, in := range c.Instructions {
		if !dead[in] {
			kept = append(kept, in)
		}
	}
	clear(c.Instructions[len(kept):])
	c.Instructions = kept
}

// SortTopologically reorders c's instructions so every instruction comes
// after its operands and control predecessors, keeping the existing order
// wherever it is already valid (so passes can append new instructions at
// the end and sort once). It fails on a cycle.
func (c *Computation) SortTopologically() error {
	const (
		unseen = iota
		active
		done
	)
	state := make(map[*Instruction]int, len(c.Instructions))
	out := make([]*Instruction, 0, len(c.Instructions))
	var visit func(in *Instruction) error
	visit = func(in *Instruction) error {
		switch state[in] {
		case done:
			return nil
		case active:
			return fmt.Errorf("computation %s: instruction %s is part of a cycle", c.Name, in.Name)
		}
		state[in] = active
		for _, o := range in.Operands {
			if err := visit(o); err != nil {
				return err
			}
		}
		for _, o := range in.ControlPredecessors {
			if err := visit(o); err != nil {
				return err
			}
		}
		state[in] = done
		if in.Parent == c || in.Parent == nil {
			out = append(out, in)
		}
		return nil
	}
	for _, in := range c.Instructions {
		if err := visit(in); err != nil {
			return err
		}
	}
	c.Instructions = out
	return nil
}

// NameSet hands out instruction names unique within a module, as XLA's
// NameUniquer does: a taken name gets a ".N" suffix.
type NameSet struct {
	m     *Module // whose names are still to be taken (nil: taken)
	taken map[string]bool
	next  map[string]int
}

// NewNameSet returns a NameSet holding every instruction and computation
// name of m. The names are gathered at the first Unique: passes make one
// on every run and most never ask (gathering a large module's names on
// every run cost a tenth of its compile).
func NewNameSet(m *Module) *NameSet {
	return &NameSet{m: m, taken: map[string]bool{}, next: map[string]int{}}
}

// gather takes the module's names, once.
func (s *NameSet) gather() {
	if s.m == nil {
		return
	}
	for _, c := range s.m.Computations {
		s.taken[c.Name] = true
		for _, in := range c.Instructions {
			s.taken[in.Name] = true
		}
	}
	s.m = nil
}

// Unique returns base, or base with a numeric suffix, not yet taken, and
// takes it.
func (s *NameSet) Unique(base string) string {
	if base == "" {
		base = "tmp"
	}
	s.gather()
	if !s.taken[base] {
		s.taken[base] = true
		return base
	}
	stem := base
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		if _, err := strconv.Atoi(base[i+1:]); err == nil {
			stem = base[:i]
		}
	}
	for n := s.next[stem] + 1; ; n++ {
		name := stem + "." + strconv.Itoa(n)
		if !s.taken[name] {
			s.next[stem] = n
			s.taken[name] = true
			return name
		}
	}
}

// NewInstruction returns an instruction of c (not yet added) with the
// given opcode and operands and a shape inferred from them; attrs are set
// before inference.
func NewInstruction(name string, op Opcode, operands []*Instruction, attrs ...Attr) (*Instruction, error) {
	in := &Instruction{Name: name, Opcode: op, Operands: operands, Attrs: attrs}
	s, err := InferShape(in)
	if err != nil {
		return nil, fmt.Errorf("new %s instruction %s: %w", op, name, err)
	}
	in.Shape = s
	return in, nil
}
