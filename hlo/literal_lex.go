package hlo

import (
	"fmt"
	"strconv"
	"strings"
)

// The lexer of literal text: XLA's HloLexer restricted to the tokens a
// literal can hold (braces, parentheses, commas, `...`, numbers, nan with
// an optional payload, inf, true, false), skipping white space and
// comments.

type litTokKind uint8

const (
	tEOF litTokKind = iota
	tLBrace
	tRBrace
	tLParen
	tRParen
	tComma
	tDots
	tInt     // -?[0-9]+
	tDecimal // a number with a fraction or an exponent
	tNaN     // nan, -nan, with an optional payload
	tInf
	tNegInf
	tTrue
	tFalse
	tOther
)

type litTok struct {
	kind     litTokKind
	pos, end int
	neg      bool   // tNaN: -nan
	payload  uint64 // tNaN: 0 when none is written
}

type litParser struct {
	src string
	pos int // lexer position, after tok
	tok litTok
}

func (p *litParser) errorf(pos int, format string, args ...any) *LiteralError {
	return &LiteralError{Offset: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *litParser) text(t litTok) string {
	if t.kind == tEOF {
		return "end of text"
	}
	return p.src[t.pos:t.end]
}

func isIdentChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// advance lexes the next token into p.tok.
func (p *litParser) advance() error {
	if err := p.skipSpace(); err != nil {
		return err
	}
	start := p.pos
	p.tok = litTok{kind: tEOF, pos: start, end: start}
	if start == len(p.src) {
		return nil
	}
	s := p.src[start:]
	kind := tOther
	n := 1
	switch c := s[0]; {
	case c == '{':
		kind = tLBrace
	case c == '}':
		kind = tRBrace
	case c == '(':
		kind = tLParen
	case c == ')':
		kind = tRParen
	case c == ',':
		kind = tComma
	case strings.HasPrefix(s, "..."):
		kind, n = tDots, 3
	case strings.HasPrefix(s, "-inf") && (len(s) == 4 || !isIdentChar(s[4])):
		kind, n = tNegInf, 4
	case strings.HasPrefix(s, "-nan"):
		p.pos = start + 4
		return p.nan(start, true)
	case isDigit(c) || c == '-' || c == '.':
		kind, n = numberToken(s)
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
		for n < len(s) && isIdentChar(s[n]) {
			n++
		}
		switch s[:n] {
		case "true":
			kind = tTrue
		case "false":
			kind = tFalse
		case "inf":
			kind = tInf
		case "nan":
			p.pos = start + n
			return p.nan(start, false)
		}
	}
	p.pos = start + n
	p.tok = litTok{kind: kind, pos: start, end: p.pos}
	return nil
}

// numberToken measures the number at the start of s (which begins with a
// digit, '-' or '.'), in the syntax of XLA's lexer:
// -?([0-9]+ | [0-9]+.[0-9]* | [0-9]*.[0-9]+)([eE][+-]?[0-9]+)?.
func numberToken(s string) (litTokKind, int) {
	i := 0
	if s[0] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	kind := tInt
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j, digits = j+1, digits+1
		}
		if digits > 0 {
			kind, i = tDecimal, j
		}
	}
	if digits == 0 {
		return tOther, 1
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			kind, i = tDecimal, j
		}
	}
	return kind, i
}

// nan lexes an optional `(0x...)` payload after nan or -nan.
func (p *litParser) nan(start int, neg bool) error {
	p.tok = litTok{kind: tNaN, pos: start, neg: neg}
	rest := p.src[p.pos:]
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest, ')')
		hex, ok := strings.CutPrefix(rest[1:max(end, 1)], "0x")
		v, err := strconv.ParseUint(hex, 16, 64)
		if end < 0 || !ok || err != nil || strings.HasPrefix(hex, "+") {
			return p.errorf(p.pos, "expects a NaN payload (0x...) in hexadecimal")
		}
		if v == 0 || v >= 1<<52 {
			return p.errorf(p.pos, "NaN payload 0x%x is out of range: it must be from 0x1 to 0xfffffffffffff", v)
		}
		p.tok.payload = v
		p.pos += end + 1
	}
	p.tok.end = p.pos
	return nil
}

// skipSpace skips white space and /* */ and // comments.
func (p *litParser) skipSpace() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "/*"):
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				return p.errorf(p.pos, "/* unterminated comment")
			}
			p.pos += end + 4
		case strings.HasPrefix(p.src[p.pos:], "//"):
			end := strings.IndexAny(p.src[p.pos:], "\n\r")
			if end < 0 {
				end = len(p.src) - p.pos
			}
			p.pos += end
		default:
			return nil
		}
	}
	return nil
}
