// Package match is a pattern matcher over HLO instructions, in the spirit
// of XLA's m:: matchers: a pattern constrains an instruction's opcode,
// shape, constant value and operands (recursively, in either order for
// commutative ops), captures the instructions it binds, and can explain
// why it did not match.
//
//	var x *hlo.Instruction
//	p := match.Op(hlo.OpAdd, match.Any().Capture(&x), match.ScalarConstant(0)).AnyOrder()
//	if p.Match(in) { ... x is the non-zero operand ... }
package match

import (
	"fmt"
	"slices"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Pattern matches instructions. Build patterns with the functions of this
// package and refine them with the methods; a Pattern is immutable once
// built, so patterns can be package-level values shared by rules.
type Pattern struct {
	ops      []hlo.Opcode // any of these; empty means any opcode
	operands []*Pattern   // nil: operands unconstrained
	anyOrder bool         // two operands, tried in both orders
	checks   []check
	capture  **hlo.Instruction
}

type check struct {
	desc string
	ok   func(*hlo.Instruction) bool
}

// Any matches every instruction.
func Any() *Pattern { return &Pattern{} }

// Op matches an instruction with opcode op and, if operand patterns are
// given, exactly that many operands matching them in order.
func Op(op hlo.Opcode, operands ...*Pattern) *Pattern {
	p := &Pattern{ops: []hlo.Opcode{op}}
	if len(operands) > 0 {
		p.operands = operands
	}
	return p
}

// OneOf matches an instruction with any of the opcodes, operands
// unconstrained.
func OneOf(ops ...hlo.Opcode) *Pattern { return &Pattern{ops: ops} }

func (p *Pattern) clone() *Pattern {
	q := *p
	q.ops = slices.Clone(p.ops)
	q.operands = slices.Clone(p.operands)
	q.checks = slices.Clone(p.checks)
	return &q
}

// Capture binds the matched instruction to *dst when the whole pattern
// matches (nothing is written on failure).
func (p *Pattern) Capture(dst **hlo.Instruction) *Pattern {
	q := p.clone()
	q.capture = dst
	return q
}

// AnyOrder lets a two-operand pattern match its operands in either order
// (XLA's AddAnyOrder and friends).
func (p *Pattern) AnyOrder() *Pattern {
	q := p.clone()
	q.anyOrder = true
	return q
}

// Operands constrains the operands (exactly len(ops) of them).
func (p *Pattern) Operands(ops ...*Pattern) *Pattern {
	q := p.clone()
	q.operands = ops
	return q
}

// Where adds a predicate; desc says what it requires, for Explain.
func (p *Pattern) Where(desc string, ok func(*hlo.Instruction) bool) *Pattern {
	q := p.clone()
	q.checks = append(q.checks, check{desc, ok})
	return q
}

// Match reports whether in matches, and if so fills the captures.
func (p *Pattern) Match(in *hlo.Instruction) bool {
	var caps []binding
	if !p.match(in, &caps, nil) {
		return false
	}
	for _, c := range caps {
		*c.dst = c.in
	}
	return true
}

// Explain returns "" if in matches, else the reason it does not, naming
// the instruction and the first requirement that failed.
func (p *Pattern) Explain(in *hlo.Instruction) string {
	var caps []binding
	var why []string
	if p.match(in, &caps, &why) {
		return ""
	}
	return strings.Join(why, "; ")
}

type binding struct {
	dst **hlo.Instruction
	in  *hlo.Instruction
}

// match tries p on in, appending captures; on failure it restores caps and
// records the reason in why (when asked).
func (p *Pattern) match(in *hlo.Instruction, caps *[]binding, why *[]string) bool {
	fail := func(format string, args ...any) bool {
		if why != nil {
			*why = append(*why, fmt.Sprintf(format, args...))
		}
		return false
	}
	if in == nil {
		return fail("no instruction")
	}
	if len(p.ops) > 0 && !slices.Contains(p.ops, in.Opcode) {
		return fail("%s is %s, want %s", in.Name, in.Opcode, opList(p.ops))
	}
	for _, c := range p.checks {
		if !c.ok(in) {
			return fail("%s is not %s", in.Name, c.desc)
		}
	}
	if p.operands != nil {
		if len(in.Operands) != len(p.operands) {
			return fail("%s has %d operands, want %d", in.Name, len(in.Operands), len(p.operands))
		}
		mark := len(*caps)
		if !p.matchOperands(in, in.Operands, caps, why) {
			*caps = (*caps)[:mark]
			if !p.anyOrder || len(in.Operands) != 2 {
				return false
			}
			swapped := []*hlo.Instruction{in.Operands[1], in.Operands[0]}
			if !p.matchOperands(in, swapped, caps, why) {
				*caps = (*caps)[:mark]
				return false
			}
		}
	}
	if p.capture != nil {
		*caps = append(*caps, binding{p.capture, in})
	}
	return true
}

func (p *Pattern) matchOperands(in *hlo.Instruction, ops []*hlo.Instruction, caps *[]binding, why *[]string) bool {
	for i, o := range ops {
		if p.operands[i] != nil && !p.operands[i].match(o, caps, why) {
			if why != nil {
				(*why)[len(*why)-1] = fmt.Sprintf("operand %d of %s: %s", i, in.Name, (*why)[len(*why)-1])
			}
			return false
		}
	}
	return true
}

func opList(ops []hlo.Opcode) string {
	s := make([]string, len(ops))
	for i, op := range ops {
		s[i] = op.String()
	}
	return strings.Join(s, " or ")
}
