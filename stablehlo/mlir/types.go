package mlir

import (
	"strconv"
	"strings"
)

// floatTypes are MLIR's builtin float type names.
var floatTypes = map[string]bool{
	"bf16": true, "f16": true, "f32": true, "f64": true, "f80": true, "f128": true, "tf32": true,
	"f8E5M2": true, "f8E4M3": true, "f8E4M3FN": true, "f8E5M2FNUZ": true, "f8E4M3FNUZ": true,
	"f8E4M3B11FNUZ": true, "f8E3M4": true, "f8E8M0FNU": true,
	"f4E2M1FN": true, "f6E2M3FN": true, "f6E3M2FN": true,
}

// intTypeName parses i32, si8, ui4 into an IntType.
func intTypeName(s string) (IntType, bool) {
	var sign byte
	switch {
	case strings.HasPrefix(s, "si"):
		sign, s = 's', s[2:]
	case strings.HasPrefix(s, "ui"):
		sign, s = 'u', s[2:]
	case strings.HasPrefix(s, "i"):
		s = s[1:]
	default:
		return IntType{}, false
	}
	if s == "" || s[0] == '0' {
		return IntType{}, false
	}
	w, err := strconv.Atoi(s)
	if err != nil || w > 1<<16 {
		return IntType{}, false
	}
	return IntType{Width: w, Signedness: sign}, true
}

// isTypeStart reports whether the current token can begin a type.
func (p *parser) isTypeStart() bool {
	switch p.tok.kind {
	case tBang:
		return true
	case tPunct:
		return p.tok.text == "("
	case tIdent:
		s := p.tok.text
		if _, ok := intTypeName(s); ok || floatTypes[s] {
			return true
		}
		switch s {
		case "tensor", "complex", "tuple", "index", "none", "vector", "memref":
			return true
		}
	}
	return false
}

// parseType reads one type.
func (p *parser) parseType() Type {
	p.enter()
	defer p.leave()
	off := p.tok.off
	switch p.tok.kind {
	case tBang:
		return p.parseDialectType()
	case tPunct:
		if p.tok.text == "(" {
			return p.parseFunctionType()
		}
	case tIdent:
		s := p.tok.text
		if t, ok := intTypeName(s); ok {
			p.next()
			return t
		}
		if floatTypes[s] {
			p.next()
			return FloatType{Name: s}
		}
		switch s {
		case "index":
			p.next()
			return IndexType{}
		case "none":
			p.next()
			return OpaqueType{Text: "none"}
		case "memref", "vector":
			// Builtin types StableHLO programs rarely hold (custom_call
			// buffers), kept as text.
			end := p.tok.end
			if end >= p.lx.end || p.lx.src[end] != '<' {
				p.fail(p.tok.end, "expected '<' after %s", s)
			}
			end = p.scanBalanced(end)
			p.reset(end)
			return OpaqueType{Text: string(p.lx.src[off:end])}
		case "tensor":
			return p.parseTensorTypeCached()
		case "complex":
			p.next()
			p.expect("<")
			t := ComplexType{Elem: p.parseType()}
			p.expect(">")
			return t
		case "tuple":
			p.next()
			p.expect("<")
			var t TupleType
			for !p.is(">") {
				t.Elems = append(t.Elems, p.parseType())
				if !p.accept(",") {
					break
				}
			}
			p.expect(">")
			return t
		}
	}
	p.fail(off, "expected a type, found %s", p.describe())
	return nil
}

// parseTypeList reads `T` or `(T, U)` (a result list).
func (p *parser) parseTypeList() []Type {
	if !p.is("(") {
		return []Type{p.parseType()}
	}
	p.next()
	var ts []Type
	for !p.is(")") {
		ts = append(ts, p.parseType())
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	return ts
}

// parseFunctionType reads `(A, B) -> C` or `(A) -> (B, C)`. A parenthesized
// single type not followed by `->` is that type.
func (p *parser) parseFunctionType() Type {
	ins := p.parseParenTypes()
	if !p.accept("->") {
		if len(ins) == 1 {
			return ins[0]
		}
		p.fail(p.tok.off, "expected '->' in function type, found %s", p.describe())
	}
	return FunctionType{Inputs: ins, Results: p.parseTypeList()}
}

// parseParenTypes reads `(T, U)`.
func (p *parser) parseParenTypes() []Type {
	p.expect("(")
	var ts []Type
	for !p.is(")") {
		ts = append(ts, p.parseType())
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	return ts
}

// parseTensorTypeCached parses each distinct tensor type spelling once per
// Parse: programs repeat a few types thousands of times, and the shared
// values (types are never mutated) save most of the parser's allocations.
func (p *parser) parseTensorTypeCached() Type {
	off, open := p.tok.off, p.tok.end
	if open >= p.lx.end || p.lx.src[open] != '<' {
		return p.parseTensorType()
	}
	end, _, msg := p.balancedEnd(open)
	if msg != "" {
		return p.parseTensorType() // which reports the error where it is
	}
	if t, ok := p.typeCache[string(p.lx.src[off:end])]; ok {
		p.reset(end)
		return t
	}
	t := p.parseTensorType()
	if p.typeCache == nil {
		p.typeCache = map[string]Type{}
	}
	p.typeCache[string(p.lx.src[off:end])] = t
	return t
}

// parseTensorType reads `tensor<2x?x3xf32, #enc>` or `tensor<*xf32>`. The
// dimension list is scanned by character, as MLIR's lexer does, since
// `2x3xf32` is not a sequence of ordinary tokens.
func (p *parser) parseTensorType() Type {
	p.next()
	if !p.is("<") {
		p.fail(p.tok.off, "expected '<' after tensor")
	}
	t := TensorType{}
	src, i := p.lx.src, p.tok.end
	for {
		for i < p.lx.end && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		if i >= p.lx.end {
			break
		}
		start := i
		switch c := src[i]; {
		case c == '*':
			t.Unranked = true
			i++
		case c == '?':
			t.Dims = append(t.Dims, -1)
			i++
		case isDigit(c):
			for i < p.lx.end && isDigit(src[i]) {
				i++
			}
			d, err := strconv.ParseInt(string(src[start:i]), 10, 64)
			if err != nil {
				p.fail(start, "dimension %s out of range", src[start:i])
			}
			t.Dims = append(t.Dims, d)
		}
		if i == start {
			break
		}
		if i >= p.lx.end || src[i] != 'x' {
			p.fail(i, "expected 'x' after a dimension")
		}
		i++
	}
	p.reset(i)
	t.Elem = p.parseType()
	if p.accept(",") {
		t.Encoding = p.parseAttr()
	}
	p.expect(">")
	return t
}

// parseDialectType reads `!stablehlo.token`, `!quant.uniform<...>`, a type
// alias, or any other `!d.name<...>` kept as text.
func (p *parser) parseDialectType() Type {
	name, off := p.tok.text, p.tok.off
	switch name {
	case "!stablehlo.token":
		p.next()
		return TokenType{}
	case "!quant.uniform":
		p.next()
		return p.parseQuantType()
	}
	if t, ok := p.typeAliases[name]; ok {
		p.next()
		return t
	}
	if !strings.Contains(name, ".") {
		p.fail(off, "undefined type alias %s", name)
	}
	end := p.tok.end
	if end < p.lx.end && p.lx.src[end] == '<' {
		end = p.scanBalanced(end)
	}
	p.reset(end)
	return OpaqueType{Text: string(p.lx.src[off:end])}
}

// parseQuantType reads the body of `!quant.uniform<...>`:
// storage[<min:max>]:expressed[:axis], scale[:zp] or {scale:zp, ...}.
func (p *parser) parseQuantType() Type {
	p.expect("<")
	q := QuantType{Axis: -1}
	off := p.tok.off
	var st IntType
	if w, err := strconv.Atoi(strings.TrimPrefix(p.tok.text, "u")); p.tok.kind == tIdent &&
		strings.HasPrefix(p.tok.text, "u") && err == nil && w > 0 && w <= 64 {
		st = IntType{Width: w, Signedness: 'u'} // the quant dialect's u8
		p.next()
	} else if t, ok := p.parseType().(IntType); ok {
		st = t
	} else {
		p.fail(off, "quantized storage type must be an integer type")
	}
	q.Storage = st
	if p.accept("<") {
		q.StorageMin, q.StorageMax, q.HasRange = p.parseSignedInt(), 0, true
		p.expect(":")
		q.StorageMax = p.parseSignedInt()
		p.expect(">")
	} else {
		q.StorageMin, q.StorageMax = intRange(st)
	}
	p.expect(":")
	off = p.tok.off
	q.Expressed = p.parseType()
	if _, ok := q.Expressed.(FloatType); !ok {
		p.fail(off, "quantized expressed type must be a float type")
	}
	if p.accept(":") {
		q.Axis = int(p.parseSignedInt())
	}
	p.expect(",")
	if p.accept("{") {
		for !p.is("}") {
			p.parseScaleZP(&q)
			if !p.accept(",") {
				break
			}
		}
		p.expect("}")
	} else {
		p.parseScaleZP(&q)
	}
	p.expect(">")
	return q
}

func (p *parser) parseScaleZP(q *QuantType) {
	q.Scales = append(q.Scales, p.parseSignedFloat())
	zp := int64(0)
	if p.accept(":") {
		zp = p.parseSignedInt()
	}
	q.ZeroPoints = append(q.ZeroPoints, zp)
}

// intRange is the full range of an integer storage type. Signless storage
// in the quant dialect is signed.
func intRange(t IntType) (lo, hi int64) {
	w := t.Width
	if w > 63 {
		w = 63
	}
	if t.Signedness == 'u' {
		return 0, 1<<w - 1
	}
	return -(1 << (w - 1)), 1<<(w-1) - 1
}

// parseSignedInt reads an optionally negative decimal or hex integer.
func (p *parser) parseSignedInt() int64 {
	neg := p.accept("-")
	if p.tok.kind != tInt {
		p.fail(p.tok.off, "expected an integer, found %s", p.describe())
	}
	v, ok := parseUint(p.tok.text)
	if !ok {
		p.fail(p.tok.off, "integer %s out of range", p.tok.text)
	}
	p.next()
	if neg {
		return -int64(v)
	}
	return int64(v)
}

// parseUint reads a decimal or 0x integer of up to 64 bits.
func parseUint(s string) (uint64, bool) {
	var v uint64
	var err error
	if strings.HasPrefix(s, "0x") {
		v, err = strconv.ParseUint(s[2:], 16, 64)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	return v, err == nil
}

// parseSignedFloat reads an optionally negative float or integer literal.
func (p *parser) parseSignedFloat() float64 {
	neg := p.accept("-")
	if p.tok.kind != tInt && p.tok.kind != tFloat {
		p.fail(p.tok.off, "expected a number, found %s", p.describe())
	}
	v, err := strconv.ParseFloat(p.tok.text, 64)
	if err != nil {
		p.fail(p.tok.off, "bad number %s", p.tok.text)
	}
	p.next()
	if neg {
		return -v
	}
	return v
}
