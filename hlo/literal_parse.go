package hlo

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// LiteralError is a literal text error at byte Offset of the text given to
// ParseLiteral. Msg uses XLA's wording where XLA has a message for the case.
type LiteralError struct {
	Offset int
	Msg    string
}

func (e *LiteralError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// ParseLiteral parses the payload of a constant of shape s, as written
// inside `constant(...)` in HLO text: a scalar (`1`, `-inf`, `true`,
// `nan(0x7f)`, `(1, 2)` for complex), nested braces for arrays
// (`{ {1, 2}, {3, 4} }`, with /*...*/ and // comments anywhere),
// `( a, b )` for tuples, or `{...}` for an elided constant of any shape.
//
// It accepts what XLA's parser accepts and reports what XLA reports: the
// nesting must match the shape's rank and every dimension its size (commas
// between elements are optional, as in XLA); integers must fit the element
// type (a negative number for u64 wraps, as in XLA); a float that overflows
// its type is an error, except in f4e2m1fn, which saturates, and in the
// finite-only f8 types `inf` becomes NaN, as XLA's conversions do. Unlike
// XLA, s64 values beyond the signed range are errors (XLA wraps them), and
// `-0` is negative zero in float types (XLA reads it as the integer 0).
func ParseLiteral(s Shape, text string) (*Literal, error) {
	lit, end, err := ParseLiteralPrefix(s, text)
	if err != nil {
		return nil, err
	}
	if end < len(text) {
		p := &litParser{src: text, pos: end}
		if err := p.advance(); err != nil {
			return nil, err
		}
		return nil, p.errorf(end, "expects the end of the literal, but sees %q", p.text(p.tok))
	}
	return lit, nil
}

// ParseLiteralPrefix parses a literal of shape s at the start of text, as
// ParseLiteral does, and returns the offset where the text after it begins
// (past white space and comments), so that a caller parsing a larger text
// can go on from there: the literal ends where its grammar says, as in
// XLA, not at some bracket found by scanning.
func ParseLiteralPrefix(s Shape, text string) (lit *Literal, end int, err error) {
	p := &litParser{src: text}
	if err := p.advance(); err != nil {
		return nil, 0, err
	}
	if p.elided() {
		lit = NewElidedLiteral(s)
	} else if lit, err = p.literal(s); err != nil {
		return nil, 0, err
	}
	return lit, p.tok.pos, nil
}

// elided reports whether the next tokens are `{...}`, and consumes them.
func (p *litParser) elided() bool {
	if p.tok.kind != tLBrace {
		return false
	}
	save, savePos := p.tok, p.pos
	if p.advance() == nil && p.tok.kind == tDots && p.advance() == nil && p.tok.kind == tRBrace &&
		p.advance() == nil {
		return true
	}
	p.tok, p.pos = save, savePos
	return false
}

func (p *litParser) expect(kind litTokKind, msg string) error {
	if p.tok.kind != kind {
		return p.errorf(p.tok.pos, "%s", msg)
	}
	return p.advance()
}

func (p *litParser) literal(s Shape) (*Literal, error) {
	switch {
	case s.IsTuple():
		return p.tuple(s)
	case !s.IsArray():
		return nil, p.errorf(p.tok.pos, "cannot parse a literal of shape %s", s.HumanString())
	case s.IsUnbounded():
		return nil, p.errorf(p.tok.pos, "cannot parse a literal of shape %s: a dimension is unbounded", s.HumanString())
	case p.elided():
		return NewElidedLiteral(s), nil
	}
	return p.dense(s)
}

func (p *litParser) tuple(s Shape) (*Literal, error) {
	if err := p.expect(tLParen, "expects '(' in front of tuple elements"); err != nil {
		return nil, err
	}
	l := &Literal{shape: s.Clone(), elems: make([]*Literal, len(s.Tuple))}
	for i, es := range s.Tuple {
		if i > 0 {
			if err := p.expect(tComma, "expects ',' to separate tuple elements"); err != nil {
				return nil, err
			}
		}
		e, err := p.literal(es)
		if err != nil {
			return nil, err
		}
		l.elems[i] = e
	}
	msg := fmt.Sprintf("expects ')' at the end of the tuple with %d elements", len(s.Tuple))
	if err := p.expect(tRParen, msg); err != nil {
		return nil, err
	}
	return l, nil
}

// dense parses an array's nested braces as XLA's ParseDenseLiteral does,
// counting the sub-arrays and elements seen at each nesting level.
func (p *litParser) dense(s Shape) (*Literal, error) {
	var l *Literal
	if n := elementCount(s); n >= 0 && n <= int64(len(p.src)) {
		l = NewLiteral(s)
	} else {
		// Every element takes at least a byte of text, so this text cannot
		// fill the shape: parse without storage, only to find the error,
		// rather than allocate for an absurd shape.
		l = &Literal{shape: s}
	}
	rank, dims := s.Rank(), s.Dims
	seen := make([]int64, rank)
	indexStr := func(dim int) string {
		parts := make([]string, dim)
		for i := range dim {
			parts[i] = strconv.FormatInt(seen[i]-1, 10)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	nest, linear := 0, 0
	for {
		tok := p.tok
		switch tok.kind {
		case tLBrace:
			nest++
			if nest > rank {
				return nil, p.errorf(tok.pos, "expects nested array in rank %d, but sees larger", rank)
			}
			if nest > 1 {
				if seen[nest-2]++; seen[nest-2] > dims[nest-2] {
					return nil, p.errorf(tok.pos, "expects %d elements in the %sth element, but sees more",
						dims[nest-2], indexStr(nest-2))
				}
			}
		case tRBrace:
			if nest == 0 {
				return nil, p.errorf(tok.pos, "unexpected '}' token")
			}
			nest--
			if seen[nest] != dims[nest] {
				return nil, p.errorf(tok.pos, "expects %d elements in the %sth element, but sees %d",
					dims[nest], indexStr(nest), seen[nest])
			}
			seen[nest] = 0
		case tComma:
			if nest == 0 {
				return nil, p.errorf(tok.pos, "unexpected ',' before the literal's value")
			}
		case tDots:
			return nil, p.errorf(tok.pos, "`...` may only appear as a whole elided constant `{...}`")
		case tEOF:
			if nest == 0 {
				return nil, p.errorf(tok.pos, "expects a value for a literal of shape %s", s.HumanString())
			}
			return nil, p.errorf(tok.pos, "unexpected end of the literal: expects '}'")
		case tInt, tDecimal, tNaN, tInf, tNegInf, tTrue, tFalse, tLParen:
			if tok.kind == tLParen && !s.DType.IsComplex() {
				return nil, p.errorf(tok.pos, "unexpected '(' in literal. Parens are only valid for complex literals")
			}
			if rank > 0 {
				if nest != rank {
					return nil, p.errorf(tok.pos, "expects nested array in rank %d, but sees %d", rank, nest)
				}
				if seen[rank-1]++; seen[rank-1] > dims[rank-1] {
					return nil, p.errorf(tok.pos, "expects %d elements on the minor-most dimension, but sees more",
						dims[rank-1])
				}
			}
			if err := p.value(l, linear); err != nil {
				return nil, err
			}
			linear++
			if nest == 0 {
				return p.done(l)
			}
			continue // value consumed its tokens
		default:
			return nil, p.errorf(tok.pos, "unexpected token type in a literal: %q", p.text(tok))
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if nest == 0 {
			return p.done(l)
		}
	}
}

// done returns a parsed array, which has storage unless it was parsed only
// to find an error (which a complete parse then cannot have found).
func (p *litParser) done(l *Literal) (*Literal, error) {
	if l.data == nil {
		return nil, p.errorf(p.tok.pos, "literal text is too short for shape %s", l.shape.HumanString())
	}
	return l, nil
}

// store sets element i of a literal being parsed, unless it has no storage.
func store(l *Literal, i int, bits uint64) {
	if l.data != nil {
		l.SetBits(i, bits)
	}
}

// elementCount is the number of elements of array shape s, or -1 when it
// does not fit in an int64.
func elementCount(s Shape) int64 {
	if slices.Contains(s.Dims, 0) {
		return 0
	}
	n := uint64(1)
	for _, d := range s.Dims {
		hi, lo := bits.Mul64(n, uint64(d))
		if d < 0 || hi != 0 || lo > math.MaxInt64 {
			return -1
		}
		n = lo
	}
	return int64(n)
}

// value parses the element at storage position i and stores it.
func (p *litParser) value(l *Literal, i int) error {
	t := l.shape.DType
	tok := p.tok
	switch {
	case t.IsComplex():
		if tok.kind != tLParen {
			return p.errorf(tok.pos, "expects a complex number (real, imag) for primitive type: %s", upperName(t))
		}
		return p.complexValue(l, i)
	case t.IsPred() && (tok.kind == tTrue || tok.kind == tFalse):
		store(l, i, boolBits(tok.kind == tTrue))
	case t.IsPred() || t.IsInteger():
		if tok.kind != tInt {
			return p.errorf(tok.pos, "expects integer for primitive type: %s", upperName(t))
		}
		if err := p.intValue(l, i, tok); err != nil {
			return err
		}
	default: // floats
		v, err := p.float(tok, t)
		if err != nil {
			return err
		}
		if err := p.setFloat(l, i, tok.pos, t, v, tok); err != nil {
			return err
		}
	}
	return p.advance()
}

func (p *litParser) intValue(l *Literal, i int, tok litTok) error {
	t := l.shape.DType
	text := p.text(tok)
	neg := strings.HasPrefix(text, "-")
	u, err := strconv.ParseUint(strings.TrimPrefix(text, "-"), 10, 64)
	tooBig := err != nil || neg && u > 1<<63
	if t.IsPred() {
		store(l, i, boolBits(tooBig || u != 0))
		return nil
	}
	outOfRange := func(lo, hi string) error {
		return p.errorf(tok.pos, "value %s is out of range for literal's primitive type %s namely [%s, %s].",
			text, upperName(t), lo, hi)
	}
	if t.IsUnsigned() {
		// As in XLA, the value is the 64-bit pattern of the integer, so a
		// negative number wraps for u64 and is out of range otherwise.
		v := u
		if neg {
			v = -u
		}
		if hi := uintMax(t); tooBig || v > hi {
			return outOfRange("0", strconv.FormatUint(hi, 10))
		}
		store(l, i, v)
		return nil
	}
	lo, hi := intRange(t)
	v := int64(u)
	if neg {
		v = -v // u == 1<<63 wraps to MinInt64, as wanted
	}
	if tooBig || !neg && u > math.MaxInt64 || v < lo || v > hi {
		return outOfRange(strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10))
	}
	store(l, i, uint64(v))
	return nil
}

// float is the value of a number token read as a float64 (NaN for nan).
func (p *litParser) float(tok litTok, t DType) (float64, error) {
	switch tok.kind {
	case tInt, tDecimal:
		v, err := strconv.ParseFloat(p.text(tok), 64)
		if err != nil && math.IsInf(v, 0) {
			return 0, p.errorf(tok.pos, "Constant is out of range for double (+/-%s) and so is unparsable.",
				formatG(math.MaxFloat64, 6))
		}
		return v, nil
	case tInf:
		return math.Inf(1), nil
	case tNegInf:
		return math.Inf(-1), nil
	case tNaN:
		return math.NaN(), nil
	}
	return 0, p.errorf(tok.pos, "expect floating point value for primitive type: %s", upperName(t))
}

// quietDoublePayload is the payload of a plain `nan`: XLA reads every NaN
// as a double, whose quiet NaN has this payload.
const quietDoublePayload = 1 << 51

// setFloat stores v (a NaN as described by tok) into element i of float
// type t (or a complex component of type t when l is complex).
func (p *litParser) setFloat(l *Literal, i, pos int, t DType, v float64, tok litTok) error {
	if tok.kind == tNaN {
		bits, err := p.nanBits(l, i, pos, t, tok)
		if err != nil {
			return err
		}
		store(l, i, bits)
		return nil
	}
	var bits uint64
	var stored float64
	switch t {
	case F64:
		bits, stored = math.Float64bits(v), v
	case F32:
		bits, stored = uint64(math.Float32bits(float32(v))), float64(float32(v))
	default:
		f, _ := floatFormat(t)
		b := f.FromFloat64(v)
		if t == F16 || t == BF16 {
			b = f.FromFloat32(float32(v)) // Eigen rounds through float
		}
		bits, stored = uint64(b), f.ToFloat64(b)
	}
	if !math.IsInf(v, 0) && (math.IsInf(stored, 0) || math.IsNaN(stored)) {
		lo, hi := floatLimits(t)
		return p.errorf(pos, "value %s is out of range for literal's primitive type %s namely [%s, %s].",
			formatG(v, 6), upperName(t), formatG(lo, 6), formatG(hi, 6))
	}
	store(l, i, bits)
	return nil
}

// floatLimits are the lowest and largest finite values of float type t.
func floatLimits(t DType) (lo, hi float64) {
	switch t {
	case F32:
		return -math.MaxFloat32, math.MaxFloat32
	case F64:
		return -math.MaxFloat64, math.MaxFloat64
	}
	f, _ := floatFormat(t)
	return f.ToFloat64(f.LowestBits()), f.ToFloat64(f.MaxBits())
}

// nanBits is the bit pattern of a NaN token for float type t: the written
// payload where t has payloads, else t's NaN, as XLA's parser sets it.
func (p *litParser) nanBits(l *Literal, i, pos int, t DType, tok litTok) (uint64, error) {
	shape := ArrayShape(l.shape.DType, l.shape.Dims...).HumanString()
	payload := tok.payload
	if payload == 0 {
		payload = quietDoublePayload
	}
	var f minifloat.Format
	var n int // payload bits
	switch t {
	case F32:
		n = 23
	case F64:
		n = 52
	default:
		f, _ = floatFormat(t)
		n = f.NaNPayloadBits()
	}
	if n == 0 {
		if payload != quietDoublePayload {
			return 0, p.errorf(pos, "tries to set NaN payload 0x%x to a literal in shape %s at linear index %d, but %s does not support payloads",
				payload, shape, i, t)
		}
		return uint64(f.NaNBits(tok.neg)), nil
	}
	if payload == quietDoublePayload {
		payload = 1 << (n - 1)
	}
	if mask := uint64(1)<<n - 1; payload > mask {
		return 0, p.errorf(pos, "tries to set NaN payload 0x%x to a literal in shape %s at linear index %d, but the NaN payload is out of range (0x%x)",
			payload, shape, i, mask)
	}
	var bits uint64
	switch t {
	case F32:
		bits = 0x7f800000 | payload | boolBits(tok.neg)<<31
	case F64:
		bits = 0x7ff<<52 | payload | boolBits(tok.neg)<<63
	default:
		bits = uint64(f.NaNBits(tok.neg))&^(1<<n-1) | payload
	}
	return bits, nil
}

// complexValue parses `(re, im)` into complex element i.
func (p *litParser) complexValue(l *Literal, i int) error {
	t := l.shape.DType
	pos := p.tok.pos
	if err := p.advance(); err != nil {
		return err
	}
	var parts [2]uint64 // bit patterns in the component type
	names := [2]string{"real", "imaginary"}
	comp := t.ComplexComponent()
	for k := range parts {
		tok := p.tok
		v, err := p.float(tok, comp)
		if err != nil || tok.kind == tTrue || tok.kind == tFalse {
			return p.errorf(tok.pos, "expect floating-point value for %s part of complex number", names[k])
		}
		switch lo, hi := floatLimits(comp); {
		case tok.kind == tNaN:
			if parts[k], err = p.nanBits(l, i, pos, comp, tok); err != nil {
				return err
			}
		case !math.IsInf(v, 0) && (v < lo || v > hi):
			// XLA checks complex parts before rounding them.
			return p.errorf(pos, "%s part %s is out of range for literal's primitive type %s, namely [%s, %s].",
				names[k], formatG(v, 6), upperName(t), formatG(lo, 6), formatG(hi, 6))
		case comp == F32:
			parts[k] = uint64(math.Float32bits(float32(v)))
		default:
			parts[k] = math.Float64bits(v)
		}
		if err := p.advance(); err != nil {
			return err
		}
		if k == 0 {
			if err := p.expect(tComma, "expect comma after real part of complex literal"); err != nil {
				return err
			}
		}
	}
	if p.tok.kind != tRParen {
		return p.errorf(p.tok.pos, "expect ')' after complex number")
	}
	switch d := l.data.(type) {
	case []complex64:
		d[i] = complex(math.Float32frombits(uint32(parts[0])), math.Float32frombits(uint32(parts[1])))
	case []complex128:
		d[i] = complex(math.Float64frombits(parts[0]), math.Float64frombits(parts[1]))
	}
	return p.advance()
}
