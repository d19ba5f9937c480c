package mlir

import (
	"sort"
	"strings"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tIdent           // bare identifier: func.func, tensor, i32, LT, x
	tPercent         // %name, with any #N result index: %0, %arg1, %2#1
	tAt              // @name or @"quoted name"; text without the @ (quotes resolved)
	tCaret           // ^bb0
	tHash            // #name: an attribute alias or dialect attribute head
	tBang            // !name: a dialect type head
	tString          // "..."; text with escapes resolved
	tInt             // 12, 0x1F (no sign)
	tFloat           // 1.5, 2e-3 (no sign)
	tPunct           // one of ( ) [ ] { } < > , = : * ? + - or -> ::
	tError           // a character the lexer cannot start a token with
)

// token is one lexeme; off and end are byte offsets into the source.
type token struct {
	kind     tokKind
	text     string
	off, end int
}

// lexer turns source bytes into tokens on demand. It works from an offset
// so the parser can switch to character-level scanning for the few places
// MLIR's grammar is not token-based (tensor dimensions, dialect attribute
// bodies) and resume afterwards.
type lexer struct {
	src   []byte
	end   int   // lexing stops here (a sub-range for dialect attribute bodies)
	off   int   // next unread byte
	lines []int // offsets of line starts, shared with sub-lexers
	file  string
	err   string // set by tError and bad strings
	names map[string]string
}

// intern returns b as a string, allocating each distinct identifier once:
// keywords, types and op names repeat thousands of times in a program.
func (lx *lexer) intern(b []byte) string {
	if s, ok := lx.names[string(b)]; ok {
		return s
	}
	s := string(b)
	lx.names[s] = s
	return s
}

func newLexer(file string, src []byte) *lexer {
	lines := []int{0}
	for i, c := range src {
		if c == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &lexer{src: src, end: len(src), lines: lines, file: file, names: map[string]string{}}
}

// pos converts a byte offset to a 1-based line and column.
func (lx *lexer) pos(off int) Pos {
	i := sort.Search(len(lx.lines), func(i int) bool { return lx.lines[i] > off }) - 1
	return Pos{File: lx.file, Line: i + 1, Col: off - lx.lines[i] + 1}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isIDChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '$' || c == '.' }

// suffixChar is a character allowed after % ^ # ! in MLIR's suffix-id.
func isSuffixChar(c byte) bool { return isIDChar(c) || c == '-' }

// skipSpace skips white space and // comments.
func (lx *lexer) skipSpace() {
	for lx.off < lx.end {
		c := lx.src[lx.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			lx.off++
		case c == '/' && lx.off+1 < lx.end && lx.src[lx.off+1] == '/':
			for lx.off < lx.end && lx.src[lx.off] != '\n' {
				lx.off++
			}
		default:
			return
		}
	}
}

// next returns the next token and advances past it.
func (lx *lexer) next() token {
	lx.skipSpace()
	start := lx.off
	if start >= lx.end {
		return token{kind: tEOF, off: start, end: start}
	}
	c := lx.src[start]
	tok := func(k tokKind) token {
		return token{kind: k, text: string(lx.src[start:lx.off]), off: start, end: lx.off}
	}
	switch {
	case isLetter(c):
		lx.off++
		for lx.off < lx.end && isIDChar(lx.src[lx.off]) {
			lx.off++
		}
		return token{kind: tIdent, text: lx.intern(lx.src[start:lx.off]), off: start, end: lx.off}
	case isDigit(c):
		return lx.number()
	case c == '"':
		s, ok := lx.str()
		if !ok {
			return token{kind: tError, off: start, end: lx.off}
		}
		return token{kind: tString, text: s, off: start, end: lx.off}
	case c == '%' || c == '^' || c == '#' || c == '!':
		lx.off++
		for lx.off < lx.end && isSuffixChar(lx.src[lx.off]) {
			lx.off++
		}
		if lx.off == start+1 {
			lx.err = "expected an identifier after " + string(c)
			return token{kind: tError, off: start, end: lx.off}
		}
		if c == '%' && lx.off+1 < lx.end && lx.src[lx.off] == '#' && isDigit(lx.src[lx.off+1]) {
			lx.off++
			for lx.off < lx.end && isDigit(lx.src[lx.off]) {
				lx.off++
			}
		}
		switch c {
		case '%':
			return tok(tPercent)
		case '^':
			return tok(tCaret)
		case '#':
			return tok(tHash)
		}
		return tok(tBang)
	case c == '@':
		lx.off++
		if lx.off < lx.end && lx.src[lx.off] == '"' {
			s, ok := lx.str()
			if !ok {
				return token{kind: tError, off: start, end: lx.off}
			}
			return token{kind: tAt, text: s, off: start, end: lx.off}
		}
		for lx.off < lx.end && isSuffixChar(lx.src[lx.off]) {
			lx.off++
		}
		if lx.off == start+1 {
			lx.err = "expected a symbol name after @"
			return token{kind: tError, off: start, end: lx.off}
		}
		return token{kind: tAt, text: string(lx.src[start+1 : lx.off]), off: start, end: lx.off}
	case c == '-' && lx.off+1 < lx.end && lx.src[lx.off+1] == '>':
		lx.off += 2
		return token{kind: tPunct, text: "->", off: start, end: lx.off}
	case c == ':' && lx.off+1 < lx.end && lx.src[lx.off+1] == ':':
		lx.off += 2
		return token{kind: tPunct, text: "::", off: start, end: lx.off}
	}
	if i := strings.IndexByte(puncts, c); i >= 0 {
		lx.off++
		return token{kind: tPunct, text: puncts[i : i+1], off: start, end: lx.off}
	}
	lx.off++
	lx.err = "unexpected character " + quoteChar(c)
	return token{kind: tError, off: start, end: lx.off}
}

func quoteChar(c byte) string {
	if c < ' ' || c > '~' {
		const hex = "0123456789abcdef"
		return "'\\x" + string(hex[c>>4]) + string(hex[c&15]) + "'"
	}
	return "'" + string(c) + "'"
}

// puncts are the one-character punctuation tokens; their texts are slices
// of this constant, so lexing them does not allocate.
const puncts = "()[]{}<>,=:*?+-"

// number lexes an unsigned integer (decimal or 0x hex) or float.
func (lx *lexer) number() token {
	start := lx.off
	if lx.src[start] == '0' && start+2 < lx.end && lx.src[start+1] == 'x' && isHex(lx.src[start+2]) {
		lx.off += 2
		for lx.off < lx.end && isHex(lx.src[lx.off]) {
			lx.off++
		}
		return token{kind: tInt, text: string(lx.src[start:lx.off]), off: start, end: lx.off}
	}
	for lx.off < lx.end && isDigit(lx.src[lx.off]) {
		lx.off++
	}
	kind := tInt
	if lx.off < lx.end && lx.src[lx.off] == '.' {
		kind = tFloat
		lx.off++
		for lx.off < lx.end && isDigit(lx.src[lx.off]) {
			lx.off++
		}
		if lx.off < lx.end && (lx.src[lx.off] == 'e' || lx.src[lx.off] == 'E') {
			save := lx.off
			lx.off++
			if lx.off < lx.end && (lx.src[lx.off] == '+' || lx.src[lx.off] == '-') {
				lx.off++
			}
			if lx.off < lx.end && isDigit(lx.src[lx.off]) {
				for lx.off < lx.end && isDigit(lx.src[lx.off]) {
					lx.off++
				}
			} else {
				lx.off = save
			}
		}
	}
	return token{kind: kind, text: string(lx.src[start:lx.off]), off: start, end: lx.off}
}

// str lexes a quoted string at lx.off, resolving MLIR's escapes (\n \t
// \" \\ and two hex digits).
func (lx *lexer) str() (string, bool) {
	lx.off++ // opening quote
	var b []byte
	for lx.off < lx.end {
		c := lx.src[lx.off]
		switch {
		case c == '"':
			lx.off++
			return string(b), true
		case c == '\n':
			lx.err = "unterminated string"
			return "", false
		case c == '\\':
			if lx.off+1 >= lx.end {
				lx.err = "unterminated string"
				return "", false
			}
			e := lx.src[lx.off+1]
			switch {
			case e == 'n':
				b = append(b, '\n')
			case e == 't':
				b = append(b, '\t')
			case e == '"' || e == '\\':
				b = append(b, e)
			case lx.off+2 < lx.end && isHex(e) && isHex(lx.src[lx.off+2]):
				b = append(b, hexVal(e)<<4|hexVal(lx.src[lx.off+2]))
				lx.off++
			default:
				lx.err = "unknown escape in string"
				return "", false
			}
			lx.off += 2
		default:
			b = append(b, c)
			lx.off++
		}
	}
	lx.err = "unterminated string"
	return "", false
}

func hexVal(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
