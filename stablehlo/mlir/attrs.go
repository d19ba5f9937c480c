package mlir

import (
	"math"

	"github.com/axle-ml/axle/hlo/minifloat"
	"strconv"
	"strings"
)

// parseDict reads `{name = attr, unit_name, "quoted" = attr}`, sorted.
func (p *parser) parseDict() []NamedAttr {
	p.enter()
	defer p.leave()
	p.expect("{")
	var as []NamedAttr
	for !p.is("}") {
		if p.tok.kind != tIdent && p.tok.kind != tString {
			p.fail(p.tok.off, "expected an attribute name, found %s", p.describe())
		}
		a := NamedAttr{Name: p.tok.text, Value: UnitAttr{}}
		p.next()
		if p.accept("=") {
			a.Value = p.parseAttr()
		}
		as = append(as, a)
		if !p.accept(",") {
			break
		}
	}
	p.expect("}")
	return sortAttrs(as)
}

// parseAttr reads one attribute value. Untyped integers and floats get
// MLIR's defaults (i64, f64), as the generic printer shows them.
func (p *parser) parseAttr() Attr {
	p.enter()
	defer p.leave()
	switch p.tok.kind {
	case tInt, tFloat:
		return p.parseNumberAttr(false)
	case tString:
		s := p.tok.text
		p.next()
		if p.is(":") && p.peekIsType() {
			p.next()
			p.parseType()
		}
		return StringAttr{Value: s}
	case tAt:
		return p.parseSymbolRef()
	case tHash:
		return p.parseHashAttr()
	case tBang:
		return TypeAttr{Type: p.parseType()}
	case tPunct:
		switch p.tok.text {
		case "-":
			p.next()
			if p.tok.kind != tInt && p.tok.kind != tFloat && !p.is("inf") {
				p.fail(p.tok.off, "expected a number after '-', found %s", p.describe())
			}
			return p.parseNumberAttr(true)
		case "[":
			return p.parseArrayAttr()
		case "{":
			return DictAttr{Entries: p.parseDict()}
		case "(":
			return TypeAttr{Type: p.parseType()}
		}
	case tIdent:
		switch p.tok.text {
		case "true", "false":
			v := p.tok.text == "true"
			p.next()
			return BoolAttr{Value: v}
		case "unit":
			p.next()
			return UnitAttr{}
		case "dense":
			return p.parseDense()
		case "dense_resource":
			return p.parseDenseResource()
		case "array":
			return p.parseDenseArray()
		case "loc":
			return p.parseLoc()
		case "inf", "nan":
			return p.parseNumberAttr(false)
		}
		if p.isTypeStart() {
			return TypeAttr{Type: p.parseType()}
		}
	}
	p.fail(p.tok.off, "expected an attribute, found %s", p.describe())
	return nil
}

// peekIsType reports whether the token after the current one starts a type.
func (p *parser) peekIsType() bool {
	save, tok, prev := p.lx.off, p.tok, p.prevEnd
	p.next()
	ok := p.isTypeStart()
	p.lx.off, p.tok, p.prevEnd = save, tok, prev
	return ok
}

// parseNumberAttr reads a number (the sign already consumed) with an
// optional `: type`. A hex literal typed as a float is its bit pattern.
func (p *parser) parseNumberAttr(neg bool) Attr {
	tok := p.tok
	p.next()
	var typ Type
	if p.is(":") && p.peekIsType() {
		p.next()
		typ = p.parseType()
	}
	_, isFloat := typ.(FloatType)
	if tok.kind == tInt && !isFloat {
		if typ == nil {
			typ = IntType{Width: 64}
		}
		v, ok := parseUint(tok.text)
		if !ok {
			p.fail(tok.off, "integer %s out of range", tok.text)
		}
		if neg {
			return IntAttr{Value: -int64(v), Type: typ}
		}
		return IntAttr{Value: int64(v), Type: typ}
	}
	if typ == nil {
		typ = FloatType{Name: "f64"}
	}
	v, ok := floatValue(tok.text, typ)
	if !ok {
		p.fail(tok.off, "bad float literal %s", tok.text)
	}
	if neg {
		v = -v
	}
	return FloatAttr{Value: v, Type: typ}
}

// floatValue converts a float literal, `inf`, `nan`, or a hex bit pattern
// of a float type (f64, f32, and the 16- and 8-bit formats of package
// minifloat) to a float64.
func floatValue(s string, typ Type) (float64, bool) {
	switch s {
	case "inf":
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	if strings.HasPrefix(s, "0x") {
		bits, ok := parseUint(s)
		if !ok {
			return 0, false
		}
		name := ""
		if ft, ok := typ.(FloatType); ok {
			name = ft.Name
		}
		switch name {
		case "f64":
			return math.Float64frombits(bits), true
		case "f32":
			return float64(math.Float32frombits(uint32(bits))), true
		}
		if f := minifloat.Find(strings.ToLower(name)); f != nil && bits < 1<<f.Bits() {
			return f.ToFloat64(uint16(bits)), true
		}
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// parseSymbolRef reads `@a` or `@a::@b`.
func (p *parser) parseSymbolRef() Attr {
	name := p.tok.text
	p.next()
	for p.is("::") {
		p.next()
		if p.tok.kind != tAt {
			p.fail(p.tok.off, "expected a symbol after '::', found %s", p.describe())
		}
		name += "::" + p.tok.text
		p.next()
	}
	return SymbolRefAttr{Name: name}
}

// parseArrayAttr reads `[a, b, ...]`.
func (p *parser) parseArrayAttr() Attr {
	p.expect("[")
	var a ArrayAttr
	for !p.is("]") {
		a.Elems = append(a.Elems, p.parseAttr())
		if !p.accept(",") {
			break
		}
	}
	p.expect("]")
	return a
}

// parseDenseArray reads `array<i64: 1, 2>`, `array<i1: true>`, `array<f32: 1.0>`.
func (p *parser) parseDenseArray() Attr {
	p.next()
	p.expect("<")
	d := DenseArrayAttr{Elem: p.parseType()}
	_, isFloat := d.Elem.(FloatType)
	if p.accept(":") {
		for !p.is(">") {
			switch {
			case p.is("true") || p.is("false"):
				d.Ints = append(d.Ints, map[bool]int64{true: 1, false: 0}[p.is("true")])
				p.next()
			case isFloat:
				d.Floats = append(d.Floats, p.parseSignedFloat())
			default:
				d.Ints = append(d.Ints, p.parseSignedInt())
			}
			if !p.accept(",") {
				break
			}
		}
	}
	p.expect(">")
	return d
}
