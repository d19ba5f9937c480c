package mlir

import (
	"strings"
)

// parseDense reads `dense<...> : type`: a hex blob string, a splat
// element, or nested lists flattened to element tokens.
func (p *parser) parseDense() Attr {
	start := p.tok.off
	p.next()
	p.expect("<")
	d := DenseAttr{}
	switch {
	case p.is(">"):
	case p.tok.kind == tString:
		s, off, written := p.tok.text, p.tok.off, p.lx.text(p.tok)
		p.next()
		if strings.HasPrefix(s, "0x") {
			d.Hex = decodeHex(p, s[2:], off)
		} else {
			d.Elems = []string{written}
			d.Splat = true
		}
	case p.is("["):
		p.denseList(&d.Elems)
	default:
		d.Elems = []string{p.denseElem()}
		d.Splat = true
	}
	p.expect(">")
	p.expect(":")
	d.Type = p.parseType()
	if d.Hex != nil {
		d.Splat = hexIsSplat(d.Type, len(d.Hex))
	} else if n, ok := staticCount(d.Type); ok && !d.Splat && int64(len(d.Elems)) != n {
		// As MLIR: a list gives every element; only a bare element splats.
		p.fail(start, "dense literal has %d elements, its type %d", len(d.Elems), n)
	}
	return d
}

// staticCount is the element count of a ranked, static tensor type.
func staticCount(t Type) (int64, bool) {
	tt, ok := t.(TensorType)
	if !ok || tt.Unranked {
		return 0, false
	}
	n := int64(1)
	for _, d := range tt.Dims {
		if d < 0 {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// denseList reads a nested `[...]` list, appending its elements in order.
func (p *parser) denseList(elems *[]string) {
	p.enter()
	defer p.leave()
	p.expect("[")
	for !p.is("]") {
		if p.is("[") {
			p.denseList(elems)
		} else {
			*elems = append(*elems, p.denseElem())
		}
		if !p.accept(",") {
			break
		}
	}
	p.expect("]")
}

// denseElem reads one element token: a signed number, true/false, inf,
// nan, a quoted string, or a complex pair `(re, im)` (kept as "(re, im)").
func (p *parser) denseElem() string {
	p.enter()
	defer p.leave()
	if p.accept("(") {
		re := p.denseElem()
		p.expect(",")
		im := p.denseElem()
		p.expect(")")
		return "(" + re + ", " + im + ")"
	}
	sign := ""
	if p.accept("-") {
		sign = "-"
	}
	switch {
	case p.tok.kind == tInt || p.tok.kind == tFloat:
	case sign == "" && (p.is("true") || p.is("false")):
	case p.is("inf") || p.is("nan"):
	case sign == "" && p.tok.kind == tString:
		s := p.lx.text(p.tok)
		p.next()
		return s
	default:
		p.fail(p.tok.off, "expected a dense element, found %s", p.describe())
	}
	s := sign + p.tok.text
	p.next()
	return s
}

func decodeHex(p *parser, s string, off int) []byte {
	if len(s)%2 != 0 {
		p.fail(off, "hex blob has an odd number of digits")
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, lo := s[2*i], s[2*i+1]
		if !isHex(hi) || !isHex(lo) {
			p.fail(off, "bad hex digit in dense blob")
		}
		b[i] = hexVal(hi)<<4 | hexVal(lo)
	}
	return b
}

// hexIsSplat reports whether a hex blob of n bytes holds one element of a
// type with more than one: MLIR reads such a blob as a splat.
func hexIsSplat(t Type, n int) bool {
	tt, ok := t.(TensorType)
	if !ok || tt.Unranked {
		return false
	}
	count := int64(1)
	for _, d := range tt.Dims {
		if d < 0 {
			return false
		}
		count *= d
	}
	size := ElemBytes(tt.Elem)
	return count > 1 && size > 0 && n == size
}

// ElemBytes is the storage size in bytes of one element of a dense hex
// blob of element type t (i1 takes a byte; sub-byte types a byte each);
// 0 if unknown.
func ElemBytes(t Type) int {
	switch t := t.(type) {
	case IntType:
		return (t.Width + 7) / 8
	case FloatType:
		switch t.Name {
		case "f16", "bf16":
			return 2
		case "f32", "tf32":
			return 4
		case "f64":
			return 8
		case "f80", "f128":
			return 16
		}
		return 1
	case ComplexType:
		return 2 * ElemBytes(t.Elem)
	case IndexType:
		return 8
	case QuantType:
		return ElemBytes(t.Storage)
	}
	return 0
}
