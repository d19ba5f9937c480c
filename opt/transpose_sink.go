package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	m "github.com/axle-ml/axle/hlo/match"
)

// Transpose sinking, the transpose half of ReshapeMover. A value v is
// "movable" when it can be computed in another frame: v = transpose(v', p)
// for a v' the pass can build without the transpose. Transposes are the
// sources (v' is their operand, or the operand's own v' with the
// permutations composed), and movability spreads to
//
//   - elementwise ops whose operands are movable values of one frame p,
//     scalars, effective scalar constants or broadcasts (a broadcast's
//     dimensions are renamed through p, so a per-channel vector stays a
//     per-channel vector: BatchNorm scales, biases, squeeze-excitation
//     channel weights);
//   - reduce (one operand): v' reduces x' over p[dims]; its frame is the
//     order the kept dimensions take, often none (a global average pool
//     of an NHWC tensor read as NCHW);
//   - reduce-window, pad and slice, their window, padding or slice renamed
//     through p; concatenate of movable values of one frame, along p[dim];
//   - broadcast: the new dimensions travel with the operand dimension
//     before them (nearest-neighbour upsampling);
//   - reshape, when its groups of merged or split dimensions stay in order
//     in the frame (flattening NHWC read as NCHW to N,C,HW), or, for a
//     transpose used only by the reshape, by transposing the transpose's
//     operand into the order the groups need instead (ConvTranspose tiles
//     interleaved with C innermost).
//
// Movable values joined by operand edges form a region. Rebuilding a
// region in the primed frame leaves transposes only where a value of the
// region has a user outside it (its "exits"; users that fold a transpose
// into their dimension numbers, convolutions and dots whose free
// dimensions keep their order, and identity frames cost nothing). A
// region is rebuilt when the elements its exits transpose are no more
// than those its transposes did (strictly fewer if it moves only past
// reshapes and broadcasts, which could otherwise go back and forth), so a
// convolution net lowered channels-last keeps its transposes only at its
// edges. Every rewrite renames dimensions only: the values are the same.

// tsMember is a movable value: prime is its v' (once built), perm its
// frame (v dimension d is v' dimension perm[d]).
type tsMember struct {
	perm  []int64
	prime *hlo.Instruction
	comp  int // region id (union-find root after analysis)
}

// sinkTransposes rebuilds c's profitable regions. It reports whether it
// changed anything.
func sinkTransposes(c *hlo.Computation, names *hlo.NameSet) (bool, error) {
	mem := map[*hlo.Instruction]*tsMember{}
	var order []*hlo.Instruction
	parent := []int{}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) { parent[find(a)] = find(b) }
	// framed returns the frame of o if it is a movable value in a
	// non-identity frame.
	framed := func(o *hlo.Instruction) []int64 {
		if mo := mem[o]; mo != nil && !isIota(mo.perm) {
			return mo.perm
		}
		return nil
	}
	users := c.Users()
	for _, in := range c.Instructions {
		perm := tsFrame(in, framed, users)
		if perm == nil {
			continue
		}
		mo := &tsMember{perm: perm, comp: len(parent)}
		parent = append(parent, len(parent))
		for _, o := range in.Operands {
			if mem[o] != nil && tsReadsPrimed(in, perm, o, mem) {
				union(mo.comp, mem[o].comp)
			}
		}
		mem[in] = mo
		order = append(order, in)
	}
	if len(order) == 0 {
		return false, nil
	}
	// The cost of each region: elements transposed now and after.
	type cost struct {
		before, after int64
		moves         bool // has a member that computes (not a transpose, reshape or broadcast)
		shapes        bool // has a reshape or broadcast member
	}
	costs := map[int]*cost{}
	for _, in := range order {
		mo := mem[in]
		mo.comp = find(mo.comp)
		k := costs[mo.comp]
		if k == nil {
			k = &cost{}
			costs[mo.comp] = k
		}
		switch in.Opcode {
		case hlo.OpTranspose:
			if !isIota(in.Dimensions()) {
				k.before += in.Shape.NumElements()
			}
		case hlo.OpReshape, hlo.OpBroadcast:
			k.shapes = true
		default:
			k.moves = true
		}
		if in.Opcode == hlo.OpReshape {
			o := in.Operands[0]
			if _, _, reorder := tsReshapeFrame(in, mem[o].perm); reorder != nil && !isIota(mapDims(o.Dimensions(), reorder)) {
				k.after += o.Shape.NumElements() // the new transpose of o's source
			}
		}
		if _, costly := tsExits(c, in, mem, users); costly {
			k.after += in.Shape.NumElements()
		}
	}
	apply := map[int]bool{}
	for id, k := range costs {
		// Equal costs are worth moving past computation only: moving past
		// reshapes alone could go back and forth.
		if k.moves && k.after <= k.before || k.shapes && k.after < k.before {
			apply[id] = true
		}
	}
	if len(apply) == 0 {
		return false, nil
	}
	b := &builder{c: c, names: names}
	var exits []*hlo.Instruction
	for _, in := range order {
		mo := mem[in]
		if !apply[mo.comp] {
			continue
		}
		mo.prime = tsBuild(b, in, mo, mem)
		if b.err != nil {
			return false, b.err
		}
		if mo.prime == nil {
			// Not expected (tsFrame checked the forms): leave the region
			// as it is; what was built for it is dead.
			apply[mo.comp] = false
			continue
		}
		if exit, _ := tsExits(c, in, mem, users); exit {
			exits = append(exits, in)
		}
	}
	changed := false
	for _, in := range exits {
		mo := mem[in]
		if !apply[mo.comp] {
			continue
		}
		var repl *hlo.Instruction
		switch {
		case isIota(mo.perm):
			repl = mo.prime
		case in.Opcode == hlo.OpTranspose && mo.prime == in.Operands[0]:
			continue // the transpose stays as it is
		default:
			repl = b.add(hlo.OpTranspose, []*hlo.Instruction{mo.prime}, hlo.Attr{Name: "dimensions", Value: mo.perm})
			if b.err != nil {
				return changed, b.err
			}
		}
		if c.ReplaceAllUses(in, repl) {
			changed = true
		}
	}
	// Members used only inside their region are now dead; the rebuilt
	// values replaced them.
	if b.added {
		if err := c.SortTopologically(); err != nil {
			return changed, err
		}
		removeDeadInstructions(c, newEffects())
	}
	return changed, nil
}

// tsExits reports whether in (a movable value) has a user outside the
// movable values that needs it in its own frame, or is the root (exit:
// its uses are replaced), and whether that costs a transpose (users that
// fold a transpose into their dimension numbers, and identity frames, do
// not).
func tsExits(c *hlo.Computation, in *hlo.Instruction, mem map[*hlo.Instruction]*tsMember, users map[*hlo.Instruction][]*hlo.Instruction) (exit, costly bool) {
	free := isIota(mem[in].perm)
	if in == c.Root {
		return true, !free
	}
	for _, u := range users[in] {
		if mem[u] != nil && tsReadsPrimed(u, mem[u].perm, in, mem) {
			continue
		}
		exit = true
		switch {
		case free:
		case u.Opcode == hlo.OpConvolution && len(u.Operands) == 2:
			// transpose folding names the dimensions
		case u.Opcode == hlo.OpDot && tsDotFolds(u, in, mem[in].perm):
		default:
			costly = true
		}
	}
	return exit, costly
}

// tsFrame returns the frame in's value would have if rebuilt from the
// movable values among its operands (framed returns their frames), or nil
// if it is not movable.
func tsFrame(in *hlo.Instruction, framed func(*hlo.Instruction) []int64, users map[*hlo.Instruction][]*hlo.Instruction) []int64 {
	if !in.Shape.IsArray() || in.Shape.Rank() < 1 || in.Shape.IsDynamic() || len(in.ControlPredecessors) > 0 {
		return nil
	}
	rank := in.Shape.Rank()
	switch {
	case in.Opcode == hlo.OpTranspose:
		q := in.Dimensions()
		r := framed(in.Operands[0])
		if r == nil {
			return slices.Clone(q)
		}
		return mapDims(r, q)
	case in.Opcode.IsElementwise() && in.Opcode != hlo.OpRng && len(in.Operands) > 0:
		// The frame is that of the movable operands; a broadcast of a
		// movable value in another frame is read as a plain broadcast.
		var perm []int64
		for _, o := range in.Operands {
			if p := framed(o); p != nil && o.Opcode != hlo.OpBroadcast {
				if perm != nil && !slices.Equal(perm, p) {
					return nil
				}
				perm = p
			}
		}
		for _, o := range in.Operands {
			if p := framed(o); p != nil && perm == nil {
				perm = p
			}
		}
		for _, o := range in.Operands {
			if p := framed(o); p != nil && slices.Equal(p, perm) {
				continue
			}
			if o.Shape.Rank() == 0 || o.Opcode == hlo.OpBroadcast {
				continue
			}
			if _, ok := m.EffectiveScalar(o); !ok {
				return nil
			}
		}
		return perm
	case in.Opcode == hlo.OpReduce:
		if len(in.Operands) != 2 {
			return nil
		}
		p := framed(in.Operands[0])
		if p == nil {
			return nil
		}
		red := make([]bool, len(p))
		for _, d := range in.Dimensions() {
			red[p[d]] = true
		}
		rankOf := make([]int64, len(p))
		k := int64(0)
		for xd := range p {
			if !red[xd] {
				rankOf[xd] = k
				k++
			}
		}
		q := make([]int64, 0, rank)
		for d := range p {
			if !red[p[d]] {
				q = append(q, rankOf[p[d]])
			}
		}
		if len(q) != rank {
			return nil
		}
		return q
	case in.Opcode == hlo.OpReduceWindow:
		if len(in.Operands) != 2 {
			return nil
		}
		return framed(in.Operands[0])
	case in.Opcode == hlo.OpPad, in.Opcode == hlo.OpSlice:
		return framed(in.Operands[0])
	case in.Opcode == hlo.OpBroadcast:
		if p := framed(in.Operands[0]); p != nil {
			perm, _, _ := tsBroadcastFrame(in, p)
			return perm
		}
	case in.Opcode == hlo.OpReshape:
		if p := framed(in.Operands[0]); p != nil {
			perm, _, reorder := tsReshapeFrame(in, p)
			if reorder != nil && (isIota(reorder) || tsReframes(in.Operands[0], reorder, framed, users) == nil) {
				return nil // (an identity reorder would rebuild o itself)
			}
			return perm
		}
	case in.Opcode == hlo.OpConcatenate:
		var perm []int64
		for _, o := range in.Operands {
			p := framed(o)
			if p == nil || perm != nil && !slices.Equal(perm, p) {
				return nil
			}
			perm = p
		}
		return perm
	}
	return nil
}

// tsBuild builds in's value in its frame from its operands' primed values.
func tsBuild(b *builder, in *hlo.Instruction, mo *tsMember, mem map[*hlo.Instruction]*tsMember) *hlo.Instruction {
	// prime returns operand o in frame p (o's own frame).
	prime := func(o *hlo.Instruction) *hlo.Instruction {
		if om := mem[o]; om != nil && om.prime != nil && !isIota(om.perm) {
			return om.prime
		}
		return nil
	}
	if in.Opcode == hlo.OpTranspose {
		if x := prime(in.Operands[0]); x != nil {
			return x
		}
		return in.Operands[0]
	}
	elementwise := in.Opcode.IsElementwise()
	var x *hlo.Instruction
	var p []int64 // the operands' frame
	for _, o := range in.Operands {
		if y := prime(o); y != nil && (!elementwise || slices.Equal(mem[o].perm, mo.perm)) {
			x, p = y, mem[o].perm
			break
		}
	}
	if x == nil {
		return nil
	}
	rank := len(p)
	switch in.Opcode {
	case hlo.OpBroadcast:
		_, dims, shape := tsBroadcastFrame(in, p)
		return b.broadcast(x, shape, dims)
	case hlo.OpReshape:
		_, shape, reorder := tsReshapeFrame(in, p)
		if reorder != nil {
			o := in.Operands[0]
			x = o.Operands[0]
			if q := mapDims(o.Dimensions(), reorder); !isIota(q) {
				x = b.add(hlo.OpTranspose, []*hlo.Instruction{x}, hlo.Attr{Name: "dimensions", Value: q})
			}
		}
		return b.withShape(hlo.OpReshape, hlo.ArrayShape(in.Shape.DType, shape...), []*hlo.Instruction{x})
	case hlo.OpReduce:
		dims := mapDims(p, in.Dimensions())
		slices.Sort(dims)
		return b.add(hlo.OpReduce, []*hlo.Instruction{x, in.Operands[1]}, withAttr(in.Attrs, "dimensions", dims)...)
	case hlo.OpReduceWindow:
		v, _ := in.Attr("window")
		w, ok := v.(*hlo.Window)
		if !ok || len(w.Dims) != rank {
			return nil
		}
		nw := &hlo.Window{Dims: make([]hlo.WindowDim, rank)}
		for d := range rank {
			nw.Dims[p[d]] = w.Dims[d]
		}
		return b.add(hlo.OpReduceWindow, []*hlo.Instruction{x, in.Operands[1]}, withAttr(in.Attrs, "window", nw)...)
	case hlo.OpPad:
		v, _ := in.Attr("padding")
		cfg, ok := v.(hlo.PaddingConfig)
		if !ok || len(cfg) != rank {
			return nil
		}
		nc := make(hlo.PaddingConfig, rank)
		for d := range rank {
			nc[p[d]] = cfg[d]
		}
		return b.add(hlo.OpPad, []*hlo.Instruction{x, in.Operands[1]}, withAttr(in.Attrs, "padding", nc)...)
	case hlo.OpSlice:
		sd := sliceDims(in)
		if len(sd) != rank {
			return nil
		}
		ns := make([]hlo.SliceDim, rank)
		for d := range rank {
			ns[p[d]] = sd[d]
		}
		return b.add(hlo.OpSlice, []*hlo.Instruction{x}, withAttr(in.Attrs, "slice", ns)...)
	case hlo.OpConcatenate:
		ops := make([]*hlo.Instruction, len(in.Operands))
		for i, o := range in.Operands {
			if ops[i] = prime(o); ops[i] == nil {
				return nil
			}
		}
		d := in.Dimensions()
		if len(d) != 1 {
			return nil
		}
		return b.add(hlo.OpConcatenate, ops, withAttr(in.Attrs, "dimensions", []int64{p[d[0]]})...)
	}
	// Elementwise.
	inner := x.Shape.Dims
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		if y := prime(o); y != nil && slices.Equal(mem[o].perm, p) {
			ops[i] = y
			continue
		}
		switch {
		case o.Shape.Rank() == 0:
			ops[i] = o
		case o.Opcode == hlo.OpBroadcast:
			ops[i] = b.broadcast(o.Operands[0], inner, mapDims(p, o.Dimensions()))
		default:
			lit, _ := m.EffectiveScalar(o)
			s := b.withShape(hlo.OpConstant, hlo.ScalarShape(lit.DType()), nil)
			s.Literal = scalarOf(lit)
			ops[i] = b.broadcast(s, inner, nil)
		}
	}
	return b.withShape(in.Opcode, hlo.ArrayShape(in.Shape.DType, inner...), ops, in.Attrs...)
}

// withAttr is attrs with name set to v (a copy).
func withAttr(attrs []hlo.Attr, name string, v any) []hlo.Attr {
	out := make([]hlo.Attr, len(attrs))
	copy(out, attrs)
	for i := range out {
		if out[i].Name == name {
			out[i].Value = v
			return out
		}
	}
	return append(out, hlo.Attr{Name: name, Value: v})
}

// tsReadsPrimed reports whether u, a movable value in frame uperm, reads
// its operand o's primed value (rather than o itself).
func tsReadsPrimed(u *hlo.Instruction, uperm []int64, o *hlo.Instruction, mem map[*hlo.Instruction]*tsMember) bool {
	om := mem[o]
	if om == nil || isIota(om.perm) {
		return false
	}
	if u.Opcode.IsElementwise() {
		return slices.Equal(om.perm, uperm)
	}
	return true
}

// tsBroadcastFrame: in = broadcast(o, dims) with o in frame p. The new
// dimensions travel with the operand dimension before them (leading ones
// stay first), and the operand's dimensions take o's primed order, so an
// upsampling broadcast next to a dimension stays next to it. It returns
// in's frame, the primed broadcast's dimensions and its shape.
func tsBroadcastFrame(in *hlo.Instruction, p []int64) (perm, dims, shape []int64) {
	d := in.Dimensions()
	R := in.Shape.Rank()
	if len(d) != len(p) {
		return nil, nil, nil
	}
	owner := make([]int, R) // operand dimension each output dimension travels with, -1 leading
	opOf := make([]int, R)
	for i := range opOf {
		opOf[i] = -1
	}
	for i, od := range d {
		opOf[od] = i
	}
	cur := -1
	for k := range R {
		if opOf[k] >= 0 {
			cur = opOf[k]
		}
		owner[k] = cur
	}
	var order []int64
	for k := range R {
		if owner[k] == -1 {
			order = append(order, int64(k))
		}
	}
	inv := make([]int, len(p))
	for i, j := range p {
		inv[j] = i
	}
	for j := range p {
		i := inv[j] // o dimension at primed position j
		for k := range R {
			if owner[k] == i {
				order = append(order, int64(k))
			}
		}
	}
	perm = make([]int64, R)
	shape = make([]int64, R)
	for k, od := range order {
		perm[od] = int64(k)
		shape[k] = in.Shape.Dims[od]
	}
	dims = make([]int64, len(p))
	for j := range p {
		dims[j] = perm[d[inv[j]]]
	}
	return perm, dims, shape
}

// tsReshapeFrame: in = reshape(o) with o in frame p. The reshape splits
// into groups of consecutive dimensions of equal size products; it
// commutes with the transpose when each group's operand dimensions stay
// consecutive and in order in o's primed value. It returns in's frame
// and the primed reshape's shape, or nil.
func tsReshapeFrame(in *hlo.Instruction, p []int64) (perm, shape, reorder []int64) {
	src, dst := in.Operands[0].Shape.Dims, in.Shape.Dims
	for _, v := range append(slices.Clone(src), dst...) {
		if v <= 0 {
			return nil, nil, nil
		}
	}
	type group struct{ in, out []int64 }
	var groups []group
	i, j := 0, 0
	for i < len(src) || j < len(dst) {
		var g group
		pi, po := int64(1), int64(1)
		if i < len(src) {
			pi *= src[i]
			g.in = append(g.in, int64(i))
			i++
		}
		if j < len(dst) {
			po *= dst[j]
			g.out = append(g.out, int64(j))
			j++
		}
		for pi != po {
			if pi < po {
				if i >= len(src) {
					return nil, nil, nil
				}
				pi *= src[i]
				g.in = append(g.in, int64(i))
				i++
			} else {
				if j >= len(dst) {
					return nil, nil, nil
				}
				po *= dst[j]
				g.out = append(g.out, int64(j))
				j++
			}
		}
		if (len(g.in) == 0 || len(g.out) == 0) && len(groups) > 0 {
			last := &groups[len(groups)-1]
			last.in = append(last.in, g.in...)
			last.out = append(last.out, g.out...)
			continue
		}
		if len(g.in) == 0 || len(g.out) == 0 {
			return nil, nil, nil
		}
		groups = append(groups, g)
	}
	// Dimensions of size 1 may sit anywhere; the others' ranks in o's
	// primed order must run consecutively within each group.
	rankOf := make([]int64, len(src))
	r := int64(0)
	inv := make([]int, len(p))
	for d, j := range p {
		inv[j] = d
	}
	for _, d := range inv {
		rankOf[d] = -1
		if src[d] != 1 {
			rankOf[d] = r
			r++
		}
	}
	key := make([]int64, len(groups))
	commutes := true
	for gi, g := range groups {
		key[gi] = -1
		prev := int64(-1)
		for _, d := range g.in {
			if rankOf[d] < 0 {
				continue
			}
			if prev >= 0 && rankOf[d] != prev+1 {
				commutes = false
			}
			if key[gi] < 0 || rankOf[d] < key[gi] {
				key[gi] = rankOf[d]
			}
			prev = rankOf[d]
		}
	}
	idx := make([]int, len(groups))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return int(key[a] - key[b]) })
	sorted := make([]group, len(groups))
	for k, gi := range idx {
		sorted[k] = groups[gi]
	}
	groups = sorted
	perm = make([]int64, len(dst))
	k := int64(0)
	for _, g := range groups {
		for _, od := range g.out {
			perm[od] = k
			shape = append(shape, dst[od])
			k++
		}
	}
	if commutes {
		return perm, shape, nil
	}
	// The groups in this order need o's dimensions in another order: a
	// new transpose of o's source (see tsReframes).
	for _, g := range groups {
		reorder = append(reorder, g.in...)
	}
	return perm, shape, reorder
}

// tsReframes returns, for a reshape whose groups do not commute with its
// operand o's frame, the permutation of the transpose of o's source that
// lays the groups out in order (o dimension reorder[k] at position k), if
// o is a transpose of a value outside the frames used only by the
// reshape: that transpose then replaces o, so the reshape's result stays
// in a frame (ConvTranspose tiles interleaved channels-last).
func tsReframes(o *hlo.Instruction, reorder []int64, framed func(*hlo.Instruction) []int64, users map[*hlo.Instruction][]*hlo.Instruction) []int64 {
	if reorder == nil || o.Opcode != hlo.OpTranspose || framed(o.Operands[0]) != nil || len(users[o]) != 1 || o.Parent == nil || o == o.Parent.Root {
		return nil
	}
	return mapDims(o.Dimensions(), reorder)
}

// tsDotFolds reports whether transpose folding will fold a transpose by
// perm of dot u's operand in (see foldDotOperand).
func tsDotFolds(u, in *hlo.Instruction, perm []int64) bool {
	if len(u.Operands) != 2 || u.HasAttr("sparsity") {
		return false
	}
	for i, side := range []string{"lhs", "rhs"} {
		if u.Operands[i] != in {
			continue
		}
		batch, _ := u.Ints(side + "_batch_dims")
		contract, _ := u.Ints(side + "_contracting_dims")
		free := complement(len(perm), append(slices.Clone(batch), contract...))
		if !slices.IsSorted(mapDims(perm, free)) {
			return false
		}
	}
	return true
}
