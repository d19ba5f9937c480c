package hlotext

import "fmt"

// Warning is something the parser accepted although XLA's own parser would
// not: real producers print it and its meaning is unambiguous (an older
// api_version spelling, an instruction used before the line defining it).
// It prints as compilers do: `FILE:LINE:COL: warning: message`.
type Warning struct {
	File      string
	Line, Col int
	Msg       string
}

func (w Warning) String() string {
	file := w.File
	if file == "" {
		file = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d: warning: %s", file, w.Line, w.Col, w.Msg)
}

// warnAt reports a warning at offset off to Options.Warn, if set; the
// library itself never writes to stderr.
func (p *parser) warnAt(off int, format string, args ...any) {
	if p.opts.Warn == nil {
		return
	}
	line, col := p.lineCol(off)
	p.opts.Warn(Warning{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}
