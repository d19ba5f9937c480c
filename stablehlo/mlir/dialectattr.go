package mlir

import (
	"strings"
)

// parseHashAttr reads `#d.name<body>`, `#d<name body>`, `#d.name` or an
// attribute alias `#alias`.
func (p *parser) parseHashAttr() Attr {
	name, src := p.tok.text, p.lx.src
	if p.tok.end >= p.lx.end || src[p.tok.end] != '<' {
		if a, ok := p.attrAliases[name]; ok {
			p.next()
			return a
		}
		if a, ok := p.locAliases[name]; ok {
			p.next()
			return a
		}
		if strings.Contains(name, ".") {
			p.next()
			return DialectAttr{Name: name[1:]}
		}
		p.fail(p.tok.off, "undefined attribute alias %s", name)
	}
	return p.dialectAttrBody(name[1:], p.tok.end)
}

// dialectAttrBody reads the `<...>` starting at offset open as the body of
// the dialect attribute dname ("stablehlo.dot", or "stablehlo" when the
// mnemonic is the body's first word).
func (p *parser) dialectAttrBody(dname string, open int) Attr {
	src := p.lx.src
	end := p.scanBalanced(open)
	body, bodyOff := src[open+1:end-1], open+1
	if !strings.Contains(dname, ".") {
		// `#stablehlo<comparison_direction LT>`: the first word is the mnemonic.
		i := 0
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		j := i
		for j < len(body) && isIDChar(body[j]) {
			j++
		}
		if j == i {
			p.fail(bodyOff+i, "expected an attribute mnemonic after #%s<", dname)
		}
		dname += "." + string(body[i:j])
		body, bodyOff = body[j:], bodyOff+j
	}
	a := DialectAttr{Name: dname, Raw: canonicalRaw(body)}
	if dname == "stablehlo.conv" {
		a.Fields = p.subParse(bodyOff, end-1, func(q *parser) []NamedAttr { return q.parseConvLayout() })
	} else {
		a.Fields = p.subParse(bodyOff, end-1, (*parser).parseFieldList)
	}
	p.reset(end)
	return a
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// subParse runs f over src[from:to] with a parser of its own, returning
// nil if the text does not have the shape f reads: a dialect attribute's
// body is structured only when it is, and Raw always holds it.
func (p *parser) subParse(from, to int, f func(*parser) []NamedAttr) (out []NamedAttr) {
	lx := &lexer{src: p.lx.src, end: to, off: from, lines: p.lx.lines, file: p.lx.file, names: p.lx.names}
	q := &parser{lx: lx, depth: p.depth, attrAliases: p.attrAliases, typeAliases: p.typeAliases,
		locAliases: p.locAliases}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*Error); !ok {
				panic(r)
			}
			out = nil
		}
	}()
	q.next()
	if q.tok.kind == tEOF {
		return nil
	}
	out = f(q)
	if q.tok.kind != tEOF {
		return nil
	}
	return out
}

// parseFieldList reads `key = attr, key = attr`, the shape of StableHLO's
// struct attributes (#stablehlo.dot<...>, #stablehlo.gather<...>).
func (p *parser) parseFieldList() []NamedAttr {
	var fs []NamedAttr
	for {
		if p.tok.kind != tIdent {
			p.fail(p.tok.off, "expected a field name")
		}
		name := p.tok.text
		p.next()
		p.expect("=")
		fs = append(fs, NamedAttr{Name: name, Value: p.parseAttr()})
		if !p.accept(",") {
			return fs
		}
	}
}

// canonicalRaw normalizes a dialect attribute body's spacing so that the
// same attribute written by hand and by a printer compares equal: white
// space is dropped except between two word characters, a comma is
// followed by one space and `=` is surrounded by one; strings are kept.
func canonicalRaw(b []byte) string {
	var out []byte
	space := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if isSpace(c) {
			space = true
			continue
		}
		if space && len(out) > 0 && isWordish(out[len(out)-1]) && isWordish(c) {
			out = append(out, ' ')
		}
		space = false
		switch c {
		case ',':
			out = append(out, ", "...)
		case '=':
			for len(out) > 0 && out[len(out)-1] == ' ' {
				out = out[:len(out)-1]
			}
			out = append(out, " = "...)
		case '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) {
				j = len(b) - 1
			}
			out = append(out, b[i:j+1]...)
			i = j
		default:
			out = append(out, c)
		}
	}
	return strings.TrimRight(string(out), " ")
}

func isWordish(c byte) bool {
	return isIDChar(c) || c == '"' || c == '%' || c == '@' || c == '#' || c == '!' || c == '-'
}
