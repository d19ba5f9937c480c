package cpu

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/axle-ml/axle/backend/cpu/frontend"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// Multi-output fusion (XLA's sibling and producer-consumer multi-output
// fusion): loop fusions of the same dimensions that read the same
// full-size operand (an optimizer step's m', v' and W' all read the
// gradient), or where one reads another that is also needed elsewhere,
// merge into one loop fusion whose fused root is a tuple of the values
// still read outside; their readers read get-tuple-elements of it. The
// merged program (tile_multi.go) reads each shared operand once per tile
// and computes what the members recomputed (cheap producers copied into
// several fusions) once. Members must not reach one another through
// other instructions, which would make the merged fusion its own
// operand. Row programs (fusions holding reductions) are not merged:
// their tiles are whole rows and they have one output.

const (
	// maxOutputs bounds a merged fusion's outputs: each is a stream
	// written per tile, and a few keep the tiles in L1.
	maxOutputs = 4
	// maxMultiSlots bounds the members' fused instructions together, so
	// the merged program's scratch tiles stay few.
	maxMultiSlots = 64
)

// multiOutput switches the pass on; tests turn it off to compare.
var multiOutput = true

// fuseMultiOutput merges groups of c's loop fusions, returning the number
// of merged fusions made.
func fuseMultiOutput(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	if !multiOutput {
		return 0, nil
	}
	made := 0
	tried := map[*hlo.Instruction]bool{}
	cands := candidates{}
	for {
		g, fc, fusion := findMultiGroup(c, names, tried, cands)
		if g == nil {
			return made, nil
		}
		if err := installMulti(m, c, g, fc, fusion, names); err != nil {
			return made, err
		}
		made++
	}
}

// multiGroup is a set of fusions to merge, in c's order.
type multiGroup struct {
	members []*hlo.Instruction
	// outputs are the members read outside the group (or c's root).
	outputs []*hlo.Instruction
}

// findMultiGroup finds the next group worth merging whose merged program
// compiles, and builds its fused computation and fusion instruction (not
// yet in c). Seeds that found none are remembered in tried, which
// fusions are candidates in cands.
func findMultiGroup(c *hlo.Computation, names *hlo.NameSet, tried map[*hlo.Instruction]bool, cands candidates) (*multiGroup, *hlo.Computation, *hlo.Instruction) {
	users := c.Users()
	succs := successors(c, users)
	pos := map[*hlo.Instruction]int{}
	for i, in := range c.Instructions {
		pos[in] = i
	}
	for _, seed := range c.Instructions {
		if tried[seed] || !cands.ok(seed) {
			continue
		}
		tried[seed] = true
		g := growMulti(c, seed, users, succs, pos, cands)
		if len(g.members) < 2 {
			continue
		}
		fc, fusion, err := buildMulti(c, g, names)
		if err != nil {
			continue
		}
		if _, err := tile.CompileMulti(fusion); err != nil {
			continue
		}
		return g, fc, fusion
	}
	return nil, nil, nil
}

// multiCandidate is a loop fusion computing one float array tile by tile
// with no row reductions.
func multiCandidate(in *hlo.Instruction) bool {
	if in.Opcode != hlo.OpFusion || !tile.Type(in.Shape.DType) || in.Shape.Rank() == 0 || arrayBytes(in.Shape) <= 0 ||
		len(in.ControlPredecessors) > 0 {
		return false
	}
	if kind, _ := in.EnumAttr("kind"); kind != "kLoop" {
		return false
	}
	fc := in.Computation("calls")
	if fc == nil || fc.Root == nil || slices.ContainsFunc(fc.Instructions, func(x *hlo.Instruction) bool { return x.Opcode == hlo.OpReduce }) {
		return false
	}
	_, err := tile.CompileLoop(in)
	return err == nil
}

// candidates remembers multiCandidate's answers over one computation's
// merging: it compiles the fusion's program, and every search from a
// seed asked it again of the same neighbours (a GRU unrolled over 100
// steps spent about 8% of its compile recompiling them).
type candidates map[*hlo.Instruction]bool

func (cs candidates) ok(in *hlo.Instruction) bool {
	ok, seen := cs[in]
	if !seen {
		ok = multiCandidate(in)
		cs[in] = ok
	}
	return ok
}

// successors are each instruction's users and control successors: the
// edges a merge must not close into a cycle. Without control edges they
// are the users themselves (copying them for every group found cost a
// BiLSTM's first call about 8%).
func successors(c *hlo.Computation, users map[*hlo.Instruction][]*hlo.Instruction) map[*hlo.Instruction][]*hlo.Instruction {
	if !slices.ContainsFunc(c.Instructions, func(in *hlo.Instruction) bool { return len(in.ControlPredecessors) > 0 }) {
		return users
	}
	s := make(map[*hlo.Instruction][]*hlo.Instruction, len(users))
	for in, us := range users {
		s[in] = slices.Clone(us)
	}
	for _, in := range c.Instructions {
		for _, p := range in.ControlPredecessors {
			s[p] = append(s[p], in)
		}
	}
	return s
}

// growMulti collects seed's group: candidates of its dimensions that
// share a full-size operand with a member, or read a member or are read
// by one directly, as long as the group stays acyclic and within bounds.
func growMulti(c *hlo.Computation, seed *hlo.Instruction, users, succs map[*hlo.Instruction][]*hlo.Instruction, pos map[*hlo.Instruction]int, cands candidates) *multiGroup {
	g := &multiGroup{members: []*hlo.Instruction{seed}}
	slotsUsed := len(seed.Computation("calls").Instructions)
	for k := 0; k < len(g.members); k++ {
		for _, cand := range neighbours(g.members[k], users) {
			if slices.Contains(g.members, cand) || !cand.Shape.SameDims(seed.Shape) || !cands.ok(cand) {
				continue
			}
			n := len(cand.Computation("calls").Instructions)
			if slotsUsed+n > maxMultiSlots {
				continue
			}
			trial := append(slices.Clone(g.members), cand)
			if !directEdgesFuse(trial) || closesCycle(trial, succs, pos) {
				continue
			}
			outs := groupOutputs(c, trial, users)
			if len(outs) > maxOutputs || len(outs) == 0 {
				continue
			}
			g.members, g.outputs, slotsUsed = trial, outs, slotsUsed+n
		}
	}
	slices.SortFunc(g.members, func(a, b *hlo.Instruction) int { return pos[a] - pos[b] })
	slices.SortFunc(g.outputs, func(a, b *hlo.Instruction) int { return pos[a] - pos[b] })
	return g
}

// neighbours are the fusions that read one of member's full-size operands
// (siblings), read member itself (consumers), or that member reads
// (producers).
func neighbours(member *hlo.Instruction, users map[*hlo.Instruction][]*hlo.Instruction) []*hlo.Instruction {
	var ns []*hlo.Instruction
	for _, o := range member.Operands {
		if o.Shape.SameDims(member.Shape) {
			ns = append(ns, users[o]...)
		}
		ns = append(ns, o)
	}
	return append(ns, users[member]...)
}

// directEdgesFuse checks that every member reading another member reads
// it at its own positions (not through an index map), so the merged
// program can compute the producer's tile and hand it on.
func directEdgesFuse(members []*hlo.Instruction) bool {
	for _, consumer := range members {
		fc := consumer.Computation("calls")
		fusedUsers := fc.Users()
		for k, o := range consumer.Operands {
			if !slices.Contains(members, o) {
				continue
			}
			p := fc.Param(k)
			if p == nil || slices.ContainsFunc(fusedUsers[p], tile.IndexOp) {
				return false
			}
		}
	}
	return true
}

// closesCycle reports whether a member reaches another member through an
// instruction outside the group: merged, the group would then depend on
// itself. Such a path runs between the members' positions, so the search
// stops past the last member.
func closesCycle(members []*hlo.Instruction, succs map[*hlo.Instruction][]*hlo.Instruction, pos map[*hlo.Instruction]int) bool {
	end := 0
	for _, m := range members {
		end = max(end, pos[m])
	}
	seen := map[*hlo.Instruction]bool{}
	var stack []*hlo.Instruction
	for _, m := range members {
		for _, s := range succs[m] {
			if !slices.Contains(members, s) && !seen[s] && pos[s] < end {
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	for len(stack) > 0 {
		in := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range succs[in] {
			switch {
			case slices.Contains(members, s):
				return true
			case !seen[s] && pos[s] < end:
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	return false
}

// groupOutputs are the members whose value is read outside the group or
// is c's result.
func groupOutputs(c *hlo.Computation, members []*hlo.Instruction, users map[*hlo.Instruction][]*hlo.Instruction) []*hlo.Instruction {
	var outs []*hlo.Instruction
	for _, m := range members {
		outside := m == c.Root || slices.ContainsFunc(users[m], func(u *hlo.Instruction) bool { return !slices.Contains(members, u) })
		if outside {
			outs = append(outs, m)
		}
	}
	return outs
}

// buildMulti builds the group's fused computation (the members' fused
// instructions in order, a member's reads of another member replaced by
// that member's root, equal instructions kept once) and the fusion
// instruction calling it, neither yet in the module.
func buildMulti(c *hlo.Computation, g *multiGroup, names *hlo.NameSet) (*hlo.Computation, *hlo.Instruction, error) {
	b := &multiBuilder{fc: &hlo.Computation{Name: names.Unique("fused_computation")}, names: names,
		params: map[*hlo.Instruction]*hlo.Instruction{}, roots: map[*hlo.Instruction]*hlo.Instruction{}, seen: map[string]*hlo.Instruction{},
		canonical: frontend.Registered().Canonical} // fusion runs only under a compiler
	for _, member := range g.members {
		if err := b.add(member); err != nil {
			return nil, nil, err
		}
	}
	elems := make([]*hlo.Instruction, len(g.outputs))
	shapes := make([]hlo.Shape, len(g.outputs))
	for k, o := range g.outputs {
		elems[k], shapes[k] = b.roots[o], o.Shape.Clone()
	}
	tuple := &hlo.Instruction{Name: names.Unique("tuple"), Opcode: hlo.OpTuple, Shape: hlo.TupleShape(shapes...), Operands: elems}
	b.fc.Root = b.fc.AddInstruction(tuple)
	fusion := &hlo.Instruction{Name: names.Unique("fusion"), Opcode: hlo.OpFusion, Shape: hlo.TupleShape(hlo.CloneShapes(shapes)...),
		Operands: b.operands, Attrs: []hlo.Attr{{Name: "kind", Value: hlo.Enum("kLoop")}, {Name: "calls", Value: b.fc}}, Parent: c}
	return b.fc, fusion, nil
}

// multiBuilder accumulates a merged fused computation.
type multiBuilder struct {
	fc       *hlo.Computation
	names    *hlo.NameSet
	operands []*hlo.Instruction                    // the fusion's, one per parameter
	params   map[*hlo.Instruction]*hlo.Instruction // outer operand → parameter
	roots    map[*hlo.Instruction]*hlo.Instruction // member → its root's copy
	seen     map[string]*hlo.Instruction           // fusedKey → the instruction computing it
	// canonical is the compiler's canonical text of an instruction.
	canonical func(*hlo.Instruction) string
}

// add copies member's fused instructions into the merged computation.
func (b *multiBuilder) add(member *hlo.Instruction) error {
	fused := member.Computation("calls")
	mapped := map[*hlo.Instruction]*hlo.Instruction{}
	for _, x := range fused.Instructions {
		if x.Opcode == hlo.OpParameter {
			mapped[x] = b.input(member.Operands[x.ParamNumber])
			continue
		}
		cp := *x
		cp.Operands = make([]*hlo.Instruction, len(x.Operands))
		for k, o := range x.Operands {
			cp.Operands[k] = mapped[o]
		}
		key := fusedKey(&cp, b.canonical)
		if prev, ok := b.seen[key]; ok && key != "" {
			mapped[x] = prev
			continue
		}
		cp.Name = b.names.Unique(x.Name)
		cp.Attrs = slices.Clone(x.Attrs)
		cp.Shape = x.Shape.Clone()
		mapped[x] = b.fc.AddInstruction(&cp)
		if key != "" {
			b.seen[key] = mapped[x]
		}
	}
	if mapped[fused.Root] == nil {
		return fmt.Errorf("fusion %s: root not mapped", member.Name)
	}
	b.roots[member] = mapped[fused.Root]
	return nil
}

// input is what the merged computation reads for the outer operand: an
// earlier member's root, or a parameter (one per operand).
func (b *multiBuilder) input(outer *hlo.Instruction) *hlo.Instruction {
	if r, ok := b.roots[outer]; ok {
		return r
	}
	if p, ok := b.params[outer]; ok {
		return p
	}
	p := &hlo.Instruction{Name: b.names.Unique("param_" + outer.Name), Opcode: hlo.OpParameter,
		Shape: outer.Shape.Clone(), ParamNumber: int64(len(b.operands))}
	b.fc.AddInstruction(p)
	b.fc.Params = append(b.fc.Params, p)
	b.operands = append(b.operands, outer)
	b.params[outer] = p
	return p
}

// fusedKey identifies a fused instruction by what it computes (XLA's
// canonical text and its operands' identities), or is "" for one never
// shared: parameters and non-scalar constants.
func fusedKey(x *hlo.Instruction, canonical func(*hlo.Instruction) string) string {
	var b strings.Builder
	switch {
	case x.Opcode == hlo.OpParameter:
		return ""
	case x.Opcode == hlo.OpConstant:
		if x.Literal == nil || x.Shape.Rank() != 0 || x.Literal.IsElided() {
			return ""
		}
		// The canonical text leaves constants' values out.
		fmt.Fprintf(&b, "%x ", math.Float64bits(x.Literal.GetFloat64(0)))
	}
	b.WriteString(canonical(x))
	for _, o := range x.Operands {
		fmt.Fprintf(&b, " %p", o)
	}
	return b.String()
}

// installMulti puts the merged fusion in c, after the group's last
// member, and replaces each output member by a get-tuple-element of it.
func installMulti(m *hlo.Module, c *hlo.Computation, g *multiGroup, fc *hlo.Computation, fusion *hlo.Instruction, names *hlo.NameSet) error {
	m.Computations = slices.Insert(m.Computations, slices.Index(m.Computations, c), fc)
	fc.Parent = m
	last := slices.Index(c.Instructions, g.members[len(g.members)-1])
	c.Instructions = slices.Insert(c.Instructions, last+1, fusion)
	fusion.Parent = c
	for k, o := range g.outputs {
		gte := &hlo.Instruction{Name: names.Unique("get-tuple-element"), Opcode: hlo.OpGetTupleElement, Shape: o.Shape.Clone(),
			Operands: []*hlo.Instruction{fusion}, Attrs: []hlo.Attr{{Name: "index", Value: int64(k)}}}
		c.AddInstruction(gte)
		c.ReplaceAllUses(o, gte)
	}
	dead := map[*hlo.Instruction]bool{}
	for _, mb := range g.members {
		dead[mb] = true
	}
	c.RemoveInstructions(dead)
	return c.SortTopologically()
}
