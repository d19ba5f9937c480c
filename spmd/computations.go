package spmd

import (
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Called computations (while bodies and conditions, call targets,
// conditional branches) are partitioned like the entry, into copies: a
// copy per placement of the parameters (and of the root, when the caller
// asks for one), so that a computation called by several instructions
// with different shardings gets one copy each (XLA clones them the same
// way). The source computations stay until every caller is partitioned;
// then those no longer called are dropped and the rest (still called
// whole, by a fallback) take fresh instruction names.

// copied is a partitioned copy and its root's placement.
type copied struct {
	comp *hlo.Computation
	root Sharding
}

// callKey names a copy of src for parameters params and root placement
// root (nil: whatever its rules give).
func callKey(src *hlo.Computation, params []Sharding, root *Sharding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%p", src)
	for _, s := range params {
		b.WriteString(" " + s.String())
	}
	if root != nil {
		b.WriteString(" -> " + root.String())
	}
	return b.String()
}

// called returns the copy of src partitioned for parameters placed by
// params, its root resharded to root when given, and the root's
// placement; made once per key.
func (s *session) called(src *hlo.Computation, params []Sharding, root *Sharding) (*hlo.Computation, Sharding, error) {
	if src == nil || src.Root == nil {
		return nil, Sharding{}, fmt.Errorf("a called computation is missing")
	}
	if len(params) != len(src.Params) {
		return nil, Sharding{}, fmt.Errorf("computation %s takes %d parameters, %d placed", src.Name, len(src.Params), len(params))
	}
	key := callKey(src, params, root)
	if c, ok := s.copies[key]; ok {
		return c.comp, c.root, nil
	}
	p, err := s.build(src, params)
	if err != nil {
		return nil, Sharding{}, err
	}
	if s.probing > 0 {
		have, err := p.finish(root)
		return p.comp, have, err
	}
	return p.register(key, root)
}

// probe partitions src for params on trial and returns its root's
// placement, leaving no trace: no copy, channel id or fallback.
func (s *session) probe(src *hlo.Computation, params []Sharding) (Sharding, error) {
	key := callKey(src, params, nil)
	if c, ok := s.copies[key]; ok {
		return c.root, nil
	}
	if r, ok := s.probed[key]; ok {
		return r, nil // loops nested in loops would probe again at every level
	}
	channel, fallbacks := s.nextChannel, len(s.fallbacks)
	s.probing++
	defer func() {
		s.probing--
		s.nextChannel, s.fallbacks = channel, s.fallbacks[:fallbacks]
	}()
	_, have, err := s.called(src, params, nil)
	if err == nil {
		s.probed[key] = have
	}
	return have, err
}

// build partitions every instruction of src; finish (or register) ends
// the copy.
func (s *session) build(src *hlo.Computation, params []Sharding) (*partitioner, error) {
	p := s.partitioner(src, params)
	return p, p.visitAll()
}

// register finishes a built copy with its root placed by root (nil: as
// its rules left it) and adds it to the module under key.
func (p *partitioner) register(key string, root *Sharding) (*hlo.Computation, Sharding, error) {
	have, err := p.finish(root)
	if err != nil {
		return nil, Sharding{}, err
	}
	p.mod.Computations = append(p.mod.Computations, p.comp)
	p.copies[key] = copied{p.comp, have}
	if root == nil {
		// The same copy serves callers asking for the placement it has.
		p.copies[callKey(p.src, p.params, &have)] = copied{p.comp, have}
	}
	return p.comp, have, nil
}

// qualified names an instruction for Stats: its own name in the entry,
// computation/name elsewhere.
func (p *partitioner) qualified(in *hlo.Instruction) string {
	if p.src.IsEntry {
		return in.Name
	}
	return p.comp.Name + "/" + in.Name
}

// tidy drops the source computations no caller uses any more (and
// copies and adders made for trials only), renames
// the instructions of those still called whole (their copies took their
// names), and orders the computations callees first.
func (s *session) tidy() {
	isSource := map[*hlo.Computation]bool{}
	for _, c := range s.sources {
		isSource[c] = true
	}
	roots := []*hlo.Computation{s.mod.Entry}
	for _, c := range s.original {
		if !isSource[c] {
			roots = append(roots, c)
		}
	}
	order := hlo.CalleesFirst(roots...)
	reached := map[*hlo.Computation]bool{}
	for _, c := range order {
		reached[c] = true
	}
	for _, c := range s.sources {
		if reached[c] {
			for _, in := range c.Instructions {
				in.Name = s.names.Unique(in.Name)
			}
		}
	}
	s.mod.Computations = order
}
