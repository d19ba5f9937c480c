package spmd

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// dotDims are a dot's dimension numbers with the free dimensions listed.
type dotDims struct {
	lb, rb, lc, rc, lf, rf []int64
}

func dotDimsOf(in *hlo.Instruction) dotDims {
	var d dotDims
	d.lb, _ = in.Ints("lhs_batch_dims")
	d.rb, _ = in.Ints("rhs_batch_dims")
	d.lc, _ = in.Ints("lhs_contracting_dims")
	d.rc, _ = in.Ints("rhs_contracting_dims")
	d.lf = freeDims(in.Operands[0].Shape.Rank(), d.lb, d.lc)
	d.rf = freeDims(in.Operands[1].Shape.Rank(), d.rb, d.rc)
	return d
}

func freeDims(rank int, used ...[]int64) []int64 {
	var out []int64
	for i := range int64(rank) {
		if !slices.Contains(used[0], i) && !slices.Contains(used[1], i) {
			out = append(out, i)
		}
	}
	return out
}

func pick(v []int64, at []int64) []int64 {
	out := make([]int64, len(at))
	for i, a := range at {
		out[i] = v[a]
	}
	return out
}

// dot tries, in order, the operands as they are placed, the lhs as placed
// with the rhs gathered, and the rhs as placed with the lhs gathered; the
// first placement under which every device can multiply its own blocks
// wins (dotPlan). With both operands whole it runs on whole values.
func (p *partitioner) dot(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	if len(in.Operands) != 2 || in.HasAttr("sparsity") || !in.Shape.IsArray() {
		return p.fallback(in, want, annotated)
	}
	l, r, rep := p.shard[in.Operands[0]], p.shard[in.Operands[1]], Replicate()
	for _, try := range [][2]Sharding{{l, r}, {l, rep}, {rep, r}} {
		if try[0].IsReplicated() && try[1].IsReplicated() {
			continue
		}
		out, sum, ok := p.dotPlan(dotDimsOf(in), in.Operands[0].Shape.Rank(), in.Operands[1].Shape.Rank(), try[0], try[1])
		if !ok {
			continue
		}
		x, err := p.product(in, try, dotDimsOf(in), out, sum, nil)
		return x, out, err
	}
	return p.fallback(in, want, annotated)
}

// maskPair zeroes the padding of a contraction's two operands (local
// values lhs and rhs placed by s) along their contracted dimensions.
func (p *partitioner) maskPair(in *hlo.Instruction, lhs, rhs *hlo.Instruction, s [2]Sharding, lc, rc []int64) (*hlo.Instruction, *hlo.Instruction, error) {
	lhs, err := p.maskContracted(lhs, in.Operands[0].Shape, s[0], lc)
	if err != nil {
		return nil, nil, err
	}
	rhs, err = p.maskContracted(rhs, in.Operands[1].Shape, s[1], rc)
	return lhs, rhs, err
}

// dotPlan decides whether a local dot of the blocks placed by l and r
// computes blocks of the result. Batch and contracting dimensions must be
// tiled alike on both sides and every device must hold matching tiles of
// them. The result tile of a device is (its batch tile, its lhs free
// tile, its rhs free tile). When contracting dimensions are tiled, each
// device has a partial sum; the devices sharing a result tile must then
// split into groups holding each contracting tile exactly once, and an
// all-reduce over each group (sum, returned) completes the tile. Operand
// dimensions dd does not list are ignored: a caller listing fewer
// (convolution's spatial dimensions) checks them itself.
func (p *partitioner) dotPlan(dd dotDims, lrank, rrank int, l, r Sharding) (out Sharding, sum [][]int64, ok bool) {
	lv := l.view(lrank, p.n)
	rv := r.view(rrank, p.n)
	if !slices.Equal(pick(lv.Tiles, dd.lb), pick(rv.Tiles, dd.rb)) || !slices.Equal(pick(lv.Tiles, dd.lc), pick(rv.Tiles, dd.rc)) {
		return Sharding{}, nil, false
	}
	outTiles := slices.Concat(pick(lv.Tiles, dd.lb), pick(lv.Tiles, dd.lf), pick(rv.Tiles, dd.rf))
	cTiles := pick(lv.Tiles, dd.lc)
	outIdx := make([][]int64, p.n)
	cIdx := make([]int64, p.n)
	for d := range p.n {
		il, _, okl := lv.position(d)
		ir, _, okr := rv.position(d)
		if !okl || !okr || !slices.Equal(pick(il, dd.lb), pick(ir, dd.rb)) || !slices.Equal(pick(il, dd.lc), pick(ir, dd.rc)) {
			return Sharding{}, nil, false
		}
		outIdx[d] = slices.Concat(pick(il, dd.lb), pick(il, dd.lf), pick(ir, dd.rf))
		cIdx[d] = flatten(pick(il, dd.lc), cTiles)
	}
	out, ok = grouped(p.n, outTiles, func(d int64) []int64 { return outIdx[d] })
	nc := prod(cTiles)
	if !ok || nc == 1 {
		return out, nil, ok
	}
	// Group the devices by result tile; each group must split into
	// subgroups that hold every contracting tile once (more than one
	// when the contracting tiles are replicated).
	byTile := map[int64][]int64{}
	var order []int64
	for d := range p.n {
		t := flatten(outIdx[d], outTiles)
		if _, seen := byTile[t]; !seen {
			order = append(order, t)
		}
		byTile[t] = append(byTile[t], d)
	}
	for _, t := range order {
		subs, ok := coverOnce(byTile[t], cIdx, nc)
		if !ok {
			return Sharding{}, nil, false
		}
		sum = append(sum, subs...)
	}
	return out, sum, true
}

// coverOnce splits devices g into groups that each hold every one of nc
// contracting tiles (cIdx[d] is device d's) exactly once: the j-th
// holder of each tile form group j. ok is false when the tiles are not
// held equally often.
func coverOnce(g []int64, cIdx []int64, nc int64) ([][]int64, bool) {
	byC := make([][]int64, nc)
	for _, d := range g {
		byC[cIdx[d]] = append(byC[cIdx[d]], d)
	}
	m := len(byC[0])
	for _, h := range byC {
		if len(h) != m || m == 0 {
			return nil, false
		}
	}
	out := make([][]int64, m)
	for j := range out {
		for _, h := range byC {
			out[j] = append(out[j], h[j])
		}
	}
	return out, true
}

// reduce reduces each device's block locally; when reduced dimensions
// are tiled, an all-reduce with the reduce's own computation combines the
// partial results across the devices that share the kept tile (and
// replica). Like XLA's partitioner this counts on the init value being
// the reducer's identity, since every device folds it in once (and it
// fills the padding of unevenly tiled reduced dimensions).
func (p *partitioner) reduce(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	if len(in.Operands) != 2 || !in.Shape.IsArray() {
		return p.fallback(in, want, annotated)
	}
	init, err := p.operand(in, 1, Replicate())
	if err != nil {
		return nil, Sharding{}, err
	}
	s, tiled := p.tiledOperand(in)
	if !tiled {
		return p.rewrite(in, in.Shape.Clone(), []*hlo.Instruction{p.local[in.Operands[0]], init}), Replicate(), nil
	}
	reduced := in.Dimensions()
	kept := freeDims(len(s.Tiles), reduced, nil)
	out, ok := grouped(p.n, pick(s.Tiles, kept), func(d int64) []int64 {
		t, _, _ := s.position(d)
		return pick(t, kept)
	})
	if !ok {
		return p.fallback(in, want, annotated)
	}
	local, err := out.ShardShape(in.Shape)
	if err != nil {
		return nil, Sharding{}, err
	}
	// Padding along a reduced dimension would be folded in: fill it with
	// the init value, the reducer's identity (XLA pads the same way).
	dims := make([]int, len(reduced))
	for i, d := range reduced {
		dims[i] = int(d)
	}
	operand, err := p.mask(p.local[in.Operands[0]], in.Operands[0].Shape, s, dims, init)
	if err != nil {
		return nil, Sharding{}, err
	}
	x := p.rewrite(in, local, []*hlo.Instruction{operand, init})
	if prod(pick(s.Tiles, reduced)) > 1 {
		x = p.allReduce(x, s.groupsAlong(dims...), in.Computation("to_apply"))
	}
	return x, out, nil
}

// product emits a product (dot or convolution) of in on shards: its
// operands resharded to try with the padding of the contracted
// dimensions zeroed (maskPair), the local instruction (adjusted by local,
// when given), and the all-reduce of partial sums when sum says so.
func (p *partitioner) product(in *hlo.Instruction, try [2]Sharding, dd dotDims, out Sharding, sum [][]int64, local func(*hlo.Instruction)) (*hlo.Instruction, error) {
	lhs, err := p.operand(in, 0, try[0])
	if err != nil {
		return nil, err
	}
	rhs, err := p.operand(in, 1, try[1])
	if err != nil {
		return nil, err
	}
	if lhs, rhs, err = p.maskPair(in, lhs, rhs, try, dd.lc, dd.rc); err != nil {
		return nil, err
	}
	shape, err := out.ShardShape(in.Shape)
	if err != nil {
		return nil, err
	}
	x := p.rewrite(in, shape, []*hlo.Instruction{lhs, rhs})
	if local != nil {
		local(x)
	}
	if sum != nil {
		x = p.allReduce(x, sum, p.adder(in.Shape.DType))
	}
	return x, nil
}
