package mlir

// Shardy's ops (openxla/shardy, shardy/dialect/sdy/ir/ops.td), which JAX
// writes for sharded programs. Their attributes are kept as dialect
// attributes with Raw text: #sdy.mesh, #sdy.sharding,
// #sdy.sharding_per_value and #sdy<manual_axes ...>, as the generic form
// writes them.
func init() {
	prettyOps["sdy.mesh"] = parseSdyMesh
	prettyOps["sdy.sharding_constraint"] = parseSdySharded
	prettyOps["sdy.reshard"] = parseSdySharded
	prettyOps["sdy.return"] = specOp("{} $... :opt")
	prettyOps["sdy.manual_computation"] = parseSdyManual
}

// parseSdyMesh reads `sdy.mesh @name = <["a"=2, "b"=4]>`.
func parseSdyMesh(p *parser, op *Op, _ int) []Type {
	op.Attrs = append(op.Attrs, NamedAttr{Name: "sym_name", Value: p.parseKind("sym")})
	p.expect("=")
	op.Attrs = append(op.Attrs, NamedAttr{Name: "mesh", Value: p.strippedAttr("sdy.mesh", "<")})
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return nil
}

// strippedAttr reads a dialect attribute written without its `#d.name`
// (`<...>`, or `[...]`/`{...}` for the list attributes whose brackets are
// the whole body).
func (p *parser) strippedAttr(name, open string) Attr {
	if !p.is(open) {
		p.fail(p.tok.off, "expected '%s' to start %s, found %s", open, name, p.describe())
	}
	if open == "<" {
		return p.dialectAttrBody(name, p.tok.off)
	}
	end := p.scanBalanced(p.tok.off)
	a := DialectAttr{Name: name, Raw: canonicalRaw(p.lx.src[p.tok.off:end])}
	p.reset(end)
	return a
}

// parseSdySharded reads `sdy.sharding_constraint %x <@mesh, [{"a"}, {}]> : T`.
func parseSdySharded(p *parser, op *Op, _ int) []Type {
	op.Operands = append(op.Operands, p.use())
	op.Attrs = append(op.Attrs, NamedAttr{Name: "sharding", Value: p.strippedAttr("sdy.sharding", "<")})
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseSignature(op, "res")
}

// parseSdyManual reads `sdy.manual_computation(%a) in_shardings=[<...>]
// out_shardings=[<...>] manual_axes={"a"} (%arg: T) { ... } : (T) -> R`.
func parseSdyManual(p *parser, op *Op, _ int) []Type {
	p.expect("(")
	op.Operands = p.useList()
	p.expect(")")
	for _, f := range []struct{ key, name, open string }{
		{"in_shardings", "sdy.sharding_per_value", "["},
		{"out_shardings", "sdy.sharding_per_value", "["},
		{"manual_axes", "sdy.manual_axes", "{"},
	} {
		p.expect(f.key)
		p.expect("=")
		op.Attrs = append(op.Attrs, NamedAttr{Name: f.key, Value: p.strippedAttr(f.name, f.open)})
	}
	p.expect("(")
	var args []*Value
	for !p.is(")") {
		args = append(args, p.blockArg())
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	r := p.parseRegion(nonNil(args), true)
	if len(r.Blocks) > 0 && len(r.Blocks[0].Args) == 0 {
		r.Blocks[0].Args = nil
	}
	op.Regions = []*Region{r}
	if p.is("{") {
		op.Attrs = append(op.Attrs, p.parseDict()...)
	}
	return p.parseOpSignature(op)
}
