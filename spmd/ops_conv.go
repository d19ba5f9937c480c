package spmd

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// A convolution without spatial tiling is a dot in disguise, which is how
// XLA's convolution handler sees it: the input batch dimension is a free
// dimension of the lhs, the kernel's output features a free dimension of
// the rhs, and the input features (kernel input features) are contracted.
// With feature_group_count G > 1 the features play batch instead: group g
// reads input features [g·C/G, (g+1)·C/G) and writes kernel output
// features [g·O/G, (g+1)·O/G), so input and output features tiled alike
// keep every group on one device as long as each tile holds whole groups
// (G divisible by the tile count); the local convolution then has G/k
// groups. Tiled spatial dimensions need a halo exchange (XLA fetches each
// shard's window overlap from its neighbours with collective-permutes),
// which this partitioner does not do: such convolutions take the
// fallback.

// convAsDot lists a convolution's input and kernel dimensions as dot
// dimension numbers, and the output dimensions the dot's result
// dimensions (batch, lhs free, rhs free) land on.
func convAsDot(cd *hlo.ConvDimNumbers, groups int64) (dotDims, []int) {
	if groups > 1 {
		return dotDims{lb: []int64{cd.InputFeature}, rb: []int64{cd.KernelOutput}, lf: []int64{cd.InputBatch}},
			[]int{int(cd.OutputFeature), int(cd.OutputBatch)}
	}
	return dotDims{lc: []int64{cd.InputFeature}, rc: []int64{cd.KernelInput},
			lf: []int64{cd.InputBatch}, rf: []int64{cd.KernelOutput}},
		[]int{int(cd.OutputBatch), int(cd.OutputFeature)}
}

// convolution tries placements of its operands in the order convTries
// gives and runs the first that convPlan accepts on shards, all-reducing
// partial sums over tiled input features.
func (p *partitioner) convolution(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	cd := in.ConvDims()
	bgc, _ := in.Int("batch_group_count")
	if cd == nil || len(in.Operands) != 2 || !in.Shape.IsArray() || bgc > 1 {
		return p.fallback(in, want, annotated)
	}
	groups, ok := in.Int("feature_group_count")
	if !ok {
		groups = 1
	}
	for _, try := range p.convTries(in, cd, groups) {
		out, sum, localGroups, ok := p.convPlan(in, cd, groups, try[0], try[1])
		if !ok {
			continue
		}
		dd, _ := convAsDot(cd, groups)
		x, err := p.product(in, try, dd, out, sum, func(x *hlo.Instruction) {
			if localGroups != groups {
				x.SetAttr("feature_group_count", localGroups)
			}
		})
		return x, out, err
	}
	return p.fallback(in, want, annotated)
}

// convPlan is dotPlan for a convolution (see convAsDot) with two more
// conditions: no dimension the dot view leaves out (spatial, and the
// kernel's per-group input features when grouped) is tiled, and with
// groups every feature tile holds whole groups. It returns the result's
// placement on the convolution's own output dimensions and the local
// convolution's feature_group_count.
func (p *partitioner) convPlan(in *hlo.Instruction, cd *hlo.ConvDimNumbers, groups int64, l, r Sharding) (out Sharding, sum [][]int64, localGroups int64, ok bool) {
	lrank, rrank := in.Operands[0].Shape.Rank(), in.Operands[1].Shape.Rank()
	dd, to := convAsDot(cd, groups)
	lv, rv := l.view(lrank, p.n), r.view(rrank, p.n)
	if !onlyTiled(lv.Tiles, dd.lb, dd.lc, dd.lf) || !onlyTiled(rv.Tiles, dd.rb, dd.rc, dd.rf) {
		return Sharding{}, nil, 0, false
	}
	localGroups = groups
	if groups > 1 {
		k := lv.Tiles[cd.InputFeature]
		if groups%k != 0 {
			return Sharding{}, nil, 0, false
		}
		localGroups = groups / k
	}
	flat, sum, ok := p.dotPlan(dd, lrank, rrank, l, r)
	if !ok {
		return Sharding{}, nil, 0, false
	}
	if flat.IsReplicated() {
		return flat, sum, localGroups, true
	}
	out, err := flat.remap(in.Shape.Rank(), to)
	if err != nil {
		return Sharding{}, nil, 0, false
	}
	return out, sum, localGroups, true
}

// onlyTiled reports whether every dimension with more than one tile is
// among the listed ones.
func onlyTiled(tiles []int64, listed ...[]int64) bool {
	all := slices.Concat(listed...)
	for d, k := range tiles {
		if k > 1 && !slices.Contains(all, int64(d)) {
			return false
		}
	}
	return true
}

// convTries lists the operand placements to try: as placed; the kernel
// whole; the kernel placed to fit the input (for tiled input features, a
// whole kernel is cut locally to the matching tiles rather than the input
// gathered, as XLA reshards the cheaper operand); the input whole; the
// input placed to fit the kernel.
func (p *partitioner) convTries(in *hlo.Instruction, cd *hlo.ConvDimNumbers, groups int64) [][2]Sharding {
	x, k := in.Operands[0], in.Operands[1]
	l, r, rep := p.shard[x], p.shard[k], Replicate()
	dd, _ := convAsDot(cd, groups)
	lPaired, rPaired := slices.Concat(dd.lb, dd.lc), slices.Concat(dd.rb, dd.rc)
	tries := [][2]Sharding{{l, r}, {l, rep}}
	if fit, ok := p.fitting(l, x.Shape, lPaired, k.Shape, rPaired); ok {
		tries = append(tries, [2]Sharding{l, fit})
	}
	tries = append(tries, [2]Sharding{rep, r})
	if fit, ok := p.fitting(r, k.Shape, rPaired, x.Shape, lPaired); ok {
		tries = append(tries, [2]Sharding{fit, r})
	}
	return slices.DeleteFunc(tries, func(t [2]Sharding) bool { return t[0].IsReplicated() && t[1].IsReplicated() })
}

// fitting is a placement for the other operand of a contraction whose
// one operand (of shape sh) is placed by s: the other's dimensions
// theirs[i] tiled as s tiles mine[i], every device holding the tiles
// that pair with its own, everything else whole. ok is false when s
// tiles none of mine or the tiles do not divide the other's shape.
func (p *partitioner) fitting(s Sharding, sh hlo.Shape, mine []int64, other hlo.Shape, theirs []int64) (Sharding, bool) {
	v := s.view(sh.Rank(), p.n)
	tiles := make([]int64, other.Rank())
	for i := range tiles {
		tiles[i] = 1
	}
	for i, d := range mine {
		tiles[theirs[i]] = v.Tiles[d]
	}
	if prod(tiles) == 1 {
		return Sharding{}, false
	}
	fit, ok := grouped(p.n, tiles, func(d int64) []int64 {
		t, _, _ := v.position(d)
		idx := make([]int64, len(tiles))
		for i, m := range mine {
			idx[theirs[i]] = t[m]
		}
		return idx
	})
	if !ok {
		return Sharding{}, false
	}
	if _, err := fit.ShardShape(other); err != nil {
		return Sharding{}, false
	}
	return fit, true
}
