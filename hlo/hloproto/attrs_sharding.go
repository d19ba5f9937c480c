package hloproto

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// sharding maps the common forms of HloSharding's text to OpSharding:
// {replicated}, {manual}, {maximal device=N}, tiled
// {devices=[2,2]0,1,2,3} or {devices=[2,2]<=[4]} (optionally
// last_tile_dim_replicate) and tuples of these. Other forms (metadata,
// shard groups, last_tile_dims) stay Axle's text.
func init() {
	codecs["sharding"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			r, ok := v.(hlo.Raw)
			s, parsed := parseSharding(string(r))
			p.Sharding = s
			return ok && parsed
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			if p.Sharding == nil {
				return hlo.Raw("{}"), false
			}
			text, ok := formatSharding(p.Sharding, true)
			return hlo.Raw(text), ok
		},
	}
}

func parseSharding(s string) (*OpSharding, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if strings.HasPrefix(body, "{") {
		t := &OpSharding{Type: OpSharding_TUPLE}
		for body != "" {
			end := bracedEnd(body)
			if end < 0 {
				return nil, false
			}
			e, ok := parseSharding(body[:end])
			if !ok || e.Type == OpSharding_TUPLE {
				return nil, false
			}
			t.TupleShardings = append(t.TupleShardings, e)
			body = strings.TrimPrefix(body[end:], ", ")
		}
		return t, true
	}
	switch {
	case body == "replicated":
		return &OpSharding{Type: OpSharding_REPLICATED}, true
	case body == "manual":
		return &OpSharding{Type: OpSharding_MANUAL}, true
	case strings.HasPrefix(body, "maximal device="):
		n, err := strconv.ParseInt(strings.TrimPrefix(body, "maximal device="), 10, 64)
		return &OpSharding{Type: OpSharding_MAXIMAL, TileAssignmentDimensions: []int64{1}, TileAssignmentDevices: []int64{n}}, err == nil
	case strings.HasPrefix(body, "devices="):
		return parseTiled(strings.TrimPrefix(body, "devices="))
	}
	return nil, false
}

// parseTiled reads `[2,2]0,1,2,3` or `[2,2]<=[4]` or `[2,2]<=[2,2]T(1,0)`,
// then an optional ` last_tile_dim_replicate`.
func parseTiled(s string) (*OpSharding, bool) {
	p := &OpSharding{Type: OpSharding_OTHER}
	s, p.ReplicateOnLastTileDim = strings.CutSuffix(s, " last_tile_dim_replicate")
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return nil, false
	}
	dims, ok := bracketInts(s[:end+1])
	if !ok {
		return nil, false
	}
	p.TileAssignmentDimensions = dims
	rest := s[end+1:]
	if iota, ok := strings.CutPrefix(rest, "<="); ok {
		l, ok := parseIotaGroups("[0,0]<=" + iota)
		if !ok {
			return nil, false
		}
		p.IotaReshapeDims, p.IotaTransposePerm = l.IotaReshapeDims, l.IotaTransposePerm
		return p, true
	}
	for _, f := range strings.Split(rest, ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, false
		}
		p.TileAssignmentDevices = append(p.TileAssignmentDevices, n)
	}
	return p, true
}

// formatSharding prints what parseSharding reads; false for an OpSharding
// using anything else.
func formatSharding(p *OpSharding, top bool) (string, bool) {
	if len(p.Metadata) > 0 || len(p.LastTileDims) > 0 || p.IsShardGroup {
		return "", false
	}
	switch p.Type {
	case OpSharding_REPLICATED:
		return "{replicated}", true
	case OpSharding_MANUAL:
		return "{manual}", true
	case OpSharding_MAXIMAL:
		if len(p.TileAssignmentDevices) != 1 {
			return "", false
		}
		return "{maximal device=" + strconv.FormatInt(p.TileAssignmentDevices[0], 10) + "}", true
	case OpSharding_TUPLE:
		if !top {
			return "", false
		}
		parts := make([]string, len(p.TupleShardings))
		for i, e := range p.TupleShardings {
			var ok bool
			if parts[i], ok = formatSharding(e, false); !ok {
				return "", false
			}
		}
		return "{" + strings.Join(parts, ", ") + "}", true
	case OpSharding_OTHER:
		out := "{devices=" + "[" + joinInts(p.TileAssignmentDimensions) + "]"
		if len(p.IotaReshapeDims) > 0 {
			out += strings.TrimPrefix(formatIotaGroups(&IotaReplicaGroupListProto{IotaReshapeDims: p.IotaReshapeDims, IotaTransposePerm: p.IotaTransposePerm}), "[0,0]")
		} else {
			out += joinInts(p.TileAssignmentDevices)
		}
		if p.ReplicateOnLastTileDim {
			out += " last_tile_dim_replicate"
		}
		return out + "}", true
	}
	return "", false
}

func joinInts(l []int64) string {
	s := make([]string, len(l))
	for i, x := range l {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}
