package mlir

// parseConvLayout reads convolution dimension numbers in their layout form
// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` (or `raw key = value, ...`)
// into the fields of StableHLO's ConvDimensionNumbers, so the pretty
// `dim_numbers = ...` and the generic `#stablehlo.conv<...>` agree and
// the converter reads numbers, not letters.
func (p *parser) parseConvLayout() []NamedAttr {
	if p.accept("raw") {
		return p.parseFieldList()
	}
	in := p.convDims("b", "f", "input")
	if !p.is("x") {
		p.fail(p.tok.off, "expected 'x' between convolution input and kernel layouts")
	}
	p.next()
	kernel := p.convDims("i", "o", "kernel")
	p.expect("->")
	out := p.convDims("b", "f", "output")
	i64 := func(v int64) Attr { return IntAttr{Value: v, Type: IntType{Width: 64}} }
	spatial := func(vs []int64) Attr {
		a := ArrayAttr{}
		for _, v := range vs {
			a.Elems = append(a.Elems, i64(v))
		}
		return a
	}
	return []NamedAttr{
		{Name: "input_batch_dimension", Value: i64(in.a)},
		{Name: "input_feature_dimension", Value: i64(in.b)},
		{Name: "input_spatial_dimensions", Value: spatial(in.spatial)},
		{Name: "kernel_input_feature_dimension", Value: i64(kernel.a)},
		{Name: "kernel_output_feature_dimension", Value: i64(kernel.b)},
		{Name: "kernel_spatial_dimensions", Value: spatial(kernel.spatial)},
		{Name: "output_batch_dimension", Value: i64(out.a)},
		{Name: "output_feature_dimension", Value: i64(out.b)},
		{Name: "output_spatial_dimensions", Value: spatial(out.spatial)},
	}
}

// convLayout is one bracketed layout: where its two named dimensions and
// its numbered spatial dimensions sit.
type convLayout struct {
	a, b    int64
	spatial []int64
}

// convDims reads `[b, 0, 1, f]`, where a and b name the two non-spatial
// dimensions and digits number the spatial ones.
func (p *parser) convDims(a, b, what string) convLayout {
	off := p.tok.off
	p.expect("[")
	l := convLayout{a: -1, b: -1}
	var idx []int64 // spatial number at each position, -1 for a and b
	for pos := int64(0); !p.is("]"); pos++ {
		switch {
		case p.is(a) && l.a < 0:
			l.a = pos
			idx = append(idx, -1)
			p.next()
		case p.is(b) && l.b < 0:
			l.b = pos
			idx = append(idx, -1)
			p.next()
		case p.tok.kind == tInt:
			idx = append(idx, p.parseSignedInt())
		default:
			p.fail(p.tok.off, "unexpected %s in convolution %s layout", p.describe(), what)
		}
		if !p.accept(",") {
			break
		}
	}
	p.expect("]")
	if l.a < 0 || l.b < 0 {
		p.fail(off, "convolution %s layout needs '%s' and '%s'", what, a, b)
	}
	l.spatial = make([]int64, len(idx)-2)
	seen := make([]bool, len(l.spatial))
	for pos, k := range idx {
		if k < 0 {
			continue
		}
		if k >= int64(len(l.spatial)) || seen[k] {
			p.fail(off, "bad spatial dimension %d in convolution %s layout", k, what)
		}
		seen[k] = true
		l.spatial[k] = int64(pos)
	}
	return l
}
