package hlotext

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is a parse error at a position in the input. It prints as
// compilers do: `FILE:LINE:COL: error: message`, then the source line and
// a caret under the column.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	// Source is the text of the line the error is on.
	Source string
}

func (e *Error) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d: error: %s\n%s\n%s^", file, e.Line, e.Col, e.Msg, e.Source, strings.Repeat(" ", max(e.Col-1, 0)))
}

// scanner is a byte cursor over the input with the lexical helpers the
// recursive-descent parser needs. Working on bytes directly (rather than a
// token stream) lets the parser capture attribute values verbatim.
type scanner struct {
	src  string
	pos  int
	file string
	// base is added to line numbers: a module cut out of a `// -----`
	// split file reports positions in the whole file.
	baseLine int
	err      *Error
	// arena backs small integer slices (see ints).
	arena []int64
	// depth counts the nested constructs being parsed (see enter).
	depth int
}

// maxNesting bounds how deeply the recursive parts of the grammar nest:
// tuple shapes, instructions written as operands, computations written in
// attributes. Real modules nest a handful of levels; 1000 is far above
// anything real, and far below the depth (around a million) at which a
// goroutine's stack overflows, a fatal error no recover catches.
const maxNesting = 1000

// enter starts a nested construct at the current position; every
// successful enter is paired with a leave.
func (s *scanner) enter(what string) error {
	if s.depth >= maxNesting {
		return s.errorf("%s nested more than %d levels deep", what, maxNesting)
	}
	s.depth++
	return nil
}

func (s *scanner) leave() { s.depth-- }

// errorf records the first error at offset off and returns it.
func (s *scanner) errorAt(off int, format string, args ...any) error {
	if s.err != nil {
		return s.err
	}
	line, col := s.lineCol(off)
	s.err = &Error{File: s.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Source: s.sourceLine(off)}
	return s.err
}

func (s *scanner) errorf(format string, args ...any) error {
	return s.errorAt(s.pos, format, args...)
}

// lineCol converts a byte offset into 1-based line and column, counting
// CR, LF and CRLF each as one line end.
func (s *scanner) lineCol(off int) (int, int) {
	line, start := 1, 0
	for i := 0; i < off && i < len(s.src); i++ {
		switch s.src[i] {
		case '\n':
			line++
			start = i + 1
		case '\r':
			if i+1 < len(s.src) && s.src[i+1] == '\n' {
				continue
			}
			line++
			start = i + 1
		}
	}
	return line + s.baseLine, off - start + 1
}

// sourceLine returns the line holding offset off, without its line end.
func (s *scanner) sourceLine(off int) string {
	off = min(off, len(s.src))
	start := off
	for start > 0 && s.src[start-1] != '\n' && s.src[start-1] != '\r' {
		start--
	}
	end := off
	for end < len(s.src) && s.src[end] != '\n' && s.src[end] != '\r' {
		end++
	}
	return s.src[start:end]
}

// locate formats a position as LINE:COL.
func (s *scanner) locate(off int) string {
	line, col := s.lineCol(off)
	return fmt.Sprintf("%d:%d", line, col)
}

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

func (s *scanner) peekByte() byte {
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

// skip passes over white space and comments. It returns false (and records
// an error) on an unterminated block comment.
func (s *scanner) skip() bool {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s.pos++
		case c == '/' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '*':
			end := indexFrom(s.src, "*/", s.pos+2)
			if end < 0 {
				s.errorf("unterminated /* comment")
				s.pos = len(s.src)
				return false
			}
			s.pos = end + 2
		case c == '/' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '/':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' && s.src[s.pos] != '\r' {
				s.pos++
			}
		default:
			return true
		}
	}
	return true
}

// skipInline is skip that stops at a line end: used to find where an
// attribute value written without brackets ends.
func (s *scanner) skipInline() {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == ' ' || c == '\t':
			s.pos++
		case c == '/' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '*':
			end := indexFrom(s.src, "*/", s.pos+2)
			if end < 0 {
				// Unterminated: leave it to skip to report, without
				// searching again from every later byte.
				return
			}
			s.pos = end + 2
		default:
			return
		}
	}
}

func indexFrom(s, sub string, from int) int {
	if from > len(s) {
		return -1
	}
	i := strings.Index(s[from:], sub)
	if i < 0 {
		return -1
	}
	return from + i
}

// accept skips space and consumes c if it is next.
func (s *scanner) accept(c byte) bool {
	s.skip()
	if s.pos < len(s.src) && s.src[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// acceptStr skips space and consumes lit if it is next.
func (s *scanner) acceptStr(lit string) bool {
	s.skip()
	if len(s.src)-s.pos >= len(lit) && s.src[s.pos:s.pos+len(lit)] == lit {
		s.pos += len(lit)
		return true
	}
	return false
}

func (s *scanner) expect(c byte, what string) error {
	if !s.accept(c) {
		return s.errorf("expects '%c' %s", c, what)
	}
	return nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '%' || c == '$'
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '$'
}

// ident reads a name such as %add.1 or get-tuple-element, without the %.
// It returns "" if no name is next.
func (s *scanner) ident() string {
	s.skip()
	start := s.pos
	if s.pos < len(s.src) && s.src[s.pos] == '%' {
		// A name starts with a letter or '_' whether or not '%' precedes
		// it (XLA's lexer), so that every name prints back parsable.
		if s.pos+1 >= len(s.src) || !isIdentStart(s.src[s.pos+1]) || s.src[s.pos+1] == '%' {
			return ""
		}
		s.pos++
		start++
	} else if s.pos >= len(s.src) || !isIdentStart(s.src[s.pos]) || s.src[s.pos] == '%' {
		return ""
	}
	for s.pos < len(s.src) && isIdentByte(s.src[s.pos]) {
		s.pos++
	}
	// A name may not end in '-' followed by '>' (the arrow of a signature).
	if s.pos > start && s.src[s.pos-1] == '-' && s.pos < len(s.src) && s.src[s.pos] == '>' {
		s.pos--
	}
	return s.src[start:s.pos]
}

// peekIdent returns the name ahead without consuming it.
func (s *scanner) peekIdent() string {
	save := s.pos
	id := s.ident()
	s.pos = save
	return id
}

// integer reads a decimal integer with optional sign.
func (s *scanner) integer() (int64, error) {
	s.skip()
	start := s.pos
	if s.pos < len(s.src) && (s.src[s.pos] == '-' || s.src[s.pos] == '+') {
		s.pos++
	}
	for s.pos < len(s.src) && s.src[s.pos] >= '0' && s.src[s.pos] <= '9' {
		s.pos++
	}
	v, err := strconv.ParseInt(s.src[start:s.pos], 10, 64)
	if err != nil {
		s.pos = start
		return 0, s.errorAt(start, "expects integer")
	}
	return v, nil
}

// quoted reads a C-escaped string in double quotes and returns its value.
func (s *scanner) quoted() (string, error) {
	s.skip()
	start := s.pos
	if !s.accept('"') {
		return "", s.errorf("expects string")
	}
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '\\':
			s.pos += 2
		case '"':
			s.pos++
			v, err := unescapeC(s.src[start+1 : s.pos-1])
			if err != nil {
				return "", s.errorAt(start, "bad string: %v", err)
			}
			return v, nil
		default:
			s.pos++
		}
	}
	return "", s.errorAt(start, "unterminated string")
}

// balanced consumes one bracketed group starting at the current byte
// ({...}, (...) or [...]), honouring strings and comments inside.
func (s *scanner) balanced() error {
	start := s.pos
	depth := 0
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch c {
		case '"':
			if _, err := s.quoted(); err != nil {
				return err
			}
			continue
		case '/':
			if s.pos+1 < len(s.src) && (s.src[s.pos+1] == '*' || s.src[s.pos+1] == '/') {
				if !s.skip() {
					return s.err
				}
				continue
			}
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
			if depth == 0 {
				s.pos++
				return nil
			}
		}
		s.pos++
	}
	return s.errorAt(start, "unbalanced brackets")
}

// rawValue consumes an attribute value Axle does not interpret and returns
// its text: brackets and strings balanced, ending at a top-level comma, at a
// closing bracket of the enclosing list, or at a line end.
func (s *scanner) rawValue() (string, error) {
	s.skip()
	start := s.pos
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch c {
		case '{', '(', '[':
			if err := s.balanced(); err != nil {
				return "", err
			}
		case '"':
			if _, err := s.quoted(); err != nil {
				return "", err
			}
		case ',', '}', ')', ']', '\n', '\r':
			return trimSpaceRight(s.src[start:s.pos]), nil
		case '/':
			if s.pos+1 < len(s.src) && s.src[s.pos+1] == '*' && indexFrom(s.src, "*/", s.pos+2) < 0 {
				return "", s.errorf("unterminated /* comment")
			}
			s.pos++
		default:
			s.pos++
		}
		s.skipInline()
	}
	return trimSpaceRight(s.src[start:s.pos]), nil
}

func trimSpaceRight(v string) string {
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}
