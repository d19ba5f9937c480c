package cpu

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// Loop fusion: maximal chains of f32 elementwise instructions (with the
// scalar constants and broadcasts they read, and the transposes, slices,
// reverses and reshapes of their inputs) become one fusion
// instruction of kind kLoop whose fused computation holds the chain, so it
// prints, dumps and verifies like XLA's fusions. A producer joins its
// consumer's fusion only when every user of the producer is in that
// fusion, so nothing is computed twice except scalar broadcasts, which
// are free in a tile program, and cheap producers within a budget that
// no other reader stores anyway (fusion_copy.go). A row
// reduction that the fusion reads back along its rows (softmax's max and
// sum) is computed in the fusion too, as a row program (tile_row.go).

// fusible is an elementwise instruction a tile program can compute: its
// operands have its dimensions or are scalars (clamp's bounds). Inside a
// program predicates are f32 0 or 1: a compare (IEEE, not total order)
// may feed selects in the fusion, and a select may read a predicate
// operand, but a fusion's result is always a float (see fusionRoot) or
// stored as integers (intRoot). A convert from an integer type reads its
// operand converted (dequantizing an s32 accumulator in one pass).
func fusible(in *hlo.Instruction) bool {
	if !tile.Computes(in.Opcode) || len(in.ControlPredecessors) > 0 || in.Shape.IsDynamic() {
		return false
	}
	logical := tile.Mask(in.Opcode)
	for i, o := range in.Operands {
		want := tile.Type(o.Shape.DType)
		switch {
		case in.Opcode == hlo.OpSelect && i == 0 || logical:
			want = o.Shape.DType == hlo.Pred
		case in.Opcode == hlo.OpConvert && tile.IntType(o.Shape.DType):
			want = true // read converted, at the program's edge
		}
		if !want || !(o.Shape.SameDims(in.Shape) || o.Shape.Rank() == 0) {
			return false
		}
	}
	if in.Opcode == hlo.OpIsFinite {
		return in.Shape.DType == hlo.Pred
	}
	if in.Opcode == hlo.OpCompare {
		typ, _ := in.EnumAttr("type")
		return in.Shape.DType == hlo.Pred && typ != "TOTALORDER"
	}
	if logical {
		return in.Shape.DType == hlo.Pred
	}
	return tile.Type(in.Shape.DType)
}

// fusionRoot: a fusion computes floats; predicates live only inside.
func fusionRoot(in *hlo.Instruction) bool {
	return fusible(in) && tile.Type(in.Shape.DType)
}

// intRoot: a fusion may store its float result converted to an integer
// type (quantizing: a tile program's edge, tile.IntResult), the convert
// its root.
func intRoot(in *hlo.Instruction) bool {
	return tile.IntResult(in) && len(in.ControlPredecessors) == 0 && !in.Shape.IsDynamic() && in.Shape.SameDims(in.Operands[0].Shape)
}

// scalarSplat is a scalar constant, or a broadcast of anything: both are
// copied into every fusion that reads them, since in a tile program they
// cost an index map, not a pass over memory. (A broadcast's operand stays
// outside the fusion, as one of its parameters.)
func scalarSplat(in *hlo.Instruction) bool {
	switch {
	case !tile.Type(in.Shape.DType):
		return false
	case in.Opcode == hlo.OpConstant:
		return in.Shape.Rank() == 0 && in.Literal != nil && !in.Literal.IsElided()
	case in.Opcode == hlo.OpBroadcast:
		return tile.Type(in.Operands[0].Shape.DType) && !in.Shape.IsDynamic()
	}
	return false
}

// viewOp is an index op over an array (a broadcast of a scalar is a splat).
func viewOp(in *hlo.Instruction) bool {
	return tile.IndexOp(in) && in.Operands[0].Shape.Rank() > 0
}

// group is one fusion to build: members[0] is its root; copied members
// are computed in the fusion and also stay where they are for their other
// readers.
type group struct {
	members []*hlo.Instruction
	copied  map[*hlo.Instruction]bool
	kind    string
	// elem is the shape of the values the fusion computes element by
	// element (its root's, or a reduction root's operand's), and rowDims
	// the trailing dimensions its row reductions fold (0: none yet).
	elem    hlo.Shape
	rowDims int
}

// cheap reports whether o may be recomputed in a second fusion: a cheap
// op, or a division by a splat (attention's scores over √d, which two
// fusions read: the row maximum's and the softmax's). A division costs
// about what an add does against the pass over memory a stored
// intermediate costs, and a stored one also needed its divisor spread
// into an array first.
func cheap(o *hlo.Instruction) bool {
	if o.Opcode == hlo.OpDivide {
		return scalarSplat(o.Operands[1]) && (o.Operands[1].Opcode == hlo.OpConstant ||
			o.Operands[1].Operands[0].Shape.Rank() == 0)
	}
	return tile.Cheap(o.Opcode)
}

// maxCopied bounds the instructions one fusion recomputes: a layer
// norm's row program recomputes its two reductions, the ops on their row
// values (mean, variance, ε, square root: six) and its cheap producers (a
// transformer's bias and residual adds: two more, which eight left out:
// the mean then took a reduction fusion and a loop fusion of its own,
// minilm's run 0.94× with twelve, medians of seven alternations).
const maxCopied = 12

// fuseLoops rewrites c, reporting whether it changed it.
func fuseLoops(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (bool, error) {
	users := c.Users()
	fg := &fuseGraph{users: users, stored: storedValues(c, users), taken: map[*hlo.Instruction]bool{}}
	var groups []group
	for i := len(c.Instructions) - 1; i >= 0; i-- {
		root := c.Instructions[i]
		_, isReduce := tile.RowReduce(root)
		if fg.taken[root] || !fusionRoot(root) && !isReduce && !intRoot(root) || len(root.ControlPredecessors) > 0 {
			continue
		}
		g := grow(root, isReduce, fg)
		for _, in := range g.members {
			if !scalarSplat(in) && !g.copied[in] {
				fg.taken[in] = true
			}
		}
		fg.markParameters(g)
		groups = append(groups, g)
	}
	if len(groups) > 0 {
		b := newFusionBatch(m, c, names)
		for _, g := range groups {
			b.add(g)
		}
		if err := b.finish(); err != nil {
			return false, err
		}
	}
	removed := removeUnusedSplats(c)
	return len(groups) > 0 || removed, nil
}

// grow collects root's fusion: producers whose every reader is in the
// fusion, scalar splats and broadcasts (copied), cheap producers with
// readers elsewhere that would fuse them too (copied, within the
// budget), and under index ops only more index ops.
func grow(root *hlo.Instruction, isReduce bool, fg *fuseGraph) group {
	users, taken := fg.users, fg.taken
	g := group{members: []*hlo.Instruction{root}, copied: map[*hlo.Instruction]bool{}, kind: "kLoop", elem: root.Shape}
	if isReduce {
		g.kind, g.elem, g.rowDims = "kInput", root.Operands[0].Shape, len(root.Dimensions())
	}
	owned := map[*hlo.Instruction]bool{root: true}
	add := func(o *hlo.Instruction, copied bool) {
		owned[o] = true
		g.members = append(g.members, o)
		if copied {
			g.copied[o] = true
		}
	}
	for k := 0; k < len(g.members); k++ {
		member := g.members[k]
		mapped := viewOp(member)
		for _, o := range member.Operands {
			absorbable := fusible(o) && !fg.stored[o] || viewOp(o)
			if !owned[o] && g.spreadsRows(member, users) {
				// Row values (reductions, and ops on them) are computed
				// again in the fusion, row by row, where their input is at
				// hand; they stay outside for their other readers.
				if nodes, n, ok := g.rowTree(o, taken); ok && (g.rowDims == 0 || g.rowDims == n) && len(g.copied)+newMembers(nodes, owned) <= maxCopied {
					g.rowDims = n
					for _, x := range nodes {
						if !owned[x] {
							add(x, true)
						}
					}
					continue
				}
			}
			switch {
			case owned[o]:
			case g.computedScalar(o):
				// Computed once on its own and read as a splat: in a tile
				// program every op is computed per element, so a scalar
				// chain (DynamicQuantizeLinear's scale from the range)
				// would cost its ops, a division among them, per element.
			case mapped && !viewOp(o):
			case member.Opcode == hlo.OpReshape && viewOp(o) && !tile.ReshapeReadsAffine(o):
				// The view is computed on its own (a movement kernel or
				// a fusion), and the reshape reads its result.
			case scalarSplat(o): // copied into every fusion that reads it
				add(o, false)
			case taken[o] || !absorbable:
			case g.copied[member]: // under a copy everything is a copy
				if len(g.copied) < maxCopied && (cheap(o) && fg.copyPays(o) || viewOp(o)) {
					add(o, true)
				}
			case allOwned(users[o], owned) && !slices.ContainsFunc(users[o], func(u *hlo.Instruction) bool { return g.copied[u] }):
				add(o, false) // a copy's original still reads its operands
			case len(g.copied) < maxCopied && (cheap(o) && fg.copyPays(o) || viewOp(o)):
				add(o, true)
			}
		}
	}
	return g
}

// scalarHoist is the fewest elements of a fusion from which a scalar its
// elements read is computed outside it: below, the ops per element cost
// less than the scalar's own kernel call (about a microsecond).
const scalarHoist = 1024

// computedScalar reports whether o is a scalar computed by an op (not a
// constant or a parameter) that g's elements read: it stays outside.
func (g *group) computedScalar(o *hlo.Instruction) bool {
	return o.Shape.Rank() == 0 && o.Opcode != hlo.OpConstant && o.Opcode != hlo.OpParameter &&
		g.elem.NumElements() >= scalarHoist
}

// spreadsRows reports whether b broadcasts row values (of the fusion's
// rows, its leading dimensions) along the rows, which a row program
// (tile_row.go) computes per tile. (An index map cannot read them, so a
// broadcast read through one does not qualify.)
func (g *group) spreadsRows(b *hlo.Instruction, users map[*hlo.Instruction][]*hlo.Instruction) bool {
	if b.Opcode != hlo.OpBroadcast || !b.Shape.SameDims(g.elem) || anyView(users[b]) {
		return false
	}
	for i, d := range b.Dimensions() {
		if d != int64(i) {
			return false
		}
	}
	return true
}

// rowTree collects the row values o is made of: row reductions of values
// of the fusion's shape, and float elementwise ops on row values and
// scalars (log of a sum, in log-softmax; a select of a maximum where it
// is finite). n is the number of trailing
// dimensions the reductions fold.
func (g *group) rowTree(o *hlo.Instruction, taken map[*hlo.Instruction]bool) (nodes []*hlo.Instruction, n int, ok bool) {
	if taken[o] {
		return nil, 0, false
	}
	if o.Opcode == hlo.OpReduce {
		if _, ok := tile.RowLength(o, g.elem); !ok {
			return nil, 0, false
		}
		return []*hlo.Instruction{o}, len(o.Dimensions()), true
	}
	if !fusible(o) { // predicates too: is-finite of a row maximum, read by a select
		return nil, 0, false
	}
	nodes = []*hlo.Instruction{o}
	for _, x := range o.Operands {
		if x.Shape.Rank() == 0 || x.Opcode == hlo.OpBroadcast && x.Operands[0].Shape.Rank() == 0 {
			continue // a splat
		}
		sub, m, ok := g.rowTree(x, taken)
		if !ok || n != 0 && m != n {
			return nil, 0, false
		}
		nodes, n = append(nodes, sub...), m
	}
	rank := g.elem.Rank()
	if n == 0 || !slices.Equal(o.Shape.Dims, g.elem.Dims[:rank-n]) {
		return nil, 0, false
	}
	return nodes, n, true
}

// newMembers counts the distinct instructions of nodes not yet owned.
func newMembers(nodes []*hlo.Instruction, owned map[*hlo.Instruction]bool) int {
	seen := map[*hlo.Instruction]bool{}
	for _, x := range nodes {
		if !owned[x] {
			seen[x] = true
		}
	}
	return len(seen)
}

// anyView: a computed value read through an index map stays outside the
// fusion, as a parameter the map can address.
func anyView(users []*hlo.Instruction) bool {
	return slices.ContainsFunc(users, viewOp)
}

func allOwned(users []*hlo.Instruction, owned map[*hlo.Instruction]bool) bool {
	for _, u := range users {
		if !owned[u] {
			return false
		}
	}
	return len(users) > 0
}

// removeUnusedSplats drops scalar splats whose readers were all fused,
// reporting whether there were any.
func removeUnusedSplats(c *hlo.Computation) bool {
	removed := false
	for {
		users := c.Users()
		dead := map[*hlo.Instruction]bool{}
		for _, in := range c.Instructions {
			if scalarSplat(in) && len(users[in]) == 0 && in != c.Root {
				dead[in] = true
			}
		}
		if len(dead) == 0 {
			return removed
		}
		c.RemoveInstructions(dead)
		removed = true
	}
}

// buildFusion moves members (members[0] is the root) into a new fused
// computation and puts a fusion instruction in the root's place. Scalar
// splats are copied, not moved.
func buildFusion(m *hlo.Module, c *hlo.Computation, g group, names *hlo.NameSet) error {
	b := newFusionBatch(m, c, names)
	b.add(g)
	return b.finish()
}

// fusionBatch builds several fusions of one computation and edits the
// computation once for all of them: each fusion takes its root's place
// and uses as it is built, and the fused members go, the fused
// computations join the module and the computation is sorted at the end.
// Doing those per fusion (a pass over every instruction, a sort, an
// insertion into the module's computations) made fusing a graph of n
// instructions take time in n²: 0.8 s of a 3,000-instruction graph's
// compile.
type fusionBatch struct {
	m     *hlo.Module
	c     *hlo.Computation
	names *hlo.NameSet
	// pos is each instruction's place in c before any fusion; users and
	// controlled are each instruction's readers and the instructions
	// that name it a control predecessor, kept current as fusions
	// replace roots (the members gone stay listed: editing them is
	// harmless).
	pos        map[*hlo.Instruction]int
	users      map[*hlo.Instruction][]*hlo.Instruction
	controlled map[*hlo.Instruction][]*hlo.Instruction
	dead       map[*hlo.Instruction]bool
	fused      []*hlo.Computation
}

func newFusionBatch(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) *fusionBatch {
	b := &fusionBatch{m: m, c: c, names: names, pos: make(map[*hlo.Instruction]int, len(c.Instructions)),
		users: c.Users(), controlled: map[*hlo.Instruction][]*hlo.Instruction{}, dead: map[*hlo.Instruction]bool{}}
	for i, in := range c.Instructions {
		b.pos[in] = i
		for _, p := range in.ControlPredecessors {
			b.controlled[p] = append(b.controlled[p], in)
		}
	}
	return b
}

// add builds g's fusion in place of its root.
func (b *fusionBatch) add(g group) {
	members, names := g.members, b.names
	root := members[0]
	owned := map[*hlo.Instruction]bool{}
	for _, in := range members {
		owned[in] = true
	}
	order := slices.Clone(members)
	slices.SortFunc(order, func(x, y *hlo.Instruction) int { return b.pos[x] - b.pos[y] })
	fc := &hlo.Computation{Name: names.Unique("fused_computation")}
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	var operands []*hlo.Instruction
	param := func(x *hlo.Instruction) *hlo.Instruction {
		if p, ok := copies[x]; ok {
			return p
		}
		p := &hlo.Instruction{Name: names.Unique("param_" + x.Name), Opcode: hlo.OpParameter, Shape: x.Shape.Clone(),
			ParamNumber: int64(len(operands))}
		fc.AddInstruction(p)
		fc.Params = append(fc.Params, p)
		operands = append(operands, x)
		copies[x] = p
		return p
	}
	for _, in := range order {
		cp := *in
		cp.Name = names.Unique(in.Name)
		cp.Attrs = slices.Clone(in.Attrs)
		cp.Shape = in.Shape.Clone()
		cp.ControlPredecessors = nil
		cp.Operands = make([]*hlo.Instruction, len(in.Operands))
		for k, o := range in.Operands {
			if owned[o] {
				cp.Operands[k] = copies[o]
			} else {
				cp.Operands[k] = param(o)
			}
		}
		copies[in] = fc.AddInstruction(&cp)
	}
	fc.Root = copies[root]
	fc.Parent = b.m
	b.fused = append(b.fused, fc)
	fusion := &hlo.Instruction{Name: names.Unique("fusion"), Opcode: hlo.OpFusion, Shape: root.Shape.Clone(), Operands: operands,
		Attrs: []hlo.Attr{{Name: "kind", Value: hlo.Enum(g.kind)}, {Name: "calls", Value: fc}}, Parent: b.c}
	b.c.Instructions[b.pos[root]] = fusion
	b.replace(root, fusion)
	for _, o := range operands {
		b.users[o] = append(b.users[o], fusion)
	}
	for _, in := range members {
		if in != root && !scalarSplat(in) && !g.copied[in] {
			b.dead[in] = true
		}
	}
}

// replace makes every use of old in c refer to repl (c.ReplaceAllUses
// over old's readers alone).
func (b *fusionBatch) replace(old, repl *hlo.Instruction) {
	for _, u := range b.users[old] {
		for i, o := range u.Operands {
			if o == old {
				u.Operands[i] = repl
			}
		}
	}
	for _, u := range b.controlled[old] {
		for i, o := range u.ControlPredecessors {
			if o == old {
				u.ControlPredecessors[i] = repl
			}
		}
	}
	b.users[repl], b.controlled[repl] = b.users[old], b.controlled[old]
	if b.c.Root == old {
		b.c.Root = repl
	}
}

// finish removes the fused members, puts the fused computations before c
// in the module, in the order they were built, and sorts c.
func (b *fusionBatch) finish() error {
	b.c.RemoveInstructions(b.dead)
	at := slices.Index(b.m.Computations, b.c)
	b.m.Computations = slices.Insert(b.m.Computations, at, b.fused...)
	return b.c.SortTopologically()
}
