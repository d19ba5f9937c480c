package hloproto

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// kv is one key=value of a braced attribute such as metadata.
type kv struct {
	key, value string
	quoted     bool
}

// parseKV reads `{k="v"<sep>k2=3<sep>k3={...}}`: values quoted (C escapes,
// as XLA's CEscape writes them), braced (a JSON-like dictionary, kept as
// written) or bare words.
func parseKV(s string, sep byte) ([]kv, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	s = s[1 : len(s)-1]
	var out []kv
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, false
		}
		e := kv{key: s[:eq]}
		s = s[eq+1:]
		var end int
		switch {
		case strings.HasPrefix(s, `"`):
			end = quotedEnd(s)
			if end < 0 {
				return nil, false
			}
			v, ok := cUnescape(s[1 : end-1])
			if !ok {
				return nil, false
			}
			e.value, e.quoted = v, true
		case strings.HasPrefix(s, "{"):
			end = bracedEnd(s)
			if end < 0 {
				return nil, false
			}
			e.value = s[:end]
		default:
			end = strings.IndexByte(s, sep)
			if end < 0 {
				end = len(s)
			}
			e.value = s[:end]
		}
		s = s[end:]
		out = append(out, e)
		if s != "" {
			if s[0] != sep {
				return nil, false
			}
			s = s[1:]
		}
	}
	return out, true
}

// quotedEnd is the offset just past the closing quote of the string s
// starts with, or -1.
func quotedEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// bracedEnd is the offset just past the brace that closes the one s starts
// with (braces inside strings do not count), or -1.
func bracedEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			n := quotedEnd(s[i:])
			if n < 0 {
				return -1
			}
			i += n - 1
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// cEscape is absl::CEscape: the C escapes, other unprintable bytes in octal.
func cEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '"', '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c >= 0x7f {
				b.WriteString("\\" + strconv.FormatInt(int64(c)>>6, 8) + strconv.FormatInt(int64(c>>3)&7, 8) + strconv.FormatInt(int64(c)&7, 8))
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// cUnescape undoes cEscape; false for an escape it does not know.
func cUnescape(s string) (string, bool) {
	if !strings.ContainsRune(s, '\\') {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '"', '\'', '\\', '?':
			b.WriteByte(c)
		default:
			if i+2 >= len(s) || c < '0' || c > '3' {
				return "", false
			}
			n, err := strconv.ParseUint(s[i:i+3], 8, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(n))
			i += 2
		}
	}
	return b.String(), true
}

func encFrontendAttrs(p *P, _ hlo.Opcode, v any) bool {
	r, ok := v.(hlo.Raw)
	kvs, parsed := parseKV(string(r), ',')
	if !ok || !parsed {
		return false
	}
	p.FrontendAttributes = &FrontendAttributes{Map: map[string]string{}}
	for _, e := range kvs {
		p.FrontendAttributes.Map[e.key] = e.value
	}
	return true
}

// decFrontendAttrs prints the map as XLA does: keys sorted, values quoted.
func decFrontendAttrs(p *P, _ hlo.Opcode) (any, bool) {
	m := p.GetFrontendAttributes().GetMap()
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(',')
		}
		if v := m[k]; strings.HasPrefix(v, "{") && bracedEnd(v) == len(v) {
			b.WriteString(k + "=" + v) // XLA writes a dictionary as it is
		} else {
			b.WriteString(k + `="` + cEscape(v) + `"`)
		}
	}
	b.WriteByte('}')
	return hlo.Raw(b.String()), p.FrontendAttributes != nil
}

// metadataFields are OpMetadata's fields in the order XLA prints them.
var metadataFields = []struct {
	name   string
	str    func(*OpMetadata) *string
	number func(*OpMetadata) *int32
}{
	{name: "op_type", str: func(m *OpMetadata) *string { return &m.OpType }},
	{name: "op_name", str: func(m *OpMetadata) *string { return &m.OpName }},
	{name: "source_file", str: func(m *OpMetadata) *string { return &m.SourceFile }},
	{name: "source_line", number: func(m *OpMetadata) *int32 { return &m.SourceLine }},
	{name: "source_end_line", number: func(m *OpMetadata) *int32 { return &m.SourceEndLine }},
	{name: "source_column", number: func(m *OpMetadata) *int32 { return &m.SourceColumn }},
	{name: "source_end_column", number: func(m *OpMetadata) *int32 { return &m.SourceEndColumn }},
	{name: "profile_type"}, // a list, handled on its own
	{name: "deduplicated_name", str: func(m *OpMetadata) *string { return &m.DeduplicatedName }},
	{name: "stack_frame_id", number: func(m *OpMetadata) *int32 { return &m.StackFrameId }},
	{name: "scheduling_name", str: func(m *OpMetadata) *string { return &m.SchedulingName }},
}

func encMetadata(p *P, _ hlo.Opcode, v any) bool {
	r, ok := v.(hlo.Raw)
	kvs, parsed := parseKV(string(r), ' ')
	if !ok || !parsed {
		return false
	}
	m := &OpMetadata{}
	p.Metadata = m
outer:
	for _, e := range kvs {
		if e.key == "profile_type" {
			types, ok := profileTypes(e.value)
			if !ok || e.quoted {
				return false
			}
			m.ProfileInfo = &OpMetadata_ProfileInfo{ProfileType: types}
			continue
		}
		for _, f := range metadataFields {
			if f.name != e.key {
				continue
			}
			if f.str != nil && e.quoted {
				*f.str(m) = e.value
				continue outer
			}
			n, err := strconv.ParseInt(e.value, 10, 32)
			if f.number != nil && !e.quoted && err == nil {
				*f.number(m) = int32(n)
				continue outer
			}
		}
		return false
	}
	return true
}

// decMetadata prints the fields that are set, as XLA does.
func decMetadata(p *P, _ hlo.Opcode) (any, bool) {
	m := p.Metadata
	if m == nil {
		return hlo.Raw("{}"), false
	}
	var parts []string
	for _, f := range metadataFields {
		switch {
		case f.name == "profile_type" && len(m.GetProfileInfo().GetProfileType()) > 0:
			parts = append(parts, f.name+"="+formatProfileTypes(m.ProfileInfo.ProfileType))
		case f.str != nil && *f.str(m) != "":
			parts = append(parts, f.name+`="`+cEscape(*f.str(m))+`"`)
		case f.number != nil && *f.number(m) != 0:
			parts = append(parts, f.name+"="+strconv.FormatInt(int64(*f.number(m)), 10))
		}
	}
	return hlo.Raw("{" + strings.Join(parts, " ") + "}"), len(parts) > 0
}

// profileTypes reads OpMetadata's profile_type list, `{1,2}`.
func profileTypes(s string) ([]ProfileType, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	var out []ProfileType
	for _, f := range strings.Split(s[1:len(s)-1], ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil {
			return nil, false
		}
		out = append(out, ProfileType(n))
	}
	return out, true
}

func formatProfileTypes(l []ProfileType) string {
	s := make([]string, len(l))
	for i, t := range l {
		s[i] = strconv.FormatInt(int64(t), 10)
	}
	return "{" + strings.Join(s, ",") + "}"
}
