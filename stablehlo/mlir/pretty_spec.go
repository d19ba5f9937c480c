package mlir

import (
	"strings"
)

// A pretty form is described by a spec string close to the op's ODS
// assemblyFormat, one step per space-separated word:
//
//	$            one operand
//	$...         a comma-separated operand list, possibly empty (`operands`)
//	$*           operands each followed by a comma (VariadicOperandWithAttribute)
//	name=kind    an attribute value stored under its generic name; kinds:
//	             i64 i32 u64 u32 (integers of that type), f64, bool, str,
//	             sym (a @symbol stored as a string), arr (`[1, 2]` as
//	             array<i64>), attr (any attribute), or enum:D.M (a bare
//	             keyword stored as #D<M keyword>)
//	?kw:name=kind  optional `, kw = value`
//	{}           the optional attribute dictionary
//	:KIND        the type signature, last: same (SameOperandsAndResultType:
//	             `T` or a function type), fn (a function type), select,
//	             complex, tuple, pair (`T, U`, results the same), res (the
//	             result types only), one (one type for every operand, no
//	             results), opt (optional operand types, no results), chlo1
//	             (`T -> R`), chlo2 (`T, U -> R`), close (`: {attrs} T, U`),
//	             none (no signature, no results)
//	anything else  a literal keyword or punctuation
//
// The table of specs is in pretty_stablehlo.go; forms that do not fit are
// functions in pretty_custom.go.
type specStep struct {
	kind string // "$", "$...", "$*", "attr", "opt", "{}", "type", "lit"
	name string // attribute name, or literal text, or type kind
	val  string // attribute kind
	kw   string // keyword of an optional group
}

// compileSpec splits a spec string into steps.
func compileSpec(spec string) []specStep {
	var steps []specStep
	for _, w := range strings.Fields(spec) {
		switch {
		case w == "$" || w == "$..." || w == "$*" || w == "{}":
			steps = append(steps, specStep{kind: w})
		case strings.HasPrefix(w, "?"):
			kw, rest, _ := strings.Cut(w[1:], ":")
			name, val, _ := strings.Cut(rest, "=")
			steps = append(steps, specStep{kind: "opt", kw: kw, name: name, val: val})
		case strings.HasPrefix(w, ":") && len(w) > 1:
			steps = append(steps, specStep{kind: "type", name: w[1:]})
		case strings.Contains(w, "=") && w != "=":
			name, val, _ := strings.Cut(w, "=")
			steps = append(steps, specStep{kind: "attr", name: name, val: val})
		default:
			steps = append(steps, specStep{kind: "lit", name: w})
		}
	}
	return steps
}

// specOp makes a prettyFunc from a spec string.
func specOp(spec string) prettyFunc {
	steps := compileSpec(spec)
	return func(p *parser, op *Op, nres int) []Type {
		var types []Type
		typed := false
		for _, s := range steps {
			switch s.kind {
			case "$":
				op.Operands = append(op.Operands, p.use())
			case "$...":
				op.Operands = append(op.Operands, p.useList()...)
			case "$*":
				for p.tok.kind == tPercent {
					op.Operands = append(op.Operands, p.use())
					p.expect(",")
				}
			case "attr":
				op.Attrs = append(op.Attrs, NamedAttr{Name: s.name, Value: p.parseKind(s.val)})
			case "opt":
				if p.is(",") && p.peek().kind == tIdent && p.lx.text(p.peek()) == s.kw {
					p.next()
					p.next()
					p.expect("=")
					op.Attrs = append(op.Attrs, NamedAttr{Name: s.name, Value: p.parseKind(s.val)})
				}
			case "{}":
				if p.is("{") {
					op.Attrs = append(op.Attrs, p.parseDict()...)
				}
			case "type":
				types, typed = p.parseSignature(op, s.name), true
			case "lit":
				p.expect(s.name)
			}
		}
		if !typed {
			return nil
		}
		return types
	}
}

// parseKind reads an attribute value written bare in a pretty form and
// gives it the type its ODS definition has.
func (p *parser) parseKind(kind string) Attr {
	intOf := func(w int, s byte) Attr {
		return IntAttr{Value: p.parseSignedInt(), Type: IntType{Width: w, Signedness: s}}
	}
	switch kind {
	case "i64":
		return intOf(64, 0)
	case "i32":
		return intOf(32, 0)
	case "u64":
		return intOf(64, 'u')
	case "u32":
		return intOf(32, 'u')
	case "f64":
		return FloatAttr{Value: p.parseSignedFloat(), Type: FloatType{Name: "f64"}}
	case "bool":
		if !p.is("true") && !p.is("false") {
			p.fail(p.tok.off, "expected true or false, found %s", p.describe())
		}
		v := p.is("true")
		p.next()
		return BoolAttr{Value: v}
	case "str":
		if p.tok.kind != tString {
			p.fail(p.tok.off, "expected a string, found %s", p.describe())
		}
		s := p.tok.text
		p.next()
		return StringAttr{Value: s}
	case "sym":
		if p.tok.kind != tAt {
			p.fail(p.tok.off, "expected a @symbol, found %s", p.describe())
		}
		s := p.tok.text
		p.next()
		return StringAttr{Value: s}
	case "arr":
		return p.parseI64Array()
	case "attr":
		return p.parseAttr()
	}
	if name, ok := strings.CutPrefix(kind, "enum:"); ok {
		return p.parseEnum(name)
	}
	panic("mlir: bad spec kind " + kind)
}

// parseEnum reads a bare enum keyword as the dialect attribute the generic
// form prints (`LT` → #stablehlo<comparison_direction LT>). The generic
// spelling itself is accepted too.
func (p *parser) parseEnum(name string) Attr {
	if p.tok.kind == tHash {
		return p.parseAttr()
	}
	if p.tok.kind != tIdent {
		p.fail(p.tok.off, "expected a %s keyword, found %s", name, p.describe())
	}
	a := DialectAttr{Name: name, Raw: p.tok.text}
	p.next()
	return a
}

// parseI64Array reads `[1, 2]` as the array<i64: 1, 2> the generic form holds.
func (p *parser) parseI64Array() Attr {
	p.expect("[")
	d := DenseArrayAttr{Elem: IntType{Width: 64}}
	for !p.is("]") {
		d.Ints = append(d.Ints, p.parseSignedInt())
		if !p.accept(",") {
			break
		}
	}
	p.expect("]")
	return d
}

// parseSignature reads an op's trailing type signature of the given kind,
// checks it against the operands, and returns the result types.
func (p *parser) parseSignature(op *Op, kind string) []Type {
	if kind == "none" {
		return nil
	}
	if kind == "opt" {
		if p.accept(":") {
			p.typesFor(op, len(op.Operands))
		}
		return nil
	}
	p.expect(":")
	if kind == "close" && p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	off := p.tok.off
	switch kind {
	case "fn":
		return p.parseOpSignatureAfterColon(op, off)
	case "res":
		return p.typeCommaList()
	case "one":
		p.parseType()
		return nil
	case "close":
		p.typesFor(op, 2)
		return nil
	case "pair":
		return p.typesFor(op, len(op.Operands))
	case "chlo1":
		p.parseType()
		p.expect("->")
		return p.parseTypeList()
	case "chlo2":
		p.parseType()
		p.expect(",")
		p.parseType()
		p.expect("->")
		return p.parseTypeList()
	}
	t := p.parseType()
	if ft, ok := t.(FunctionType); ok {
		if len(ft.Inputs) != len(op.Operands) {
			p.fail(off, "%s has %d operands but its type lists %d", op.Name, len(op.Operands), len(ft.Inputs))
		}
		return ft.Results
	}
	switch kind {
	case "select":
		p.expect(",")
		return []Type{p.parseType()}
	case "tuple":
		if _, ok := t.(TupleType); !ok {
			p.fail(off, "expected a tuple type")
		}
	case "complex":
		if tt, ok := t.(TensorType); !ok || !isComplex(tt.Elem) {
			p.fail(off, "expected a tensor of complex type")
		}
	}
	return []Type{t}
}

func isComplex(t Type) bool {
	_, ok := t.(ComplexType)
	return ok
}

// typeCommaList reads `T, U, ...` (at least one type).
func (p *parser) typeCommaList() []Type {
	ts := []Type{p.parseType()}
	for p.accept(",") {
		ts = append(ts, p.parseType())
	}
	return ts
}

// parseOpSignatureAfterColon reads a function type and checks its inputs
// against the operands.
func (p *parser) parseOpSignatureAfterColon(op *Op, off int) []Type {
	ft, ok := p.parseType().(FunctionType)
	if !ok {
		p.fail(off, "expected a function type for %s", op.Name)
	}
	if len(ft.Inputs) != len(op.Operands) {
		p.fail(off, "%s has %d operands but its type lists %d", op.Name, len(op.Operands), len(ft.Inputs))
	}
	return ft.Results
}
