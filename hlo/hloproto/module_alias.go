package hloproto

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// The header's input_output_alias and buffer_donor, which Axle keeps as
// text, also go to HloModuleProto's fields (what the runtime reads for
// donation), and come back from them as XLA prints them:
//
//	input_output_alias={ {0}: (0, {0}, must-alias), {1}: (0, {1}) }
//	buffer_donor={ (0, {0}), (0, {1}) }

// aliasTokens splits alias text into punctuation, numbers and words.
func aliasTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.IndexByte("{}():,", c) >= 0:
			out = append(out, s[i:i+1])
			i++
		default:
			j := i
			for j < len(s) && strings.IndexByte("{}():, \t\n", s[j]) < 0 {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

// tokenReader walks aliasTokens; any mismatch makes ok false for good.
type tokenReader struct {
	toks []string
	ok   bool
}

func (r *tokenReader) accept(t string) bool {
	if r.ok && len(r.toks) > 0 && r.toks[0] == t {
		r.toks = r.toks[1:]
		return true
	}
	return false
}

func (r *tokenReader) expect(t string) {
	if !r.accept(t) {
		r.ok = false
	}
}

func (r *tokenReader) int() int64 {
	if !r.ok || len(r.toks) == 0 {
		r.ok = false
		return 0
	}
	n, err := strconv.ParseInt(r.toks[0], 10, 64)
	r.ok = err == nil
	r.toks = r.toks[1:]
	return n
}

func (r *tokenReader) index() []int64 {
	l := []int64{}
	r.expect("{")
	if r.accept("}") {
		return l
	}
	for r.ok {
		l = append(l, r.int())
		if r.accept("}") {
			break
		}
		r.expect(",")
	}
	return l
}

// list reads `{ item, item }`.
func (r *tokenReader) list(item func()) {
	r.expect("{")
	if r.accept("}") {
		return
	}
	for r.ok {
		item()
		if r.accept("}") {
			break
		}
		r.expect(",")
	}
	r.ok = r.ok && len(r.toks) == 0
}

func parseIOAlias(s string) (*HloInputOutputAliasProto, bool) {
	p := &HloInputOutputAliasProto{}
	r := &tokenReader{toks: aliasTokens(s), ok: true}
	r.list(func() {
		e := &HloInputOutputAliasProto_AliasEntryProto{OutputShapeIndex: r.index(), Kind: Kind_MAY_ALIAS}
		r.expect(":")
		r.expect("(")
		e.ParameterNumber = r.int()
		r.expect(",")
		e.ParameterShapeIndex = r.index()
		if r.accept(",") {
			switch {
			case r.accept("must-alias"):
				e.Kind = Kind_MUST_ALIAS
			case r.accept("may-alias"):
			default:
				r.ok = false
			}
		}
		r.expect(")")
		p.Entries = append(p.Entries, e)
	})
	return p, r.ok
}

func parseBufferDonor(s string) (*HloBufferDonorProto, bool) {
	p := &HloBufferDonorProto{}
	r := &tokenReader{toks: aliasTokens(s), ok: true}
	r.list(func() {
		e := &HloBufferDonorProto_BufferDonorEntryProto{}
		r.expect("(")
		e.ParameterNumber = r.int()
		r.expect(",")
		e.ParameterShapeIndex = r.index()
		r.expect(")")
		p.Entries = append(p.Entries, e)
	})
	return p, r.ok
}

func aliasIndex(l []int64) string {
	s := make([]string, len(l))
	for i, x := range l {
		s[i] = strconv.FormatInt(x, 10)
	}
	return "{" + strings.Join(s, ", ") + "}"
}

func formatIOAlias(p *HloInputOutputAliasProto) string {
	parts := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		kind := ""
		if e.Kind == Kind_MUST_ALIAS {
			kind = ", must-alias"
		}
		parts[i] = aliasIndex(e.OutputShapeIndex) + ": (" + strconv.FormatInt(e.ParameterNumber, 10) + ", " + aliasIndex(e.ParameterShapeIndex) + kind + ")"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func formatBufferDonor(p *HloBufferDonorProto) string {
	parts := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		parts[i] = "(" + strconv.FormatInt(e.ParameterNumber, 10) + ", " + aliasIndex(e.ParameterShapeIndex) + ")"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// moduleAliasesToProto fills XLA's fields from the header's text.
func moduleAliasesToProto(m *hlo.Module, p *HloModuleProto) {
	if v, ok := m.Attr("input_output_alias"); ok {
		if r, isRaw := v.(hlo.Raw); isRaw {
			if a, parsed := parseIOAlias(string(r)); parsed {
				p.InputOutputAlias = a
			}
		}
	}
	if v, ok := m.Attr("buffer_donor"); ok {
		if r, isRaw := v.(hlo.Raw); isRaw {
			if d, parsed := parseBufferDonor(string(r)); parsed {
				p.BufferDonor = d
			}
		}
	}
}

// moduleAliasesFromProto is the header text of a proto XLA wrote.
func moduleAliasesFromProto(p *HloModuleProto, m *hlo.Module) {
	if a := p.InputOutputAlias; a != nil && len(a.Entries) > 0 {
		m.Attrs = append(m.Attrs, hlo.Attr{Name: "input_output_alias", Value: hlo.Raw(formatIOAlias(a))})
	}
	if d := p.BufferDonor; d != nil && len(d.Entries) > 0 {
		m.Attrs = append(m.Attrs, hlo.Attr{Name: "buffer_donor", Value: hlo.Raw(formatBufferDonor(d))})
	}
}
