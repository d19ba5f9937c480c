package hlotext

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// attributes parses `, name=value` pairs after the operand list. op is the
// opcode whose attributes are accepted (the wrapped opcode for async sugar).
func (p *parser) attributes(in *hlo.Instruction, op hlo.Opcode) error {
	for {
		save := p.pos
		if !p.accept(',') {
			return nil
		}
		p.skip()
		namePos := p.pos
		name := p.ident()
		if name == "" || !p.accept('=') {
			p.pos = save
			if name == "" {
				return p.errorAt(namePos, "expects attribute name")
			}
			return p.errorAt(namePos, "expects '=' after attribute name %s", name)
		}
		kind := hlo.AttrKindOf(name)
		accepted := op.AcceptsAttr(name) || (in.Opcode != op && (name == "async_execution_thread" || name == "calls"))
		if kind != hlo.KindUnknown && !accepted {
			return p.errorAt(namePos, "unexpected attribute %q", name)
		}
		if in.HasAttr(name) {
			return p.errorAt(namePos, "attribute %s already exists", name)
		}
		v, err := p.attrValue(name, kind)
		if err != nil {
			return err
		}
		if name == "control-predecessors" {
			p.cur.ctrl = append(p.cur.ctrl, ctrlRef{in: in, names: v.(ctrlNames).names, pos: v.(ctrlNames).pos})
			continue
		}
		in.Attrs = append(in.Attrs, hlo.Attr{Name: name, Value: v})
	}
}

type ctrlNames struct {
	names []string
	pos   []int
}

// attrValue parses one value of the given kind.
func (p *parser) attrValue(name string, kind hlo.AttrKind) (any, error) {
	p.skip()
	start := p.pos
	switch kind {
	case hlo.KindInt:
		return p.integer()
	case hlo.KindBool:
		return p.boolean()
	case hlo.KindFloat:
		return p.float()
	case hlo.KindInts:
		return p.intList()
	case hlo.KindBools:
		return p.boolList()
	case hlo.KindIntsOrLists:
		if p.peekNested() {
			return p.intLists()
		}
		return p.intList()
	case hlo.KindIntLists:
		return p.intLists()
	case hlo.KindReplicaGroups:
		if p.peekByte() == '{' {
			return p.intLists()
		}
		v, err := p.rawValue()
		return hlo.IotaReplicaGroups(v), err
	case hlo.KindEnum:
		v := p.word()
		if v == "" {
			return nil, p.errorf("expects a value for %s", name)
		}
		return hlo.Enum(v), nil
	case hlo.KindEnums:
		return p.enumList()
	case hlo.KindString:
		return p.quoted()
	case hlo.KindComputation:
		if p.atInlineComputation() {
			return p.inlineComputation()
		}
		if p.peekByte() == '{' {
			return p.compList()
		}
		pos := p.pos
		n := p.ident()
		if n == "" {
			return nil, p.errorf("expects computation name")
		}
		return p.compRef(n, pos), nil
	case hlo.KindComputations:
		return p.compList()
	case hlo.KindInstructions:
		return p.instrNames()
	case hlo.KindWindow:
		return p.window()
	case hlo.KindDimLabels:
		return p.dimLabels()
	case hlo.KindPadding:
		return p.padding()
	case hlo.KindSlice:
		return p.sliceRanges()
	case hlo.KindShape:
		return p.shape()
	case hlo.KindShapes:
		return p.shapeList()
	}
	if name == "result_accuracy" {
		if err := p.checkResultAccuracy(); err != nil {
			return nil, err
		}
		p.pos = start
	}
	v, err := p.rawValue()
	if err != nil {
		return nil, err
	}
	if v == "" {
		return nil, p.errorAt(start, "expects a value for attribute %s", name)
	}
	return hlo.Raw(v), nil
}

// word reads an identifier-like value: letters, digits, _ . - ? and ->.
func (p *parser) word() string {
	p.skip()
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if isIdentByte(c) || c == '?' {
			p.pos++
			continue
		}
		if c == '>' && p.pos > start && p.src[p.pos-1] == '-' {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos]
}

func (p *parser) float() (float64, error) {
	w := p.word()
	if p.peekByte() == '+' && strings.HasSuffix(w, "e") {
		p.pos++
		w += "+" + p.word()
	}
	v, err := strconv.ParseFloat(w, 64)
	if err != nil {
		return 0, p.errorf("expects floating point number")
	}
	return v, nil
}

func (p *parser) peekNested() bool {
	save := p.pos
	defer func() { p.pos = save }()
	if !p.accept('{') {
		return false
	}
	return p.accept('{')
}

// list parses `{ item, item, ... }` calling item for each.
func (p *parser) list(open, close byte, what string, item func() error) error {
	if err := p.expect(open, "at the start of "+what); err != nil {
		return err
	}
	if p.accept(close) {
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if p.accept(close) {
			return nil
		}
		if err := p.expect(',', "in "+what); err != nil {
			return err
		}
	}
}

func (p *parser) intList() ([]int64, error) {
	out := []int64{}
	err := p.list('{', '}', "integer list", func() error {
		v, err := p.integer()
		out = append(out, v)
		return err
	})
	return out, err
}

func (p *parser) boolList() ([]bool, error) {
	out := []bool{}
	err := p.list('{', '}', "boolean list", func() error {
		v, err := p.boolean()
		out = append(out, v)
		return err
	})
	return out, err
}

func (p *parser) intLists() ([][]int64, error) {
	out := [][]int64{}
	err := p.list('{', '}', "list of integer lists", func() error {
		v, err := p.intList()
		out = append(out, v)
		return err
	})
	return out, err
}

func (p *parser) enumList() ([]hlo.Enum, error) {
	out := []hlo.Enum{}
	err := p.list('{', '}', "list", func() error {
		w := p.word()
		if w == "" {
			return p.errorf("expects a name")
		}
		out = append(out, hlo.Enum(w))
		return nil
	})
	return out, err
}

func (p *parser) shapeList() ([]hlo.Shape, error) {
	out := []hlo.Shape{}
	err := p.list('{', '}', "shape list", func() error {
		v, err := p.shape()
		out = append(out, v)
		return err
	})
	return out, err
}

func (p *parser) compList() ([]*hlo.Computation, error) {
	out := []*hlo.Computation{}
	err := p.list('{', '}', "computation list", func() error {
		p.skip()
		if p.peekByte() == '{' {
			c, err := p.inlineComputation()
			out = append(out, c)
			return err
		}
		pos := p.pos
		n := p.ident()
		if n == "" {
			return p.errorf("expects computation name")
		}
		out = append(out, p.compRef(n, pos))
		return nil
	})
	return out, err
}

func (p *parser) instrNames() (ctrlNames, error) {
	var out ctrlNames
	err := p.list('{', '}', "instruction list", func() error {
		p.skip()
		out.pos = append(out.pos, p.pos)
		n := p.ident()
		if n == "" {
			return p.errorf("expects instruction name")
		}
		out.names = append(out.names, n)
		return nil
	})
	return out, err
}

// window parses {size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1
// rhs_dilate=1x1 rhs_reversal=0x1}; fields may also be separated by commas.
func (p *parser) window() (*hlo.Window, error) {
	if err := p.expect('{', "at the start of window"); err != nil {
		return nil, err
	}
	fields := map[string][]string{}
	for !p.accept('}') {
		p.accept(',')
		fpos := p.pos
		f := p.ident()
		if f == "" || !p.accept('=') {
			return nil, p.errorAt(fpos, "expects window field such as size=, stride=, pad=")
		}
		v := p.word()
		if v == "" {
			return nil, p.errorf("expects value of window field %s", f)
		}
		switch f {
		case "size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal":
		default:
			return nil, p.errorAt(fpos, "unknown window field %s", f)
		}
		fields[f] = strings.Split(v, "x")
	}
	n := len(fields["size"])
	if _, ok := fields["size"]; !ok {
		if len(fields) > 0 {
			return nil, p.errorf("window needs size=")
		}
		return &hlo.Window{}, nil
	}
	w := hlo.NewWindow(make([]int64, n)...)
	for f, vals := range fields {
		if len(vals) != n {
			return nil, p.errorf("window field %s has %d dimensions, size has %d", f, len(vals), n)
		}
		for i, v := range vals {
			d := &w.Dims[i]
			if f == "pad" {
				lo, hi, ok := strings.Cut(v, "_")
				a, err1 := strconv.ParseInt(lo, 10, 64)
				b, err2 := strconv.ParseInt(hi, 10, 64)
				if !ok || err1 != nil || err2 != nil {
					return nil, p.errorf("expects padding_low and padding_high separated by '_'")
				}
				d.PadLo, d.PadHi = a, b
				continue
			}
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, p.errorf("bad window %s value %q", f, v)
			}
			switch f {
			case "size":
				d.Size = x
			case "stride":
				d.Stride = x
			case "lhs_dilate":
				d.LhsDilation = x
			case "rhs_dilate":
				d.RhsDilation = x
			case "rhs_reversal":
				d.Reversal = x != 0
			}
		}
	}
	return w, nil
}

// padding parses 0_0x1_1_2: lo_hi[_interior] per dimension.
func (p *parser) padding() (hlo.PaddingConfig, error) {
	w := p.word()
	cfg := hlo.PaddingConfig{}
	if w == "" {
		return nil, p.errorf("expects padding config")
	}
	for _, d := range strings.Split(w, "x") {
		parts := strings.Split(d, "_")
		if len(parts) != 2 && len(parts) != 3 {
			return nil, p.errorf("expects padding_low and padding_high separated by '_'")
		}
		var v [3]int64
		for i, s := range parts {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, p.errorf("bad padding value %q", s)
			}
			v[i] = n
		}
		cfg = append(cfg, hlo.PadDim{Lo: v[0], Hi: v[1], Interior: v[2]})
	}
	return cfg, nil
}

// sliceRanges parses {[0:2], [1:5:2]}.
func (p *parser) sliceRanges() ([]hlo.SliceDim, error) {
	out := []hlo.SliceDim{}
	err := p.list('{', '}', "slice", func() error {
		if err := p.expect('[', "at the start of a slice range"); err != nil {
			return err
		}
		var v []int64
		for {
			n, err := p.integer()
			if err != nil {
				return err
			}
			v = append(v, n)
			if p.accept(']') {
				break
			}
			if err := p.expect(':', "in slice range"); err != nil {
				return err
			}
		}
		if len(v) < 2 || len(v) > 3 {
			return p.errorf("expects [start:limit] or [start:limit:stride]")
		}
		d := hlo.SliceDim{Start: v[0], Limit: v[1], Stride: 1}
		if len(v) == 3 {
			d.Stride = v[2]
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// dimLabels parses convolution dim labels such as b01f_01io->b01f.
func (p *parser) dimLabels() (*hlo.ConvDimNumbers, error) {
	start := p.pos
	w := p.word()
	c, msg := parseDimLabels(w)
	if msg != "" {
		return nil, p.errorAt(start, "%s", msg)
	}
	return c, nil
}

func parseDimLabels(w string) (*hlo.ConvDimNumbers, string) {
	lhs, out, ok := strings.Cut(w, "->")
	if !ok {
		return nil, "expects dim labels pattern, e.g., 'bf0_0io->0bf'"
	}
	in, kernel, ok := strings.Cut(lhs, "_")
	if !ok {
		return nil, "expects dim labels pattern, e.g., 'bf0_0io->0bf'"
	}
	// XLA's checks, in its order: unique labels, then the characters
	// allowed for the label's rank, then equal spatial counts.
	for _, part := range []struct{ s, roles string }{{in, "bf"}, {kernel, "io"}, {out, "bf"}} {
		seen := map[rune]bool{}
		for _, ch := range part.s {
			if ch != '?' && seen[ch] {
				return nil, "expects unique dim labels, but sees " + part.s
			}
			seen[ch] = true
		}
		for _, ch := range part.s {
			if ch != '?' && !strings.ContainsRune(part.roles, ch) && (ch < '0' || int(ch-'0') >= len(part.s)) {
				return nil, "expects [0-" + strconv.Itoa(len(part.s)-1) + part.roles + "?] in dim labels " + part.s + ", got " + string(ch)
			}
		}
	}
	c := &hlo.ConvDimNumbers{}
	// Labels may hold '?' for dimensions of no role, so the number of
	// spatial dimensions is the number of digits, not the length.
	n := countDigits(in)
	if countDigits(kernel) != n || countDigits(out) != n {
		return nil, "convolution lhs, rhs, and output must have same number of spatial dimensions"
	}
	var msg string
	c.InputBatch, c.InputFeature, c.InputSpatial, msg = labelDims(in, 'b', 'f', n)
	if msg != "" {
		return nil, msg
	}
	c.KernelInput, c.KernelOutput, c.KernelSpatial, msg = labelDims(kernel, 'i', 'o', n)
	if msg != "" {
		return nil, msg
	}
	c.OutputBatch, c.OutputFeature, c.OutputSpatial, msg = labelDims(out, 'b', 'f', n)
	if msg != "" {
		return nil, msg
	}
	return c, ""
}

// labelDims reads one of the three label strings: the positions of the two
// role letters and of spatial dimensions 0..n-1.
func labelDims(s string, a, b byte, n int) (int64, int64, []int64, string) {
	ia, ib := int64(-1), int64(-1)
	spatial := make([]int64, n)
	for i := range spatial {
		spatial[i] = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == a || c == b:
			ptr := &ia
			if c == b {
				ptr = &ib
			}
			if *ptr >= 0 {
				return 0, 0, nil, "expects unique dim labels, got repeated " + string(c) + " in " + s
			}
			*ptr = int64(i)
		case c == '?':
		default:
			k := spatialIndex(c)
			if k < 0 || k >= n {
				return 0, 0, nil, "expects [0-" + string(rune('0'+max(n-1, 0))) + string(a) + string(b) + "?] in dim labels " + s + ", got " + string(c)
			}
			if spatial[k] >= 0 {
				return 0, 0, nil, "expects unique dim labels, got repeated " + string(c) + " in " + s
			}
			spatial[k] = int64(i)
		}
	}
	return ia, ib, spatial, ""
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

func spatialIndex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z' && c != 'b' && c != 'f' && c != 'i' && c != 'o':
		return int(c-'a') + 10
	}
	return -1
}
