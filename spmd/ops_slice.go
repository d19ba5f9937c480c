package spmd

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// dynamic-slice and dynamic-update-slice run on shards when no tiled
// dimension is actually sliced: a tiled dimension the slice (or update)
// spans whole has its start index clamped to 0, globally and on every
// shard alike (XLA clamps start indices into [0, dim - size]), so each
// device's shard of the result is the slice of its own shard, with the
// same start indices. XLA's partitioner takes the same case natively and
// falls back otherwise; a slice across shard boundaries would need this
// device's window fetched from whichever devices hold it.

// dynamicSlice keeps its operand's placement when the sliced dimensions
// are untiled.
func (p *partitioner) dynamicSlice(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	s, tiled := p.tiledOperand(in)
	if !tiled || !in.Shape.IsArray() || !spansTiled(s, in.Operands[0].Shape, in.Shape) {
		return p.sliceWhole(in, want, annotated)
	}
	ops, err := p.indexOperands(in, 1)
	if err != nil {
		return nil, Sharding{}, err
	}
	local, err := s.ShardShape(in.Shape)
	if err != nil {
		return nil, Sharding{}, err
	}
	x := p.rewrite(in, local, append([]*hlo.Instruction{p.local[in.Operands[0]]}, ops...))
	x.SetAttr("dynamic_slice_sizes", slices.Clone(local.Dims))
	return x, s, nil
}

// dynamicUpdateSlice keeps its operand's placement when the update spans
// every tiled dimension whole; the update is placed alike (its tiles are
// then the same rows of the operand's).
func (p *partitioner) dynamicUpdateSlice(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	s, tiled := p.tiledOperand(in)
	if !tiled || len(in.Operands) < 2 || !in.Shape.IsArray() || !spansTiled(s, in.Operands[0].Shape, in.Operands[1].Shape) {
		return p.sliceWhole(in, want, annotated)
	}
	upd, err := p.operand(in, 1, s)
	if err != nil {
		return nil, Sharding{}, err
	}
	ops, err := p.indexOperands(in, 2)
	if err != nil {
		return nil, Sharding{}, err
	}
	return p.rewrite(in, p.local[in.Operands[0]].Shape.Clone(), append([]*hlo.Instruction{p.local[in.Operands[0]], upd}, ops...)), s, nil
}

// sliceWhole runs a slice whose operands are all whole as it is (no
// gather needed, so not counted as a fallback), else takes the fallback.
func (p *partitioner) sliceWhole(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	for _, o := range in.Operands {
		if !p.shard[o].IsReplicated() {
			return p.fallback(in, want, annotated)
		}
	}
	ops, err := p.replicatedOperands(in)
	if err != nil {
		return nil, Sharding{}, err
	}
	return p.rewrite(in, in.Shape.Clone(), ops), Replicate(), nil
}

// spansTiled reports whether part (a slice or update of whole) is as
// large as whole along every dimension s tiles.
func spansTiled(s Sharding, whole, part hlo.Shape) bool {
	if whole.Rank() != part.Rank() || len(s.Tiles) != whole.Rank() {
		return false
	}
	for d, k := range s.Tiles {
		if k > 1 && part.Dims[d] != whole.Dims[d] {
			return false
		}
	}
	return true
}

// indexOperands are the start indices from operand i on, whole.
func (p *partitioner) indexOperands(in *hlo.Instruction, from int) ([]*hlo.Instruction, error) {
	out := make([]*hlo.Instruction, 0, len(in.Operands)-from)
	for i := from; i < len(in.Operands); i++ {
		x, err := p.operand(in, i, Replicate())
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}
