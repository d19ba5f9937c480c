package npy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The header is a Python literal that NumPy reads with ast.literal_eval.
// pyParser reads the part of Python's literal syntax that headers use:
// strings, integers (Python 2's 3L too), True, False, None, tuples, lists
// and dictionaries with string keys.

// pyList is a Python tuple or list.
type pyList struct {
	elems []any
	tuple bool
}

// pyDict is a Python dictionary with string keys.
type pyDict map[string]any

// maxDepth bounds nesting, so that a header of a million '(' cannot
// exhaust the stack.
const maxDepth = 32

var pyWords = []struct {
	word string
	v    any
}{{"True", true}, {"False", false}, {"None", nil}}

type pyParser struct {
	src string
	pos int
}

func (p *pyParser) rest() string {
	r := p.src[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *pyParser) skipSpace() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

// eat consumes c (after spaces) if it is next.
func (p *pyParser) eat(c byte) bool {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// value parses one literal at nesting depth.
func (p *pyParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("literal nested deeper than %d", maxDepth)
	}
	p.skipSpace()
	if p.pos == len(p.src) {
		return nil, errors.New("unexpected end of the header")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		p.pos++
		return p.dict(depth)
	case c == '(' || c == '[':
		p.pos++
		return p.list(depth, c)
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.integer()
	}
	for _, w := range pyWords {
		if strings.HasPrefix(p.src[p.pos:], w.word) {
			p.pos += len(w.word)
			return w.v, nil
		}
	}
	return nil, fmt.Errorf("unexpected %q", p.rest())
}

func (p *pyParser) dict(depth int) (any, error) {
	d := pyDict{}
	for !p.eat('}') {
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("dictionary key %v is not a string", k)
		}
		if !p.eat(':') {
			return nil, fmt.Errorf("want ':' after key %q, have %q", key, p.rest())
		}
		if d[key], err = p.value(depth + 1); err != nil {
			return nil, err
		}
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return d, nil
		}
		return nil, fmt.Errorf("want ',' or '}' in a dictionary, have %q", p.rest())
	}
	return d, nil
}

// list parses the elements of a tuple (open '(') or list (open '[').
// A parenthesised single value without a comma is that value, as in Python.
func (p *pyParser) list(depth int, open byte) (any, error) {
	closing := byte(')')
	if open == '[' {
		closing = ']'
	}
	l := pyList{tuple: open == '('}
	comma := false
	for !p.eat(closing) {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l.elems = append(l.elems, v)
		if p.eat(',') {
			comma = true
			continue
		}
		if !p.eat(closing) {
			return nil, fmt.Errorf("want ',' or %q, have %q", closing, p.rest())
		}
		break
	}
	if l.tuple && len(l.elems) == 1 && !comma {
		return l.elems[0], nil
	}
	return l, nil
}

// str parses a quoted string; escapes are kept simple (a backslash takes
// the next character as it is), as descrs and keys have none.
func (p *pyParser) str() (any, error) {
	q := p.src[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch {
		case c == q:
			return b.String(), nil
		case c == '\\' && p.pos < len(p.src):
			b.WriteByte(p.src[p.pos])
			p.pos++
		default:
			b.WriteByte(c)
		}
	}
	return nil, errors.New("unterminated string")
}

func (p *pyParser) integer() (any, error) {
	start := p.pos
	if c := p.src[p.pos]; c == '-' || c == '+' {
		p.pos++
	}
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("integer %q: %w", p.src[start:p.pos], err)
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'L' || p.src[p.pos] == 'l') {
		p.pos++ // Python 2 wrote long integers with a suffix
	}
	return n, nil
}
