package mlir

import (
	"strconv"
	"strings"
)

// parseWhile reads `stablehlo.while(%iterArg = %init, ...) : T, ...
// [attributes {...}] cond {...} do {...}`. Both regions take the iteration
// arguments as their entry block's arguments; the results have the
// operands' types.
func parseWhile(p *parser, op *Op, _ int) []Type {
	p.expect("(")
	var names []string
	for !p.is(")") {
		if p.tok.kind != tPercent || strings.IndexByte(p.tok.text, '#') >= 0 {
			p.fail(p.tok.off, "expected an iteration argument, found %s", p.describe())
		}
		names = append(names, p.tok.text)
		p.next()
		p.expect("=")
		op.Operands = append(op.Operands, p.use())
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	var types []Type
	if len(op.Operands) > 0 {
		p.expect(":")
		types = p.typesFor(op, len(op.Operands))
	}
	if p.accept("attributes") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	args := func() []*Value {
		vs := make([]*Value, len(names))
		for i, n := range names {
			vs[i] = &Value{Name: n, Type: types[i]}
		}
		return vs
	}
	p.expect("cond")
	op.Regions = append(op.Regions, p.parseRegion(nonNil(args()), false))
	p.expect("do")
	op.Regions = append(op.Regions, p.parseRegion(nonNil(args()), false))
	for _, r := range op.Regions {
		if len(r.Blocks) > 0 && len(r.Blocks[0].Args) == 0 {
			r.Blocks[0].Args = nil
		}
	}
	return types
}

// nonNil makes an empty argument list non-nil, which tells parseRegion to
// create the entry block even when the region has no ops.
func nonNil(vs []*Value) []*Value {
	if vs == nil {
		return []*Value{}
	}
	return vs
}

// parseReduce reads both pretty forms of stablehlo.reduce:
//
//	stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (A, B) -> C
//	stablehlo.reduce(%x init: %z), ... across dimensions = [1] : (A, B) -> C
//	  reducer(%a: T, %b: T) ... { ... }
//
// The first synthesizes the region its parser builds: a block of two
// scalar tensors of the first input's element type, the op, and the op's
// dialect's return. Operands are the inputs, then the inits.
func parseReduce(p *parser, op *Op, _ int) []Type {
	var inputs, inits []*Value
	for {
		p.expect("(")
		inputs = append(inputs, p.use())
		p.expect("init")
		p.expect(":")
		inits = append(inits, p.use())
		p.expect(")")
		if !p.accept(",") {
			break
		}
	}
	op.Operands = append(inputs, inits...)
	inner, innerOff := "", 0
	if p.accept("applies") {
		if p.tok.kind != tIdent || !strings.Contains(p.tok.text, ".") {
			p.fail(p.tok.off, "expected the reduction op's name after applies, found %s", p.describe())
		}
		inner, innerOff = p.tok.text, p.tok.off
		p.next()
	}
	p.expect("across")
	p.expect("dimensions")
	p.expect("=")
	op.Attrs = append(op.Attrs, NamedAttr{Name: "dimensions", Value: p.parseI64Array()})
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	p.expect(":")
	off := p.tok.off
	ft, ok := p.parseType().(FunctionType)
	if !ok || len(ft.Inputs) != len(op.Operands) {
		p.fail(off, "expected a function type with %d inputs for %s", len(op.Operands), op.Name)
	}
	types := ft.Results
	if inner != "" {
		t, ok := ft.Inputs[0].(TensorType)
		if !ok {
			p.fail(off, "the reduction's first input must be a tensor")
		}
		op.Regions = []*Region{reduceRegion(inner, p.lx.pos(innerOff), t.Elem)}
		return types
	}
	p.expect("reducer")
	var firsts, seconds []*Value
	for p.accept("(") {
		firsts = append(firsts, p.blockArg())
		p.expect(",")
		seconds = append(seconds, p.blockArg())
		p.expect(")")
	}
	op.Regions = []*Region{p.parseRegion(nonNil(append(firsts, seconds...)), false)}
	return types
}

// blockArg reads `%name: type [loc(...)]` as a not yet defined argument.
func (p *parser) blockArg() *Value {
	if p.tok.kind != tPercent || strings.IndexByte(p.tok.text, '#') >= 0 {
		p.fail(p.tok.off, "expected a block argument, found %s", p.describe())
	}
	v := &Value{Name: p.tok.text}
	p.next()
	p.expect(":")
	v.Type = p.parseType()
	if p.is("loc") {
		p.parseLoc()
	}
	return v
}

// reduceRegion builds the body of the compact reduce form.
func reduceRegion(inner string, pos Pos, elem Type) *Region {
	scalar := TensorType{Elem: elem}
	lhs := &Value{Name: "%lhs", Type: scalar, Index: 0}
	rhs := &Value{Name: "%rhs", Type: scalar, Index: 1}
	body := &Op{Name: inner, Operands: []*Value{lhs, rhs}, Pos: pos}
	body.Results = []*Value{{Name: "%0", Type: scalar, Def: body}}
	dialect, _, _ := strings.Cut(inner, ".")
	ret := &Op{Name: dialect + ".return", Operands: body.Results, Pos: pos}
	return &Region{Blocks: []*Block{{Args: []*Value{lhs, rhs}, Ops: []*Op{body, ret}}}}
}

// parseConvolution reads `stablehlo.convolution(%lhs, %rhs) dim_numbers =
// [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [..], pad =
// [[..]], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]} {attrs} :
// (A, B) -> C` into dimension_numbers (#stablehlo.conv), window_strides,
// padding (dense<...> : tensor<Nx2xi64>, a splat when all equal, as MLIR
// prints it), lhs_dilation, rhs_dilation and window_reversal (array<i1>).
func parseConvolution(p *parser, op *Op, _ int) []Type {
	p.expect("(")
	op.Operands = p.useList()
	p.expect(")")
	p.expect("dim_numbers")
	p.expect("=")
	start := p.tok.off
	fields := p.parseConvLayout()
	raw := canonicalRaw(p.lx.src[start:p.prevEnd])
	op.Attrs = append(op.Attrs, NamedAttr{Name: "dimension_numbers",
		Value: DialectAttr{Name: "stablehlo.conv", Fields: fields, Raw: raw}})
	p.expect(",")
	p.expect("window")
	p.expect("=")
	p.expect("{")
	for !p.is("}") {
		p.parseWindowAttr(op)
		if !p.accept(",") {
			break
		}
	}
	p.expect("}")
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}

// windowNames maps the pretty window keys to generic attribute names.
var windowNames = map[string]string{
	"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
	"rhs_dilate": "rhs_dilation", "reverse": "window_reversal",
}

func (p *parser) parseWindowAttr(op *Op) {
	key, off := p.tok.text, p.tok.off
	name, ok := windowNames[key]
	if p.tok.kind != tIdent || !ok {
		p.fail(off, "unexpected %s in convolution window", p.describe())
	}
	if op.Attr(name) != nil {
		p.fail(off, "window %s given twice", key)
	}
	p.next()
	p.expect("=")
	var v Attr
	switch key {
	case "pad":
		v = p.parsePadding()
	case "reverse":
		d := DenseArrayAttr{Elem: IntType{Width: 1}}
		p.expect("[")
		for !p.is("]") {
			switch {
			case p.accept("true"):
				d.Ints = append(d.Ints, 1)
			case p.accept("false"):
				d.Ints = append(d.Ints, 0)
			default:
				if p.parseSignedInt() != 0 {
					d.Ints = append(d.Ints, 1)
				} else {
					d.Ints = append(d.Ints, 0)
				}
			}
			if !p.accept(",") {
				break
			}
		}
		p.expect("]")
		v = d
	default:
		v = p.parseI64Array()
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: name, Value: v})
}

// parsePadding reads `[[lo, hi], ...]` as dense<...> : tensor<Nx2xi64>
// (`[]` as dense<> : tensor<0x2xi64>).
func (p *parser) parsePadding() Attr {
	p.expect("[")
	var elems []string
	for !p.is("]") {
		p.expect("[")
		lo := p.parseSignedInt()
		p.expect(",")
		hi := p.parseSignedInt()
		p.expect("]")
		elems = append(elems, strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10))
		if !p.accept(",") {
			break
		}
	}
	p.expect("]")
	d := DenseAttr{Type: TensorType{Dims: []int64{int64(len(elems) / 2), 2}, Elem: i64Type}, Elems: elems}
	splat := len(elems) > 0
	for _, e := range elems {
		splat = splat && e == elems[0]
	}
	if splat {
		d.Elems, d.Splat = elems[:1], true
	}
	return d
}
