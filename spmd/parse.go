package spmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Of returns the sharding annotated on in, and whether there is one.
// Package hlo keeps the attribute as verbatim text (hlo.Raw); this parses it.
func Of(in *hlo.Instruction) (Sharding, bool, error) {
	v, ok := in.Attr("sharding")
	if !ok {
		return Sharding{}, false, nil
	}
	var text string
	switch t := v.(type) {
	case hlo.Raw:
		text = string(t)
	case string:
		text = t
	default:
		return Sharding{}, false, fmt.Errorf("instruction %s: sharding attribute of type %T", in.Name, v)
	}
	s, err := Parse(text)
	if err != nil {
		return Sharding{}, false, fmt.Errorf("instruction %s: %w", in.Name, err)
	}
	return s, true, nil
}

// Parse reads a sharding as XLA prints it: {replicated}, {manual},
// {maximal device=k}, {devices=[a,b]0,1,2,3}, {devices=[a,b]<=[4]},
// {devices=[a,b]<=[2,2]T(1,0)}, with last_tile_dim_replicate or
// last_tile_dims={replicated}, and tuples {{...}, {...}}. Metadata inside
// the braces is skipped.
func Parse(text string) (Sharding, error) {
	p := &shardingParser{text: text}
	s, err := p.sharding()
	if err == nil {
		p.space()
		if p.pos != len(p.text) {
			err = p.errorf("unexpected text after the sharding")
		}
	}
	if err != nil {
		return Sharding{}, fmt.Errorf("sharding %q: %w", text, err)
	}
	return s, nil
}

type shardingParser struct {
	text string
	pos  int
}

func (p *shardingParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *shardingParser) space() {
	for p.pos < len(p.text) && strings.IndexByte(" \t\n\r", p.text[p.pos]) >= 0 {
		p.pos++
	}
}

// accept consumes tok (after spaces) if it comes next.
func (p *shardingParser) accept(tok string) bool {
	p.space()
	if strings.HasPrefix(p.text[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *shardingParser) expect(tok string) error {
	if !p.accept(tok) {
		return p.errorf("expects %q", tok)
	}
	return nil
}

func (p *shardingParser) word() string {
	p.space()
	start := p.pos
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			break
		}
		p.pos++
	}
	return p.text[start:p.pos]
}

func (p *shardingParser) int() (int64, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.text) && (p.text[p.pos] == '-' || p.text[p.pos] >= '0' && p.text[p.pos] <= '9') {
		p.pos++
	}
	v, err := strconv.ParseInt(p.text[start:p.pos], 10, 64)
	if err != nil {
		return 0, p.errorf("expects an integer")
	}
	return v, nil
}

// ints reads a comma-separated list of integers (no brackets).
func (p *shardingParser) ints() ([]int64, error) {
	var out []int64
	for {
		v, err := p.int()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if !p.accept(",") {
			return out, nil
		}
	}
}

// bracketInts reads [a,b,...].
func (p *shardingParser) bracketInts() ([]int64, error) {
	if err := p.expect("["); err != nil {
		return nil, err
	}
	v, err := p.ints()
	if err != nil {
		return nil, err
	}
	return v, p.expect("]")
}

func (p *shardingParser) sharding() (Sharding, error) {
	if err := p.expect("{"); err != nil {
		return Sharding{}, err
	}
	p.space()
	if p.accept("}") {
		return Sharding{Kind: TupleKind}, nil // the empty tuple
	}
	if p.pos < len(p.text) && p.text[p.pos] == '{' {
		return p.tuple()
	}
	s, err := p.single()
	if err != nil {
		return Sharding{}, err
	}
	return s, p.expect("}")
}

func (p *shardingParser) tuple() (Sharding, error) {
	out := Sharding{Kind: TupleKind}
	for {
		e, err := p.sharding()
		if err != nil {
			return Sharding{}, err
		}
		out.Elements = append(out.Elements, e)
		if !p.accept(",") {
			return out, p.expect("}")
		}
	}
}

// single reads the body of a non-tuple sharding up to its closing brace.
func (p *shardingParser) single() (Sharding, error) {
	var s Sharding
	switch w := p.word(); w {
	case "replicated":
		s = Replicate()
	case "manual":
		s = Sharding{Kind: Manual}
	case "maximal":
		if err := p.expect("device="); err != nil {
			return Sharding{}, err
		}
		d, err := p.int()
		if err != nil {
			return Sharding{}, err
		}
		s = Sharding{Kind: Maximal, Device: d}
	case "devices":
		if err := p.expect("="); err != nil {
			return Sharding{}, err
		}
		return p.tiled()
	default:
		return Sharding{}, p.errorf("unsupported sharding kind %q", w)
	}
	return s, p.trailer()
}

// trailer skips what may follow a sharding's body: metadata={...} and
// other attributes Axle ignores.
func (p *shardingParser) trailer() error {
	for {
		p.space()
		if p.pos >= len(p.text) || p.text[p.pos] == '}' {
			return nil
		}
		name := p.word()
		if name == "" || !p.accept("=") {
			return p.errorf("unexpected text in sharding")
		}
		if name == "last_tile_dims" {
			return p.errorf("last_tile_dims is only valid on tiled shardings")
		}
		if err := p.skipValue(); err != nil {
			return err
		}
	}
}

// skipValue skips a {...} group with nested braces and quoted strings, or
// a bare word.
func (p *shardingParser) skipValue() error {
	p.space()
	if !p.accept("{") {
		p.word()
		return nil
	}
	depth := 1
	for p.pos < len(p.text) && depth > 0 {
		switch p.text[p.pos] {
		case '{':
			depth++
		case '}':
			depth--
		case '"':
			end := strings.IndexByte(p.text[p.pos+1:], '"')
			if end < 0 {
				return p.errorf("unterminated string")
			}
			p.pos += end + 1
		}
		p.pos++
	}
	if depth > 0 {
		return p.errorf("unbalanced braces")
	}
	return nil
}

// tiled reads `[dims]` then the devices (a list or <=[...]T(...)) and
// the replication suffixes.
func (p *shardingParser) tiled() (Sharding, error) {
	dims, err := p.bracketInts()
	if err != nil {
		return Sharding{}, err
	}
	var devices []int64
	if p.accept("<=") {
		devices, err = p.iota(prod(dims))
	} else {
		devices, err = p.ints()
	}
	if err != nil {
		return Sharding{}, err
	}
	if int64(len(devices)) != prod(dims) {
		return Sharding{}, p.errorf("%d devices for a tile assignment of %d", len(devices), prod(dims))
	}
	subgroups, err := p.tiledSuffix()
	if err != nil {
		return Sharding{}, err
	}
	if subgroups > len(dims) {
		return Sharding{}, p.errorf("more replicated dimensions than tile dimensions")
	}
	data := len(dims) - subgroups
	// Trailing replicated dimensions are contiguous in the row-major
	// assignment, so they merge into one of their product.
	return Sharding{Kind: Tiled, Tiles: slices.Clone(dims[:data]), Replicas: prod(dims[data:]), Devices: devices}, nil
}

// tiledSuffix reads last_tile_dim_replicate or last_tile_dims={...} and
// metadata, and returns how many trailing tile dimensions replicate.
func (p *shardingParser) tiledSuffix() (int, error) {
	subgroups := 0
	for {
		p.space()
		if p.pos >= len(p.text) || p.text[p.pos] == '}' {
			return subgroups, nil
		}
		switch name := p.word(); name {
		case "last_tile_dim_replicate":
			subgroups = 1
		case "last_tile_dims":
			if err := p.expect("={"); err != nil {
				return 0, err
			}
			for {
				if t := p.word(); t != "replicated" {
					return 0, p.errorf("last_tile_dims type %q is not supported (only replicated)", t)
				}
				subgroups++
				if !p.accept(",") {
					break
				}
			}
			if err := p.expect("}"); err != nil {
				return 0, err
			}
		default:
			if name == "" || !p.accept("=") {
				return 0, p.errorf("unexpected text in sharding")
			}
			if err := p.skipValue(); err != nil {
				return 0, err
			}
		}
	}
}

// iota reads the compact assignment [r_0,...]T(perm): the devices
// 0..n-1 laid out in shape r, transposed by perm, read row-major.
func (p *shardingParser) iota(n int64) ([]int64, error) {
	reshape, err := p.bracketInts()
	if err != nil {
		return nil, err
	}
	if prod(reshape) != n {
		return nil, p.errorf("iota of %d devices for a tile assignment of %d", prod(reshape), n)
	}
	perm := make([]int64, len(reshape))
	for i := range perm {
		perm[i] = int64(i)
	}
	if p.accept("T(") {
		if perm, err = p.ints(); err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		if !isPermutation(perm, len(reshape)) {
			return nil, p.errorf("T%v is not a permutation of %d dimensions", perm, len(reshape))
		}
	}
	// Output position q has index j in the transposed shape; its value is
	// the row-major position of the source index i with i[perm[k]] = j[k].
	tdims := make([]int64, len(perm))
	for k, a := range perm {
		tdims[k] = reshape[a]
	}
	out := make([]int64, n)
	src := make([]int64, len(reshape))
	for q := range n {
		j := unflatten(q, tdims)
		for k, a := range perm {
			src[a] = j[k]
		}
		out[q] = flatten(src, reshape)
	}
	return out, nil
}

func isPermutation(perm []int64, n int) bool {
	if len(perm) != n {
		return false
	}
	seen := make([]bool, n)
	for _, a := range perm {
		if a < 0 || a >= int64(n) || seen[a] {
			return false
		}
		seen[a] = true
	}
	return true
}
