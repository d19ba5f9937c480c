package mlir

func init() {
	prettyOps["func.func"] = parseFuncFunc
	prettyOps["func.return"] = parseFuncReturn
	prettyOps["func.call"] = parseFuncCall
}

// parseFuncFunc reads `func.func [visibility] @name(%a: T {attrs}, ...)
// [-> R | -> (R {attrs}, ...)] [attributes {...}] [{body}]` into the
// generic attributes sym_name, function_type, sym_visibility, arg_attrs,
// res_attrs and a body region whose entry block holds the arguments. A
// declaration without a body has one empty region, as the generic form.
func parseFuncFunc(p *parser, op *Op, _ int) []Type {
	if p.is("public") || p.is("private") || p.is("nested") {
		op.Attrs = append(op.Attrs, NamedAttr{Name: "sym_visibility", Value: StringAttr{Value: p.tok.text}})
		p.next()
	}
	if p.tok.kind != tAt {
		p.fail(p.tok.off, "expected a function name, found %s", p.describe())
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: "sym_name", Value: StringAttr{Value: p.tok.text}})
	p.next()
	var ft FunctionType
	var args []*Value
	var argAttrs, resAttrs []Attr
	p.expect("(")
	for !p.is(")") {
		var v *Value
		if p.tok.kind == tPercent {
			v = &Value{Name: p.tok.text}
			p.next()
			p.expect(":")
		}
		t := p.parseType()
		ft.Inputs = append(ft.Inputs, t)
		argAttrs = append(argAttrs, p.optionalArgDict())
		if p.is("loc") {
			p.parseLoc()
		}
		if v != nil {
			v.Type = t
			args = append(args, v)
		}
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	if p.accept("->") {
		ft.Results, resAttrs = p.parseFuncResults()
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: "function_type", Value: TypeAttr{Type: ft}})
	if a, ok := attrArray(argAttrs); ok {
		op.Attrs = append(op.Attrs, NamedAttr{Name: "arg_attrs", Value: a})
	}
	if a, ok := attrArray(resAttrs); ok {
		op.Attrs = append(op.Attrs, NamedAttr{Name: "res_attrs", Value: a})
	}
	if p.accept("attributes") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	if !p.is("{") {
		op.Regions = []*Region{{}}
		return nil
	}
	if len(args) != len(ft.Inputs) {
		p.fail(p.tok.off, "a function with a body must name all its arguments")
	}
	if args == nil {
		args = []*Value{}
	}
	r := p.parseRegion(args, true)
	if len(r.Blocks) > 0 && len(r.Blocks[0].Args) == 0 {
		r.Blocks[0].Args = nil
	}
	op.Regions = []*Region{r}
	return nil
}

// optionalArgDict reads an argument's or result's `{attrs}`, if any.
func (p *parser) optionalArgDict() Attr {
	if !p.is("{") {
		return DictAttr{}
	}
	return DictAttr{Entries: p.parseDict()}
}

// attrArray gives arg_attrs/res_attrs: present only if some entry is not
// empty, as MLIR omits an all-empty list.
func attrArray(ds []Attr) (Attr, bool) {
	for _, d := range ds {
		if len(d.(DictAttr).Entries) > 0 {
			return ArrayAttr{Elems: ds}, true
		}
	}
	return nil, false
}

// parseFuncResults reads `T` or `(T {attrs}, ...)` after a signature's `->`.
func (p *parser) parseFuncResults() ([]Type, []Attr) {
	if !p.is("(") {
		return []Type{p.parseType()}, []Attr{DictAttr{}}
	}
	// `((T) -> U)`: a parenthesized function type is a single result.
	p.next()
	var ts []Type
	var as []Attr
	for !p.is(")") {
		ts = append(ts, p.parseType())
		as = append(as, p.optionalArgDict())
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	return ts, as
}

// parseFuncReturn reads `return %a, %b : T, U` (or a bare `return`).
func parseFuncReturn(p *parser, op *Op, _ int) []Type {
	op.Operands = p.useList()
	if len(op.Operands) > 0 {
		p.expect(":")
		p.typesFor(op, len(op.Operands))
	}
	return nil
}

// typesFor reads a comma-separated type list of n types.
func (p *parser) typesFor(op *Op, n int) []Type {
	ts := make([]Type, 0, n)
	for i := 0; i < n; i++ {
		if i > 0 {
			p.expect(",")
		}
		ts = append(ts, p.parseType())
	}
	return ts
}

// parseFuncCall reads `call @f(%a, %b) : (T, U) -> R`.
func parseFuncCall(p *parser, op *Op, _ int) []Type {
	if p.tok.kind != tAt {
		p.fail(p.tok.off, "expected a callee, found %s", p.describe())
	}
	op.Attrs = append(op.Attrs, NamedAttr{Name: "callee", Value: p.parseSymbolRef()})
	p.expect("(")
	op.Operands = p.useList()
	p.expect(")")
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}
