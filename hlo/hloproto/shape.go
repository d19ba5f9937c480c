package hloproto

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// XLA spells an unbounded dynamic dimension as the smallest int64
// (Shape::kUnboundedSize); Axle as hlo.Unbounded.
const xlaUnbounded = math.MinInt64

// XLA's Tile::kCombineDimension, printed `*` in a tile.
const xlaCombineDim = math.MinInt64

var dtypeToPrim, primToDType = func() (map[hlo.DType]PrimitiveType, map[PrimitiveType]hlo.DType) {
	to := map[hlo.DType]PrimitiveType{}
	from := map[PrimitiveType]hlo.DType{}
	for t := hlo.Pred; t <= hlo.Buffer; t++ {
		name := strings.ToUpper(t.String())
		switch t {
		case hlo.Opaque:
			name = "OPAQUE_TYPE"
		case hlo.Buffer:
			name = "BUFFER"
		}
		if v, ok := PrimitiveType_value[name]; ok {
			to[t] = PrimitiveType(v)
			from[PrimitiveType(v)] = t
		}
	}
	return to, from
}()

// shapeToProto converts a shape; its layout's details ride exactly in an
// AxleLayout beside XLA's fields.
func shapeToProto(s hlo.Shape) (*ShapeProto, error) {
	pt, ok := dtypeToPrim[s.DType]
	if !ok {
		return nil, fmt.Errorf("element type %s has no XLA primitive type", s.DType)
	}
	p := &ShapeProto{ElementType: pt}
	for _, e := range s.Tuple {
		ep, err := shapeToProto(e)
		if err != nil {
			return nil, err
		}
		p.TupleShapes = append(p.TupleShapes, ep)
	}
	if !s.IsArray() {
		return p, nil
	}
	for i, d := range s.Dims {
		if d == hlo.Unbounded {
			d = xlaUnbounded
		}
		p.Dimensions = append(p.Dimensions, d)
		p.IsDynamicDimension = append(p.IsDynamicDimension, s.IsDynamicDim(i))
	}
	if s.Layout != nil {
		l, err := layoutToProto(s.Layout)
		if err != nil {
			return nil, err
		}
		p.Layout = l
	}
	return p, nil
}

func layoutToProto(l *hlo.Layout) (*LayoutProto, error) {
	p := &LayoutProto{MinorToMajor: append([]int64{}, l.MinorToMajor...)}
	if len(l.MinorToMajor) == 0 {
		p.MinorToMajor = nil
	}
	if len(l.Items) == 0 {
		return p, nil
	}
	// The common details also go to XLA's fields; the rest only Axle reads.
	ext := &AxleLayout{}
	for _, it := range l.Items {
		ext.Items = append(ext.Items, &AxleLayoutItem{Tag: it.Tag, Body: it.Body})
		switch it.Tag {
		case "T":
			p.Tiles = parseTiles(it.Body)
		case "E":
			p.ElementSizeInBits, _ = parenInt(it.Body)
		case "S":
			p.MemorySpace, _ = parenInt(it.Body)
		}
	}
	return p, setExt(p, ext)
}

// parseTiles reads `(8,128)(2,1)`; nil if it is not that.
func parseTiles(body string) []*TileProto {
	var tiles []*TileProto
	for body != "" {
		end := strings.IndexByte(body, ')')
		if body[0] != '(' || end < 0 {
			return nil
		}
		t := &TileProto{}
		for _, f := range strings.Split(body[1:end], ",") {
			if f == "*" {
				t.Dimensions = append(t.Dimensions, xlaCombineDim)
				continue
			}
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil
			}
			t.Dimensions = append(t.Dimensions, n)
		}
		tiles = append(tiles, t)
		body = body[end+1:]
	}
	return tiles
}

func parenInt(body string) (int64, bool) {
	if len(body) < 2 || body[0] != '(' || body[len(body)-1] != ')' {
		return 0, false
	}
	n, err := strconv.ParseInt(body[1:len(body)-1], 10, 64)
	return n, err == nil
}

// shapeFromProto converts a ShapeProto; where names the shape in errors.
func shapeFromProto(p *ShapeProto, where string) (hlo.Shape, error) {
	if p == nil {
		return hlo.Shape{}, fmt.Errorf("%s: no shape", where)
	}
	t, ok := primToDType[p.ElementType]
	if !ok {
		return hlo.Shape{}, fmt.Errorf("%s: element_type %v is not one Axle knows", where, p.ElementType)
	}
	s := hlo.Shape{DType: t}
	if len(p.TupleShapes) > 0 || t == hlo.Tuple {
		s.Tuple = make([]hlo.Shape, 0, len(p.TupleShapes))
		for i, e := range p.TupleShapes {
			es, err := shapeFromProto(e, fmt.Sprintf("%s tuple element %d", where, i))
			if err != nil {
				return hlo.Shape{}, err
			}
			s.Tuple = append(s.Tuple, es)
		}
	}
	if !s.IsArray() {
		return s, nil
	}
	if n := len(p.IsDynamicDimension); n != 0 && n != len(p.Dimensions) {
		return hlo.Shape{}, fmt.Errorf("%s: %d is_dynamic_dimension entries for %d dimensions", where, n, len(p.Dimensions))
	}
	s.Dims = make([]int64, len(p.Dimensions))
	for i, d := range p.Dimensions {
		switch {
		case d == xlaUnbounded:
			d = hlo.Unbounded
		case d < 0:
			return hlo.Shape{}, fmt.Errorf("%s: dimension %d has size %d", where, i, d)
		}
		s.Dims[i] = d
	}
	for i, dyn := range p.IsDynamicDimension {
		s.SetDynamic(i, dyn)
	}
	if p.Layout != nil {
		l, err := layoutFromProto(p.Layout, len(s.Dims), where)
		if err != nil {
			return hlo.Shape{}, err
		}
		s.Layout = l
	}
	return s, nil
}

func layoutFromProto(p *LayoutProto, rank int, where string) (*hlo.Layout, error) {
	l := &hlo.Layout{MinorToMajor: append(make([]int64, 0, len(p.MinorToMajor)), p.MinorToMajor...)}
	if len(p.MinorToMajor) != 0 && len(p.MinorToMajor) != rank {
		return nil, fmt.Errorf("%s: layout has %d minor_to_major entries for rank %d", where, len(p.MinorToMajor), rank)
	}
	for _, d := range p.MinorToMajor {
		if d < 0 || d >= int64(rank) {
			return nil, fmt.Errorf("%s: layout dimension %d out of range for rank %d", where, d, rank)
		}
	}
	ext := &AxleLayout{}
	has, err := getExt(p, ext)
	if err != nil {
		return nil, fmt.Errorf("%s: layout: %w", where, err)
	}
	if has {
		for _, it := range ext.Items {
			l.Items = append(l.Items, hlo.LayoutItem{Tag: it.Tag, Body: it.Body})
		}
		return l, nil
	}
	// A layout XLA wrote: its tiles, element size and memory space as
	// XLA's text prints them.
	if len(p.Tiles) > 0 {
		var b strings.Builder
		for _, t := range p.Tiles {
			b.WriteByte('(')
			for i, d := range t.Dimensions {
				if i > 0 {
					b.WriteByte(',')
				}
				if d == xlaCombineDim {
					b.WriteByte('*')
				} else {
					b.WriteString(strconv.FormatInt(d, 10))
				}
			}
			b.WriteByte(')')
		}
		l.Items = append(l.Items, hlo.LayoutItem{Tag: "T", Body: b.String()})
	}
	if p.ElementSizeInBits != 0 {
		l.Items = append(l.Items, hlo.LayoutItem{Tag: "E", Body: "(" + strconv.FormatInt(p.ElementSizeInBits, 10) + ")"})
	}
	if p.MemorySpace != 0 {
		l.Items = append(l.Items, hlo.LayoutItem{Tag: "S", Body: "(" + strconv.FormatInt(p.MemorySpace, 10) + ")"})
	}
	return l, nil
}
