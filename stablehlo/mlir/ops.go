package mlir

import (
	"strconv"
	"strings"
)

// isolatedOps are ops whose regions cannot see values defined outside them.
var isolatedOps = map[string]bool{
	"func.func":              true,
	"builtin.module":         true,
	"sdy.manual_computation": true,
}

// resName is one entry of an op's result list: `%x` or `%x:2`.
type resName struct {
	base  string
	count int
	off   int
}

// parseOp reads one op in generic or pretty syntax, with its results and
// trailing location, and binds its result names.
func (p *parser) parseOp() *Op {
	start := p.tok.off
	names := p.parseResultNames()
	op := &Op{Pos: p.lx.pos(p.tok.off)}
	pendStart := len(p.pending)
	total := 0
	for _, n := range names {
		total += n.count
	}
	var types []Type
	switch p.tok.kind {
	case tString:
		types = p.parseGenericOp(op)
	case tIdent:
		types = p.parsePrettyOp(op, total)
	default:
		p.fail(p.tok.off, "expected an op, found %s", p.describe())
	}
	p.parseOpLoc(op)
	for _, u := range p.pending[pendStart:] {
		if u.op == nil {
			u.op = op
		}
	}
	if len(types) != total {
		p.fail(start, "%s has %d results but %d names are bound", op.Name, len(types), total)
	}
	p.bindResults(op, names, types)
	op.Attrs = sortAttrs(op.Attrs)
	return op
}

func (p *parser) parseResultNames() []resName {
	var names []resName
	if p.tok.kind != tPercent {
		return nil
	}
	for {
		if p.tok.kind != tPercent || strings.IndexByte(p.tok.text, '#') >= 0 {
			p.fail(p.tok.off, "expected a result name, found %s", p.describe())
		}
		n := resName{base: p.tok.text, count: 1, off: p.tok.off}
		p.next()
		if p.accept(":") {
			n.count = p.parseCount()
		}
		names = append(names, n)
		if !p.accept(",") {
			break
		}
	}
	p.expect("=")
	return names
}

// parseCount reads a small non-negative decimal integer.
func (p *parser) parseCount() int {
	if p.tok.kind != tInt || strings.HasPrefix(p.tok.text, "0x") {
		p.fail(p.tok.off, "expected a count, found %s", p.describe())
	}
	n, err := strconv.Atoi(p.tok.text)
	if err != nil || n > 1<<20 {
		p.fail(p.tok.off, "count %s out of range", p.tok.text)
	}
	p.next()
	return n
}

func (p *parser) bindResults(op *Op, names []resName, types []Type) {
	i := 0
	for _, n := range names {
		vs := make([]*Value, n.count)
		for j := range vs {
			name := n.base
			if n.count > 1 {
				name = n.base + "#" + strconv.Itoa(j)
			}
			vs[j] = &Value{Name: name, Type: types[i], Def: op, Index: i}
			op.Results = append(op.Results, vs[j])
			i++
		}
		p.define(n.base, vs, n.off)
	}
}

// parseGenericOp reads `"d.op"(%a) <{props}> ({regions}) {attrs} : (T) -> R`.
// Properties join the attribute dictionary: the generic form printed
// without properties support holds them there, and the converter should
// not care which of the two an attribute came from.
func (p *parser) parseGenericOp(op *Op) []Type {
	op.Name = p.tok.text
	if !strings.Contains(op.Name, ".") {
		p.fail(p.tok.off, "op name %q has no dialect", op.Name)
	}
	p.next()
	p.expect("(")
	op.Operands = p.useList()
	p.expect(")")
	if p.is("[") {
		p.fail(p.tok.off, "block successors are not supported")
	}
	if p.accept("<") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
		p.expect(">")
	}
	if p.accept("(") {
		for {
			op.Regions = append(op.Regions, p.parseRegion(nil, isolatedOps[op.Name]))
			if !p.accept(",") {
				break
			}
		}
		p.expect(")")
	}
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}

// parseOpSignature reads `: (operand types) -> result types` and checks it
// against the operands.
func (p *parser) parseOpSignature(op *Op) []Type {
	p.expect(":")
	return p.parseOpSignatureAfterColon(op, p.tok.off)
}

// parseRegion reads `{ blocks }`. args, when given, are the entry block's
// arguments declared outside the region (a function's signature).
func (p *parser) parseRegion(args []*Value, isolated bool) *Region {
	p.enter()
	defer p.leave()
	p.expect("{")
	p.pushScope(isolated)
	r := &Region{}
	if args != nil || (p.tok.kind != tCaret && !p.is("}")) {
		b := &Block{Args: args}
		for i, a := range args {
			a.Index = i
			p.define(a.Name, []*Value{a}, p.tok.off)
		}
		r.Blocks = append(r.Blocks, b)
	}
	for !p.is("}") {
		if p.tok.kind == tEOF {
			p.fail(p.tok.off, "expected '}' to close the region, found end of file")
		}
		if p.tok.kind == tCaret {
			r.Blocks = append(r.Blocks, p.parseBlockHeader())
			continue
		}
		b := r.Blocks[len(r.Blocks)-1]
		b.Ops = append(b.Ops, p.parseOp())
	}
	p.popScope()
	p.next()
	return r
}

// parseBlockHeader reads `^bb0(%a: T, ...):` and defines the arguments.
func (p *parser) parseBlockHeader() *Block {
	b := &Block{Label: p.tok.text}
	p.next()
	if p.accept("(") {
		for !p.is(")") {
			if p.tok.kind != tPercent || strings.IndexByte(p.tok.text, '#') >= 0 {
				p.fail(p.tok.off, "expected a block argument, found %s", p.describe())
			}
			v := &Value{Name: p.tok.text, Index: len(b.Args)}
			off := p.tok.off
			p.next()
			p.expect(":")
			v.Type = p.parseType()
			if p.is("loc") {
				p.parseLoc()
			}
			p.define(v.Name, []*Value{v}, off)
			b.Args = append(b.Args, v)
			if !p.accept(",") {
				break
			}
		}
		p.expect(")")
	}
	p.expect(":")
	return b
}

// parsePrettyOp dispatches on the op name to its custom assembly parser.
// Names without a dialect are func's (`return`, `call`), the default
// dialect inside function bodies.
func (p *parser) parsePrettyOp(op *Op, nres int) []Type {
	name, off := p.tok.text, p.tok.off
	if !strings.Contains(name, ".") {
		name = "func." + name
	}
	f, ok := prettyOps[name]
	if !ok {
		p.fail(off, "unknown op %s in pretty syntax (write it in generic form)", p.tok.text)
	}
	op.Name = name
	p.next()
	return f(p, op, nres)
}

// prettyFunc parses an op's custom assembly after its name, filling the
// op's operands, attributes and regions, and returns its result types.
type prettyFunc func(p *parser, op *Op, nres int) []Type

// prettyOps is filled by the pretty_*.go files' init functions.
var prettyOps = map[string]prettyFunc{}
