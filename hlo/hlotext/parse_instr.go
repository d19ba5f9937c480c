package hlotext

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// instruction parses `[ROOT] name = [shape] opcode(operands), attrs`.
func (p *parser) instruction() error {
	cs := p.cur
	isRoot := false
	rootPos := p.pos
	if p.peekIdent() == "ROOT" {
		p.ident()
		isRoot = true
	}
	p.skip()
	namePos := p.pos
	if p.atShape() {
		return p.errorf("expects name")
	}
	name := p.ident()
	if name == "" {
		return p.errorf("expects instruction name")
	}
	if !p.accept('=') {
		return p.errorf("expects '=' in instruction")
	}
	in, err := p.instructionRHS(name, namePos, false)
	if err != nil {
		return err
	}
	if isRoot {
		cs.nroots++
		if cs.nroots > 1 {
			return p.errorAt(rootPos, "one computation should have only one ROOT")
		}
		cs.root = in
	}
	return nil
}

// instructionRHS parses what follows `name =` (or an anonymous nested
// instruction, with name ""), adds the instruction to the current
// computation and returns it.
func (p *parser) instructionRHS(name string, namePos int, nested bool) (*hlo.Instruction, error) {
	var declared *hlo.Shape
	if p.atShape() {
		sh, err := p.shape()
		if err != nil {
			return nil, err
		}
		declared = &sh
	}
	p.skip()
	opPos := p.pos
	opName := p.ident()
	if opName == "" {
		return nil, p.errorf("expects opcode")
	}
	op, ok := hlo.OpcodeByName(opName)
	sugar := ""
	if !ok {
		op, sugar = asyncSugar(opName)
		if op == hlo.OpInvalid {
			return nil, p.errorAt(opPos, "unknown opcode: %s", opName)
		}
	}
	in := &hlo.Instruction{Name: name, Opcode: op}
	if err := p.expect('(', "after opcode"); err != nil {
		return nil, err
	}
	switch op {
	case hlo.OpConstant:
		if declared == nil {
			return nil, p.errorAt(opPos, "constant needs a shape")
		}
		if err := p.constantPayload(in, *declared); err != nil {
			return nil, err
		}
	case hlo.OpParameter:
		n, err := p.integer()
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, p.errorAt(opPos, "parameter number must be >= 0")
		}
		in.ParamNumber = n
		if other, dup := p.cur.params[n]; dup {
			return nil, p.errorAt(opPos, "Duplicate parameter number %d: %s is parameter(%d) too", n, other, n)
		}
		if p.cur.params == nil {
			p.cur.params = map[int64]string{}
		}
		p.cur.params[n] = name
		if err := p.expect(')', "after parameter number"); err != nil {
			return nil, err
		}
	default:
		if err := p.operands(in); err != nil {
			return nil, err
		}
	}
	attrOp := op
	if sugar != "" {
		attrOp, _ = hlo.OpcodeByName(sugar)
	}
	if !nested {
		if err := p.attributes(in, attrOp); err != nil {
			return nil, err
		}
	}
	fwdName, fwd := p.forwardOperandOf(in)
	if why := needsDefinedOperands(in, declared, sugar); fwd && why != "" {
		return nil, p.errorAt(opPos, "%s is used before the line that defines it, which %s cannot take", fwdName, why)
	}
	if op == hlo.OpBroadcast && !in.HasAttr("dimensions") {
		// XLA lets a broadcast of a scalar leave out dimensions={}.
		if len(in.Operands) != 1 || in.Operands[0].Shape.Rank() != 0 {
			return nil, p.errorAt(opPos, "broadcast needs a dimensions attribute unless its operand is a scalar")
		}
		in.SetAttr("dimensions", []int64{})
	}
	if sugar == "" {
		if err := p.checkArity(in, opPos); err != nil {
			return nil, err
		}
	}
	if declared != nil {
		in.Shape = *declared
	}
	if sugar != "" {
		if err := p.expandAsyncSugar(in, sugar, opPos); err != nil {
			return nil, err
		}
	}
	if op.Has(hlo.Async) && (op == hlo.OpAsyncStart || op == hlo.OpAsyncUpdate || op == hlo.OpAsyncDone) {
		if err := p.checkAsync(in, opPos); err != nil {
			return nil, err
		}
	}
	if declared == nil {
		if op == hlo.OpParameter {
			return nil, p.errorAt(opPos, "parameter needs a shape")
		}
		in.Parent = p.cur.comp
		sh, err := hlo.InferShape(in)
		if err != nil {
			return nil, p.errorAt(opPos, "cannot infer the shape: %v", err)
		}
		// Tuples of tuples can grow exponentially with inferred shapes
		// while the text stays small; refuse rather than exhaust memory.
		if countLeaves(sh, maxInferredLeaves) > maxInferredLeaves {
			return nil, p.errorAt(opPos, "the inferred shape of %s has more than %d tuple elements; write the shape", opName, maxInferredLeaves)
		}
		in.Shape = sh
	}
	if fwd {
		p.cur.fwd.pending = append(p.cur.fwd.pending, pendingCheck{in, opPos})
	} else if err := p.checkInstruction(in, opPos); err != nil {
		return nil, err
	}
	if name == "" {
		in.Name = p.uniqueName(op.String() + ".anon")
	} else {
		if _, dup := p.cur.instrs[name]; dup {
			return nil, p.errorAt(namePos, "instruction %s is already defined", name)
		}
		if p.names[name] {
			p.repeatedNames = true
		}
		p.names[name] = true
	}
	p.cur.instrs[in.Name] = in
	p.cur.comp.AddInstruction(in)
	return in, nil
}

const maxInferredLeaves = 1 << 16

// countLeaves counts the array leaves of s, stopping once past limit.
func countLeaves(s hlo.Shape, limit int) int {
	if !s.IsTuple() {
		return 1
	}
	n := 0
	for _, e := range s.Tuple {
		n += countLeaves(e, limit-n)
		if n > limit {
			return n
		}
	}
	return n
}

// uniqueName returns base, or base.N for the first N that is free.
func (p *parser) uniqueName(base string) string {
	name := base
	for p.names[name] {
		p.nextSuffix[base]++
		name = base + "." + strconv.Itoa(p.nextSuffix[base])
	}
	p.names[name] = true
	return name
}

func (p *parser) checkArity(in *hlo.Instruction, pos int) error {
	want := in.Opcode.Info().Arity
	if want == hlo.Variadic || want == len(in.Operands) {
		return nil
	}
	if in.Opcode == hlo.OpConstant || in.Opcode == hlo.OpParameter {
		return nil
	}
	return p.errorAt(pos, "%s expects %d operands, but has %d", in.Opcode, want, len(in.Operands))
}

// constantPayload parses the literal between the parentheses of constant.
// The literal's own grammar says where it ends, so a missing ')' is
// reported where it belongs rather than at the end of the file.
func (p *parser) constantPayload(in *hlo.Instruction, sh hlo.Shape) error {
	start := p.pos
	lit, end, err := hlo.ParseLiteralPrefix(sh, p.src[start:])
	if err != nil {
		if le, ok := err.(*hlo.LiteralError); ok {
			return p.errorAt(start+le.Offset, "%s", le.Msg)
		}
		return p.errorAt(start, "%v", err)
	}
	p.pos = start + end
	in.Literal = lit
	return p.expect(')', "at the end of the constant")
}

// operands parses `a, f32[2] b, add(c, d))` up to and including ')'.
func (p *parser) operands(in *hlo.Instruction) error {
	if p.accept(')') {
		return nil
	}
	for {
		opnd, err := p.operand()
		if err != nil {
			return err
		}
		in.Operands = append(in.Operands, opnd)
		if p.accept(')') {
			return nil
		}
		if err := p.expect(',', "or ')' after operand"); err != nil {
			return err
		}
	}
}

// operand parses `[shape] name` or a nested anonymous instruction
// `[shape] opcode(...)`.
func (p *parser) operand() (*hlo.Instruction, error) {
	p.skip()
	start := p.pos
	save := p.pos
	var declared *hlo.Shape
	if p.atShape() {
		sh, err := p.shapeOnly()
		if err != nil {
			return nil, err
		}
		declared = &sh
	}
	p.skip()
	namePos := p.pos
	name := p.ident()
	if name == "" {
		if c := p.peekByte(); p.missingOK && declared != nil && (c == ',' || c == ')') {
			declared.SetDefaultLayoutIfMissing()
			return p.missingParam("", *declared), nil
		}
		return nil, p.errorf("expects name")
	}
	if p.accept('(') {
		// A nested instruction: parse it from its start (shape included).
		p.pos = save
		if err := p.enter("instruction"); err != nil {
			return nil, err
		}
		defer p.leave()
		missing := p.missingOK
		p.missingOK = false
		defer func() { p.missingOK = missing }()
		return p.instructionRHS("", start, true)
	}
	in, ok := p.cur.instrs[name]
	if !ok {
		if p.missingOK {
			if declared == nil {
				return nil, p.errorAt(namePos, "Operand had no shape in HLO text: %s", name)
			}
			declared.SetDefaultLayoutIfMissing()
			return p.missingParam(name, *declared), nil
		}
		return p.forwardOperand(name, namePos, declared, start), nil
	}
	if declared != nil && !declared.Compatible(in.Shape) {
		declared.SetDefaultLayoutIfMissing()
		return nil, p.errorAt(start, "The declared operand shape %s is not compatible with the shape of the operand instruction %s.", declared, in.Shape)
	}
	return in, nil
}

// missingParam makes a parameter for an operand of a single-instruction
// input that is not defined.
func (p *parser) missingParam(name string, sh hlo.Shape) *hlo.Instruction {
	if name == "" {
		name = p.uniqueName("parameter.anon")
	} else {
		p.repeatedNames = p.repeatedNames || p.names[name]
		p.names[name] = true
	}
	in := &hlo.Instruction{Name: name, Opcode: hlo.OpParameter, Shape: sh, ParamNumber: int64(len(p.cur.comp.Params))}
	p.cur.comp.Params = append(p.cur.comp.Params, in)
	p.cur.instrs[name] = in
	p.cur.comp.AddInstruction(in)
	return in
}

// asyncSugar recognises `custom-call-start` and the like: an async
// start/update/done written with the wrapped instruction's opcode.
func asyncSugar(name string) (hlo.Opcode, string) {
	for _, suffix := range []struct {
		s  string
		op hlo.Opcode
	}{{"-start", hlo.OpAsyncStart}, {"-update", hlo.OpAsyncUpdate}, {"-done", hlo.OpAsyncDone}} {
		if base, ok := strings.CutSuffix(name, suffix.s); ok {
			if _, known := hlo.OpcodeByName(base); known {
				return suffix.op, base
			}
		}
	}
	return hlo.OpInvalid, ""
}
