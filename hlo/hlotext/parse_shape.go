package hlotext

import (
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// ParseShape parses one shape such as f32[2,3]{1,0} or (s32[], pred[<=4]).
// Arrays written without a layout get the default one.
func ParseShape(text string) (hlo.Shape, error) {
	s := &scanner{src: text}
	sh, err := s.shape()
	if err != nil {
		return hlo.Shape{}, err
	}
	if s.skip(); !s.eof() {
		return hlo.Shape{}, s.errorf("unexpected text after shape")
	}
	return sh, nil
}

// atShape reports whether a shape starts here: '(' or an element type
// name directly followed by '['.
func (s *scanner) atShape() bool {
	s.skip()
	if s.peekByte() == '(' {
		return true
	}
	if s.pos+1 < len(s.src) && s.src[s.pos] == 'b' && s.src[s.pos+1] == '(' {
		return true
	}
	i := s.pos
	for i < len(s.src) && (s.src[i] >= 'a' && s.src[i] <= 'z' || s.src[i] >= '0' && s.src[i] <= '9') {
		i++
	}
	if i == s.pos || i >= len(s.src) || s.src[i] != '[' {
		return false
	}
	_, ok := hlo.DTypeByName(s.src[s.pos:i])
	return ok
}

func (s *scanner) shape() (hlo.Shape, error) { return s.shapeOpt(true) }

// shapeOnly parses a shape whose layout nobody will read (operand shapes
// written inline, signature parameters): arrays written without a layout
// get none, which saves an allocation per shape on large dumps.
func (s *scanner) shapeOnly() (hlo.Shape, error) { return s.shapeOpt(false) }

func (s *scanner) shapeOpt(defaultLayout bool) (hlo.Shape, error) {
	s.skip()
	if err := s.enter("shape"); err != nil {
		return hlo.Shape{}, err
	}
	defer s.leave()
	if s.accept('(') {
		t := hlo.Shape{DType: hlo.Tuple, Tuple: []hlo.Shape{}}
		if s.accept(')') {
			return t, nil
		}
		for {
			e, err := s.shapeOpt(defaultLayout)
			if err != nil {
				return hlo.Shape{}, err
			}
			t.Tuple = append(t.Tuple, e)
			if s.accept(')') {
				return t, nil
			}
			if err := s.expect(',', "or ')' in tuple shape"); err != nil {
				return hlo.Shape{}, err
			}
		}
	}
	start := s.pos
	for s.pos < len(s.src) && (s.src[s.pos] >= 'a' && s.src[s.pos] <= 'z' || s.src[s.pos] >= '0' && s.src[s.pos] <= '9') {
		s.pos++
	}
	name := s.src[start:s.pos]
	if name == "b" && s.peekByte() == '(' {
		return s.bufferShape()
	}
	t, ok := hlo.DTypeByName(name)
	if !ok {
		if name == "" {
			return hlo.Shape{}, s.errorAt(start, "expects shape")
		}
		return hlo.Shape{}, s.errorAt(start, "unknown primitive type %q", name)
	}
	sh := hlo.Shape{DType: t}
	if err := s.dims(&sh); err != nil {
		return hlo.Shape{}, err
	}
	if t == hlo.Token || t == hlo.Opaque {
		if len(sh.Dims) != 0 {
			return hlo.Shape{}, s.errorAt(start, "%s shape must have no dimensions", t)
		}
		return sh, nil
	}
	if _, err := sh.ByteSize(); err != nil {
		return hlo.Shape{}, s.errorAt(start, "%v", err)
	}
	// A layout follows only directly after the dimensions; `{` after
	// white space may start something else (a literal, a computation).
	if s.peekByte() == '{' {
		l, err := s.layout(len(sh.Dims))
		if err != nil {
			return hlo.Shape{}, err
		}
		sh.Layout = l
	} else if defaultLayout {
		sh.Layout = hlo.DefaultLayout(len(sh.Dims))
	}
	return sh, nil
}

// bufferShape parses XLA's buffer type b(shape) after the b.
func (s *scanner) bufferShape() (hlo.Shape, error) {
	s.pos++ // '('
	if s.skip(); !s.atShape() || s.peekByte() == '(' {
		return hlo.Shape{}, s.errorf("expected primitive type in buffer shape")
	}
	elem, err := s.shape()
	if err != nil {
		return hlo.Shape{}, err
	}
	if !s.accept(')') {
		return hlo.Shape{}, s.errorf("expects ')' at the end of buffer shape")
	}
	return hlo.Shape{DType: hlo.Buffer, Tuple: []hlo.Shape{elem}}, nil
}

// ints copies v into a chunk shared by the parse, so that the many small
// dimension lists of a module cost one allocation per chunk, not one each.
// The copies are capacity-limited: appending to one never touches another.
func (s *scanner) ints(v []int64) []int64 {
	if len(v) == 0 {
		return nil
	}
	if len(s.arena) < len(v) {
		s.arena = make([]int64, max(1024, len(v)))
	}
	out := s.arena[:len(v):len(v)]
	copy(out, v)
	s.arena = s.arena[len(v):]
	return out
}

func (s *scanner) dims(sh *hlo.Shape) error {
	if !s.accept('[') {
		return s.errorf("expects '[' after element type")
	}
	if s.accept(']') {
		return nil
	}
	var dyn []bool
	var buf [8]int64
	dims := buf[:0]
	for {
		s.skip()
		dynamic := false
		var d int64
		switch {
		case s.acceptStr("?"):
			d, dynamic = hlo.Unbounded, true
		case s.acceptStr("<="):
			n, err := s.integer()
			if err != nil {
				return err
			}
			d, dynamic = n, true
		default:
			n, err := s.integer()
			if err != nil {
				return s.errorf("expects dimension size")
			}
			if n < 0 {
				return s.errorf("dimension size must be non-negative, got %d", n)
			}
			d = n
		}
		dims = append(dims, d)
		dyn = append(dyn, dynamic)
		if s.accept(']') {
			sh.Dims = s.ints(dims)
			for j, isDyn := range dyn {
				sh.SetDynamic(j, isDyn)
			}
			return nil
		}
		if err := s.expect(',', "or ']' in dimensions"); err != nil {
			return err
		}
	}
}

// layout parses {1,0:T(8,128)E(4)S(1)}; the details after ':' are kept as
// tagged items so they print back verbatim.
func (s *scanner) layout(rank int) (*hlo.Layout, error) {
	start := s.pos
	s.pos++ // '{'
	l := &hlo.Layout{MinorToMajor: []int64{}}
	for {
		s.skip()
		c := s.peekByte()
		if c == '}' || c == ':' {
			break
		}
		n, err := s.integer()
		if err != nil {
			return nil, s.errorf("expects minor_to_major dimension in layout")
		}
		l.MinorToMajor = append(l.MinorToMajor, n)
		if !s.accept(',') {
			break
		}
	}
	if s.accept(':') {
		for {
			s.skip()
			if s.peekByte() == '}' || s.eof() {
				break
			}
			item, err := s.layoutItem()
			if err != nil {
				return nil, err
			}
			l.Items = append(l.Items, item)
		}
	}
	if err := s.expect('}', "at the end of layout"); err != nil {
		return nil, err
	}
	if len(l.MinorToMajor) != rank && !(len(l.MinorToMajor) == 0 && rank == 0) {
		return nil, s.errorAt(start, "Dimensions size is %d, but minor to major size is %d.", rank, len(l.MinorToMajor))
	}
	if err := checkLayoutItems(s, start, l); err != nil {
		return nil, err
	}
	return l, nil
}

func (s *scanner) layoutItem() (hlo.LayoutItem, error) {
	start := s.pos
	for s.pos < len(s.src) && (s.src[s.pos] >= 'A' && s.src[s.pos] <= 'Z' || s.src[s.pos] == '#' || s.src[s.pos] == '*') {
		s.pos++
	}
	tag := s.src[start:s.pos]
	if tag == "" {
		return hlo.LayoutItem{}, s.errorf("expects a layout detail such as T(8,128), E(4) or S(1)")
	}
	bodyStart := s.pos
	for s.peekByte() == '(' {
		if err := s.balanced(); err != nil {
			return hlo.LayoutItem{}, err
		}
	}
	if s.pos == bodyStart {
		return hlo.LayoutItem{}, s.errorf("expects '(' after layout detail %s", tag)
	}
	return hlo.LayoutItem{Tag: tag, Body: s.src[bodyStart:s.pos]}, nil
}

// checkLayoutItems applies the checks XLA's parser makes on layout details.
func checkLayoutItems(s *scanner, start int, l *hlo.Layout) error {
	sparse := false
	if body, ok := l.Item("D"); ok {
		for _, f := range strings.Split(strings.Trim(body, "()"), ",") {
			f = strings.TrimRight(strings.TrimSpace(f), "+~")
			switch f {
			case "D":
			case "C", "S", "H":
				sparse = true
			default:
				return s.errorAt(start, "expected a DimLevelType abbreviation (D, C, S or H), got %q", f)
			}
		}
	}
	if _, ok := l.Item("P"); ok && !sparse {
		return s.errorAt(start, "Layout has physical shape, but is not for a sparse array")
	}
	return nil
}
