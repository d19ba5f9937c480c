package mlir

import (
	"strconv"
	"strings"
)

// Pretty forms with custom parsers in StableHLO (hasCustomAssemblyFormat,
// or custom<...> directives that a spec string cannot express). Each
// produces exactly the generic form's attributes and regions.
func init() {
	prettyOps["stablehlo.constant"] = parseConstant
	prettyOps["stablehlo.compare"] = parseCompare
	prettyOps["stablehlo.slice"] = parseSlice
	prettyOps["stablehlo.dot"] = parseDot
	prettyOps["stablehlo.dot_general"] = parseDotGeneral
	prettyOps["stablehlo.reduce_precision"] = parseReducePrecision
	prettyOps["stablehlo.optimization_barrier"] = parseOptimizationBarrier
	prettyOps["stablehlo.while"] = parseWhile
	prettyOps["stablehlo.reduce"] = parseReduce
	prettyOps["stablehlo.convolution"] = parseConvolution
	prettyOps["stablehlo.composite"] = parseComposite
	prettyOps["chlo.scan"] = parseScan
	prettyOps["arith.constant"] = parseValueConstant
	prettyOps["chlo.constant"] = parseValueConstant
}

var i64Type = IntType{Width: 64}

// parseConstant reads `stablehlo.constant {attrs} dense<...> : T`, or the
// generic tail `() <{value = ...}> : () -> T` that its parser also takes.
func parseConstant(p *parser, op *Op, _ int) []Type {
	if p.accept("(") {
		p.expect(")")
		if p.accept("<") {
			op.Attrs = append(op.Attrs, p.parseDict()...)
			p.expect(">")
		}
		if p.is("{") {
			op.Attrs = append(op.Attrs, p.parseDict()...)
		}
		return p.parseOpSignature(op)
	}
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	off := p.tok.off
	v := p.parseAttr()
	d, ok := v.(DenseAttr)
	if !ok {
		p.fail(off, "expected a dense constant value")
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: "value", Value: d})
	return []Type{d.Type}
}

// parseCompare reads `stablehlo.compare LT, %a, %b[, FLOAT] {attrs} : (A, B) -> C`.
func parseCompare(p *parser, op *Op, _ int) []Type {
	op.Attrs = append(op.Attrs, NamedAttr{Name: "comparison_direction",
		Value: p.parseEnum("stablehlo.comparison_direction")})
	p.expect(",")
	op.Operands = append(op.Operands, p.use())
	p.expect(",")
	op.Operands = append(op.Operands, p.use())
	if p.accept(",") {
		op.Attrs = append(op.Attrs, NamedAttr{Name: "compare_type",
			Value: p.parseEnum("stablehlo.comparison_type")})
	}
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}

// parseSlice reads `stablehlo.slice %x [0:2, 1:4:2] : (A) -> B` into
// start_indices, limit_indices and strides (stride 1 when not written).
func parseSlice(p *parser, op *Op, _ int) []Type {
	op.Operands = append(op.Operands, p.use())
	start, limit, stride := DenseArrayAttr{Elem: i64Type}, DenseArrayAttr{Elem: i64Type}, DenseArrayAttr{Elem: i64Type}
	p.expect("[")
	for !p.is("]") {
		start.Ints = append(start.Ints, p.parseSignedInt())
		p.expect(":")
		limit.Ints = append(limit.Ints, p.parseSignedInt())
		s := int64(1)
		if p.accept(":") {
			s = p.parseSignedInt()
		}
		stride.Ints = append(stride.Ints, s)
		if !p.accept(",") {
			break
		}
	}
	p.expect("]")
	op.Attrs = append(op.Attrs, NamedAttr{Name: "start_indices", Value: start},
		NamedAttr{Name: "limit_indices", Value: limit}, NamedAttr{Name: "strides", Value: stride})
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}

// parsePrecision reads `precision = [DEFAULT, HIGHEST]` (after its comma)
// into precision_config, an array of #stablehlo<precision X>.
func (p *parser) parsePrecision(op *Op) {
	p.expect("precision")
	p.expect("=")
	p.expect("[")
	var a ArrayAttr
	for !p.is("]") {
		a.Elems = append(a.Elems, p.parseEnum("stablehlo.precision"))
		if !p.accept(",") {
			break
		}
	}
	p.expect("]")
	op.Attrs = append(op.Attrs, NamedAttr{Name: "precision_config", Value: a})
}

// parseDot reads `stablehlo.dot %a, %b[, precision = [...]] : (A, B) -> C`.
func parseDot(p *parser, op *Op, _ int) []Type {
	op.Operands = append(op.Operands, p.use())
	p.expect(",")
	op.Operands = append(op.Operands, p.use())
	if p.accept(",") {
		p.parsePrecision(op)
	}
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}

// parseDotGeneral reads `stablehlo.dot_general %a, %b, [batching_dims =
// [0] x [0],] contracting_dims = [2] x [1][, precision = [...]][,
// algorithm = <...>] : (A, B) -> C`. dot_dimension_numbers gets the fields
// #stablehlo.dot<...> prints: the four lists, empty ones left out.
func parseDotGeneral(p *parser, op *Op, _ int) []Type {
	op.Operands = append(op.Operands, p.use())
	p.expect(",")
	op.Operands = append(op.Operands, p.use())
	p.expect(",")
	var lb, rb []int64
	if p.accept("batching_dims") {
		p.expect("=")
		lb, rb = p.parseDimPair()
		p.expect(",")
	}
	p.expect("contracting_dims")
	p.expect("=")
	lc, rc := p.parseDimPair()
	op.Attrs = append(op.Attrs, NamedAttr{Name: "dot_dimension_numbers", Value: dotDims(lb, rb, lc, rc)})
	if p.accept(",") {
		if !p.is("algorithm") {
			p.parsePrecision(op)
		}
		if p.is("algorithm") || p.accept(",") {
			p.expect("algorithm")
			p.expect("=")
			if !p.is("<") {
				p.fail(p.tok.off, "expected '<' after algorithm =")
			}
			op.Attrs = append(op.Attrs, NamedAttr{Name: "algorithm",
				Value: p.dialectAttrBody("stablehlo.dot_algorithm", p.tok.off)})
		}
	}
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}

// parseDimPair reads `[1, 2] x [3, 4]`.
func (p *parser) parseDimPair() ([]int64, []int64) {
	l := p.parseI64Array().(DenseArrayAttr).Ints
	p.expect("x")
	r := p.parseI64Array().(DenseArrayAttr).Ints
	return l, r
}

// dotDims builds #stablehlo.dot<...> as its printer writes it.
func dotDims(lb, rb, lc, rc []int64) DialectAttr {
	a := DialectAttr{Name: "stablehlo.dot"}
	var raw []string
	for _, f := range []struct {
		name string
		dims []int64
	}{{"lhs_batching_dimensions", lb}, {"rhs_batching_dimensions", rb},
		{"lhs_contracting_dimensions", lc}, {"rhs_contracting_dimensions", rc}} {
		if len(f.dims) == 0 {
			continue
		}
		a.Fields = append(a.Fields, NamedAttr{Name: f.name, Value: i64List(f.dims)})
		raw = append(raw, f.name+" = "+formatInts(f.dims))
	}
	a.Raw = strings.Join(raw, ", ")
	return a
}

// i64List is `[1, 2]` as an attribute inside a dialect attribute's body.
func i64List(vs []int64) ArrayAttr {
	a := ArrayAttr{}
	for _, v := range vs {
		a.Elems = append(a.Elems, IntAttr{Value: v, Type: i64Type})
	}
	return a
}

func formatInts(vs []int64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// parseReducePrecision reads `stablehlo.reduce_precision %x, format = e5m10 : T`.
func parseReducePrecision(p *parser, op *Op, _ int) []Type {
	op.Operands = append(op.Operands, p.use())
	p.expect(",")
	p.expect("format")
	p.expect("=")
	e, m, ok := parseExpMant(p.tok.text)
	if p.tok.kind != tIdent || !ok {
		p.fail(p.tok.off, "expected exponent mantissa in format e#m#, found %s", p.describe())
	}
	p.next()
	i32 := IntType{Width: 32}
	op.Attrs = append(op.Attrs, NamedAttr{Name: "exponent_bits", Value: IntAttr{Value: e, Type: i32}},
		NamedAttr{Name: "mantissa_bits", Value: IntAttr{Value: m, Type: i32}})
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseSignature(op, "same")
}

// parseExpMant splits `e5m10` into 5 and 10.
func parseExpMant(s string) (int64, int64, bool) {
	rest, ok := strings.CutPrefix(s, "e")
	es, ms, ok2 := strings.Cut(rest, "m")
	if !ok || !ok2 {
		return 0, 0, false
	}
	e, err1 := strconv.ParseInt(es, 10, 32)
	m, err2 := strconv.ParseInt(ms, 10, 32)
	return e, m, err1 == nil && err2 == nil && e >= 0 && m >= 0
}

// parseOptimizationBarrier reads `{attrs} %a, %b : A, B` or `{attrs} ()`.
func parseOptimizationBarrier(p *parser, op *Op, _ int) []Type {
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	if p.accept("(") {
		p.expect(")")
		return nil
	}
	op.Operands = p.useList()
	return p.parseSignature(op, "pair")
}

// parseComposite reads `stablehlo.composite "name" %a, %b [({...}, ...)]
// {composite_attributes = {...}, decomposition = @f} : (A, B) -> C`.
func parseComposite(p *parser, op *Op, _ int) []Type {
	op.Attrs = append(op.Attrs, NamedAttr{Name: "name", Value: p.parseKind("str")})
	op.Operands = p.useList()
	if p.accept("(") {
		for {
			op.Regions = append(op.Regions, p.parseRegion(nil, false))
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

// parseScan reads `chlo.scan(%in, ...) inits(%init, ...) dimension=0
// [attributes {...}] {region} : (I..., C...) -> (O..., C...)`, adding the
// dimension and the two segment sizes its parser records.
func parseScan(p *parser, op *Op, _ int) []Type {
	p.expect("(")
	inputs := p.useList()
	p.expect(")")
	p.expect("inits")
	p.expect("(")
	inits := p.useList()
	p.expect(")")
	op.Operands = append(inputs, inits...)
	p.expect("dimension")
	p.expect("=")
	op.Attrs = append(op.Attrs, NamedAttr{Name: "dimension", Value: p.parseKind("i64")})
	if p.accept("attributes") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	op.Regions = []*Region{p.parseRegion(nil, false)}
	off := p.tok.off
	types := p.parseOpSignature(op)
	if len(types) < len(inits) {
		p.fail(off, "chlo.scan needs at least %d results for its carries", len(inits))
	}
	seg := func(a, b int) Attr {
		return DenseArrayAttr{Elem: IntType{Width: 32}, Ints: []int64{int64(a), int64(b)}}
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: "operandSegmentSizes", Value: seg(len(inputs), len(inits))},
		NamedAttr{Name: "resultSegmentSizes", Value: seg(len(types)-len(inits), len(inits))})
	return types
}

// parseValueConstant reads `arith.constant {attrs} 1 : i32`,
// `arith.constant dense<...> : tensor<...>` or `chlo.constant dense<...> :
// tensor<...>`: the value attribute and a result of its type.
func parseValueConstant(p *parser, op *Op, _ int) []Type {
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	off := p.tok.off
	v := p.parseAttr()
	var t Type
	switch v := v.(type) {
	case IntAttr:
		t = v.Type
	case FloatAttr:
		t = v.Type
	case BoolAttr:
		t = IntType{Width: 1}
	case DenseAttr:
		t = v.Type
	default:
		p.fail(off, "expected a typed constant value")
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: "value", Value: v})
	return []Type{t}
}
