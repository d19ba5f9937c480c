package hloproto

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// output_to_operand_aliasing is written `{{0}: (1, {}), {1}: (0, {0})}`:
// output shape index, then operand number and its shape index.
func init() {
	codecs["output_to_operand_aliasing"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			r, ok := v.(hlo.Raw)
			l, parsed := parseAliasing(string(r))
			p.OutputOperandAliasing = l
			return ok && parsed
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			parts := make([]string, len(p.OutputOperandAliasing))
			for i, a := range p.OutputOperandAliasing {
				parts[i] = shapeIndex(a.OutputShapeIndex) + ": (" + strconv.FormatInt(a.OperandIndex, 10) + ", " + shapeIndex(a.OperandShapeIndex) + ")"
			}
			return hlo.Raw("{" + strings.Join(parts, ", ") + "}"), len(parts) > 0
		},
	}
}

func shapeIndex(l []int64) string {
	s := make([]string, len(l))
	for i, x := range l {
		s[i] = strconv.FormatInt(x, 10)
	}
	return "{" + strings.Join(s, ",") + "}"
}

func parseAliasing(s string) ([]*OutputOperandAliasing, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	var out []*OutputOperandAliasing
	for s != "" {
		a := &OutputOperandAliasing{}
		var ok bool
		if a.OutputShapeIndex, s, ok = cutIndex(s); !ok {
			return nil, false
		}
		if s, ok = strings.CutPrefix(s, ": ("); !ok {
			return nil, false
		}
		num, rest, found := strings.Cut(s, ", ")
		n, err := strconv.ParseInt(num, 10, 64)
		if !found || err != nil {
			return nil, false
		}
		a.OperandIndex = n
		if a.OperandShapeIndex, s, ok = cutIndex(rest); !ok {
			return nil, false
		}
		if s, ok = strings.CutPrefix(s, ")"); !ok {
			return nil, false
		}
		out = append(out, a)
		if s != "" {
			if s, ok = strings.CutPrefix(s, ", "); !ok {
				return nil, false
			}
		}
	}
	return out, true
}

// cutIndex reads a shape index `{0,1}` at the start of s.
func cutIndex(s string) ([]int64, string, bool) {
	end := strings.IndexByte(s, '}')
	if !strings.HasPrefix(s, "{") || end < 0 {
		return nil, s, false
	}
	l := []int64{}
	if body := strings.TrimSpace(s[1:end]); body != "" {
		for _, f := range strings.Split(body, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, s, false
			}
			l = append(l, n)
		}
	}
	return l, s[end+1:], true
}
