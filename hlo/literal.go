package hlo

import "strings"

// Placeholder (to be replaced by the literal implementation): just enough
// API for the parser and printer to compile.
type Literal struct {
	shape  Shape
	text   string
	elided bool
}

type LiteralError struct {
	Offset int
	Msg    string
}

func (e *LiteralError) Error() string { return e.Msg }

func NewElidedLiteral(s Shape) *Literal { return &Literal{shape: s, elided: true} }
func (l *Literal) IsElided() bool       { return l.elided }
func (l *Literal) Shape() Shape         { return l.shape }
func ParseLiteral(s Shape, text string) (*Literal, error) {
	return &Literal{shape: s, text: strings.TrimSpace(text)}, nil
}
func (l *Literal) AppendPayload(b *strings.Builder) {
	if l.elided {
		b.WriteString("{...}")
		return
	}
	b.WriteString(l.text)
}

func (l *Literal) Equal(o *Literal) bool { return l.text == o.text && l.elided == o.elided }
