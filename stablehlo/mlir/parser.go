package mlir

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of regions, attributes and types so that
// hostile input cannot exhaust the stack.
const maxDepth = 200

// Parse reads MLIR text: a `module` (optionally named, with attributes) or
// a sequence of top-level ops, either syntax, every op normalized to the
// generic form. Errors are *Error values carrying FILE:LINE:COL.
func Parse(filename string, src []byte) (m *Module, err error) {
	p := &parser{lx: newLexer(filename, src)}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			m, err = nil, e
		}
	}()
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.lx.off = 3 // a UTF-8 byte order mark, as some editors save files
	}
	if start, end := splitResources(src); start < len(src) {
		p.parseResources(start, end)
		p.lx.end = start
	}
	p.next()
	return p.parseTopLevel(), nil
}

// parser holds one Parse's state. It stops at the first error: parse
// functions panic with an *Error and Parse recovers it (and only it), so
// no panic crosses the API and the grammar code reads straight through.
type parser struct {
	lx      *lexer
	tok     token
	prevEnd int // end offset of the token before tok
	depth   int

	scopes      []*scope
	attrAliases map[string]Attr
	typeAliases map[string]Type
	locAliases  map[string]Attr
	aliasLocs   []aliasLoc // ops whose loc names an alias, resolved at the end
	pending     []*pendingUse
	typeCache   map[string]Type   // tensor types by spelling
	resources   map[string][]byte // dense_resource blobs, alignment header dropped
}

type aliasLoc struct {
	op   *Op
	name string
	off  int
}

// scope holds the values defined in one region. Uses not yet defined are
// kept pending until the region closes, which allows graph regions'
// forward references; an isolated scope (a function body) stops lookups.
type scope struct {
	names    map[string][]*Value
	isolated bool
	pending  []*pendingUse
}

type pendingUse struct {
	ph   *Value // the placeholder stored in the op's operand list
	op   *Op    // set when the using op is complete
	base string
	idx  int
	off  int
}

func (p *parser) fail(off int, format string, args ...any) {
	panic(&Error{Pos: p.lx.pos(off), Msg: fmt.Sprintf(format, args...)})
}

// next advances to the next token, reporting lexical errors at once.
func (p *parser) next() {
	p.prevEnd = p.tok.end
	p.tok = p.lx.next()
	if p.tok.kind == tError {
		p.fail(p.tok.off, "%s", p.lx.err)
	}
}

// reset re-lexes from byte offset off (after character-level scanning).
func (p *parser) reset(off int) {
	p.lx.off = off
	p.next()
}

func (p *parser) is(text string) bool {
	return (p.tok.kind == tPunct || p.tok.kind == tIdent) && p.tok.text == text
}

// accept consumes the current token if it is the punctuation or keyword text.
func (p *parser) accept(text string) bool {
	if p.is(text) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expect(text string) {
	if !p.accept(text) {
		p.fail(p.tok.off, "expected '%s', found %s", text, p.describe())
	}
}

// describe names the current token for error messages.
func (p *parser) describe() string {
	switch p.tok.kind {
	case tEOF:
		return "end of file"
	case tString:
		return strconv.Quote(p.tok.text)
	}
	return "'" + p.lx.text(p.tok) + "'"
}

func (lx *lexer) text(t token) string { return string(lx.src[t.off:t.end]) }

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.tok.off, "nesting deeper than %d", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// parseTopLevel reads alias definitions, a module or bare top-level ops.
func (p *parser) parseTopLevel() *Module {
	m := &Module{Pos: p.lx.pos(p.tok.off)}
	p.pushScope(true)
	sawModule := false
	for p.tok.kind != tEOF {
		switch {
		case p.tok.kind == tHash || p.tok.kind == tBang:
			p.parseAliasDef()
		case p.is("module"):
			if sawModule || len(m.Ops) > 0 {
				p.fail(p.tok.off, "only one module per file (or section)")
			}
			sawModule = true
			p.parseModule(m)
		default:
			if sawModule {
				p.fail(p.tok.off, "unexpected %s after the module", p.describe())
			}
			m.Ops = append(m.Ops, p.parseOp())
		}
	}
	p.popScope()
	if !sawModule && len(m.Ops) == 1 && m.Ops[0].Name == "builtin.module" {
		unwrapModule(m)
	}
	p.resolveLocs()
	return m
}

// unwrapModule turns a generic `"builtin.module"() ({...})` into the Module.
func unwrapModule(m *Module) {
	op := m.Ops[0]
	m.Ops = nil
	for _, a := range op.Attrs {
		if a.Name == "sym_name" {
			if s, ok := a.Value.(StringAttr); ok {
				m.Name = s.Value
				continue
			}
		}
		m.Attrs = append(m.Attrs, a)
	}
	if len(op.Regions) == 1 && len(op.Regions[0].Blocks) == 1 {
		m.Ops = op.Regions[0].Blocks[0].Ops
	}
}

func (p *parser) parseModule(m *Module) {
	m.Pos = p.lx.pos(p.tok.off)
	p.next()
	if p.tok.kind == tAt {
		m.Name = p.tok.text
		p.next()
	}
	if p.accept("attributes") {
		m.Attrs = p.parseDict()
	}
	r := p.parseRegion(nil, false)
	if len(r.Blocks) == 1 {
		m.Ops = r.Blocks[0].Ops
	}
	if p.is("loc") {
		p.parseLoc()
	}
}

// parseAliasDef reads `#name = attr` or `!name = type` at top level.
func (p *parser) parseAliasDef() {
	name, off, isType := p.tok.text, p.tok.off, p.tok.kind == tBang
	p.next()
	if !p.is("=") {
		p.fail(off, "expected an op or an alias definition, found '%s'", name)
	}
	p.next()
	if isType {
		if p.typeAliases == nil {
			p.typeAliases = map[string]Type{}
		}
		p.typeAliases[name] = p.parseType()
		return
	}
	if p.is("loc") {
		if p.locAliases == nil {
			p.locAliases = map[string]Attr{}
		}
		p.locAliases[name] = p.parseLoc()
		return
	}
	if p.attrAliases == nil {
		p.attrAliases = map[string]Attr{}
	}
	p.attrAliases[name] = p.parseAttr()
}

// resolveLocs replaces `loc(#loc1)` with the alias's location, which MLIR
// prints after the module, so it is only known at the end.
func (p *parser) resolveLocs() {
	for _, a := range p.aliasLocs {
		l, ok := p.locAliases[a.name]
		if !ok {
			p.fail(a.off, "undefined location alias %s", a.name)
		}
		a.op.Loc = l
	}
}

// parseLoc reads `loc(...)` and returns it as text; `loc(#alias)` gives a
// LocAttr whose Text is the alias name, resolved by the caller.
func (p *parser) parseLoc() Attr {
	off := p.tok.off
	p.expect("loc")
	if !p.is("(") {
		p.fail(p.tok.off, "expected '(' after loc")
	}
	end := p.scanBalanced(p.tok.off)
	text := string(p.lx.src[off:end])
	p.reset(end)
	return LocAttr{Text: text}
}

// parseOpLoc reads an op's optional trailing location.
func (p *parser) parseOpLoc(op *Op) {
	if !p.is("loc") {
		return
	}
	off := p.tok.off
	l := p.parseLoc().(LocAttr)
	inner := strings.TrimSpace(l.Text[len("loc(") : len(l.Text)-1])
	if strings.HasPrefix(inner, "#") && isAliasName(inner[1:]) {
		p.aliasLocs = append(p.aliasLocs, aliasLoc{op: op, name: inner, off: off})
	}
	op.Loc = l
}

func isAliasName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSuffixChar(s[i]) {
			return false
		}
	}
	return s != ""
}

// scanBalanced returns the offset just past the bracket that closes the one
// at off, skipping strings and nested brackets of every kind (and `->`,
// whose '>' closes nothing).
func (p *parser) scanBalanced(off int) int {
	end, bad, msg := p.balancedEnd(off)
	if msg != "" {
		p.fail(bad, "%s", msg)
	}
	return end
}

// balancedEnd is scanBalanced without failing: on bad input it returns
// the offending offset and a message.
func (p *parser) balancedEnd(off int) (end, bad int, msg string) {
	src := p.lx.src
	var stack []byte
	for i := off; i < p.lx.end; i++ {
		c := src[i]
		switch c {
		case '"':
			for i++; i < p.lx.end && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '(', '[', '{', '<':
			stack = append(stack, closer(c))
			if len(stack) > maxDepth {
				return 0, i, fmt.Sprintf("nesting deeper than %d", maxDepth)
			}
		case ')', ']', '}', '>':
			if c == '>' && i > 0 && src[i-1] == '-' {
				continue
			}
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, i, fmt.Sprintf("unbalanced '%c'", c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1, 0, ""
			}
		}
	}
	return 0, off, fmt.Sprintf("unclosed '%c'", src[off])
}

// pushScope opens a region's value scope.
func (p *parser) pushScope(isolated bool) {
	p.scopes = append(p.scopes, &scope{names: map[string][]*Value{}, isolated: isolated})
}

// popScope closes a scope, resolving its forward references or handing
// them to the enclosing scope; an isolated scope's leftovers are errors.
func (p *parser) popScope() {
	s := p.scopes[len(p.scopes)-1]
	p.scopes = p.scopes[:len(p.scopes)-1]
	for _, u := range s.pending {
		if vs, ok := s.names[u.base]; ok {
			p.bindPending(u, vs)
			continue
		}
		if s.isolated || len(p.scopes) == 0 {
			p.fail(u.off, "use of undefined value %s", u.ph.Name)
		}
		parent := p.scopes[len(p.scopes)-1]
		parent.pending = append(parent.pending, u)
	}
}

func (p *parser) bindPending(u *pendingUse, vs []*Value) {
	if u.idx >= len(vs) {
		p.fail(u.off, "%s has only %d results", u.base, len(vs))
	}
	v := vs[u.idx]
	for i, o := range u.op.Operands {
		if o == u.ph {
			u.op.Operands[i] = v
		}
	}
}

// define binds result or argument names in the innermost scope.
func (p *parser) define(base string, vs []*Value, off int) {
	s := p.scopes[len(p.scopes)-1]
	if _, dup := s.names[base]; dup {
		p.fail(off, "redefinition of value %s", base)
	}
	s.names[base] = vs
}

// use resolves `%name` or `%name#N` at the current token.
func (p *parser) use() *Value {
	if p.tok.kind != tPercent {
		p.fail(p.tok.off, "expected a value, found %s", p.describe())
	}
	name, off := p.tok.text, p.tok.off
	p.next()
	base, idx := name, 0
	if i := strings.IndexByte(name, '#'); i >= 0 {
		base = name[:i]
		idx, _ = strconv.Atoi(name[i+1:])
	}
	for i := len(p.scopes) - 1; i >= 0; i-- {
		if vs, ok := p.scopes[i].names[base]; ok {
			if idx >= len(vs) {
				p.fail(off, "%s has only %d results", base, len(vs))
			}
			return vs[idx]
		}
		if p.scopes[i].isolated {
			break
		}
	}
	ph := &Value{Name: name}
	u := &pendingUse{ph: ph, base: base, idx: idx, off: off}
	s := p.scopes[len(p.scopes)-1]
	s.pending = append(s.pending, u)
	p.pending = append(p.pending, u)
	return ph
}

// useList reads `%a, %b, ...`, or nothing when no value comes next.
func (p *parser) useList() []*Value {
	var vs []*Value
	if p.tok.kind != tPercent {
		return nil
	}
	vs = append(vs, p.use())
	for p.is(",") && p.peekKind() == tPercent {
		p.next()
		vs = append(vs, p.use())
	}
	return vs
}

// peekKind returns the kind of the token after the current one.
func (p *parser) peekKind() tokKind {
	return p.peek().kind
}

func (p *parser) peek() token {
	save := p.lx.off
	t := p.lx.next()
	p.lx.off = save
	return t
}

// sortAttrs orders a dictionary by name, as MLIR's DictionaryAttr does, so
// that pretty and generic spellings of an op compare equal.
func sortAttrs(as []NamedAttr) []NamedAttr {
	sort.SliceStable(as, func(i, j int) bool { return as[i].Name < as[j].Name })
	return as
}

// closer is the bracket that closes c.
func closer(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	}
	return '>'
}
