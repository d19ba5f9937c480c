package spmd

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Rules for instructions that need no communication of their own: each
// runs on shards as it is, once its operands are placed to fit.

func (p *partitioner) parameter(in *hlo.Instruction, want Sharding, _ bool) (*hlo.Instruction, Sharding, error) {
	local, err := want.ShardShape(in.Shape)
	if err != nil {
		return nil, Sharding{}, err
	}
	x := p.rewrite(in, local, nil)
	x.SetAttr("sharding", hlo.Raw(want.String()))
	if in.ParamNumber < 0 || int(in.ParamNumber) >= len(p.comp.Params) {
		return nil, Sharding{}, fmt.Errorf("parameter number %d out of range", in.ParamNumber)
	}
	p.comp.Params[in.ParamNumber] = x
	return x, want, nil
}

func (p *partitioner) tuple(in *hlo.Instruction, _ Sharding, _ bool) (*hlo.Instruction, Sharding, error) {
	have := Sharding{Kind: TupleKind}
	ops := make([]*hlo.Instruction, len(in.Operands))
	shapes := make([]hlo.Shape, len(in.Operands))
	for i, o := range in.Operands {
		ops[i], shapes[i] = p.local[o], p.local[o].Shape
		have.Elements = append(have.Elements, p.shard[o])
	}
	return p.rewrite(in, hlo.TupleShape(shapes...), ops), have, nil
}

func (p *partitioner) getTupleElement(in *hlo.Instruction, _ Sharding, _ bool) (*hlo.Instruction, Sharding, error) {
	o := in.Operands[0]
	i, _ := in.Int("index")
	s, err := p.shard[o].element(int(i), len(o.Shape.Tuple))
	if err != nil {
		return nil, Sharding{}, err
	}
	x := p.local[o]
	return p.rewrite(in, x.Shape.Tuple[i].Clone(), []*hlo.Instruction{x}), s, nil
}

// customCall handles the partitioner's own targets; any other target is
// run on whole values.
func (p *partitioner) customCall(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	target, _ := in.StringAttr("custom_call_target")
	if len(in.Operands) != 1 || !in.Shape.IsArray() {
		return p.fallback(in, want, annotated)
	}
	o := in.Operands[0]
	x, s := p.local[o], p.shard[o]
	switch target {
	case targetSharding:
		// The annotation is the whole meaning: visit reshards to it.
		return x, s, nil
	case targetFullToShard:
		// The operand's own shard becomes the manual region's value.
		if !x.Shape.SameDims(in.Shape) {
			return nil, Sharding{}, fmt.Errorf("@%s: the operand's shard is %s under %s, the result %s",
				target, x.Shape.HumanString(), s, in.Shape.HumanString())
		}
		// The region sees its shard's padding: make it zeros, as Split does.
		x, err := p.mask(x, o.Shape, s, allDims(o.Shape.Rank()), p.zeroOf(x.Shape.DType))
		return x, Sharding{Kind: Manual}, err
	case targetShardToFull:
		if s.Kind != Manual && !s.IsReplicated() {
			return nil, Sharding{}, fmt.Errorf("@%s of a value sharded %s, want manual", target, s)
		}
		if !annotated {
			return nil, Sharding{}, fmt.Errorf("@%s without a sharding", target)
		}
		local, err := want.ShardShape(in.Shape)
		if err != nil {
			return nil, Sharding{}, err
		}
		if !local.SameDims(x.Shape) {
			return nil, Sharding{}, fmt.Errorf("@%s: the manual value is %s, a shard of the result under %s is %s",
				target, x.Shape.HumanString(), want, local.HumanString())
		}
		return x, want, nil
	}
	return p.fallback(in, want, annotated)
}

// isManual reports whether in belongs to a shard_map region: annotated
// manual, or using a manual value (other than to leave the region).
func (p *partitioner) isManual(in *hlo.Instruction, want Sharding) bool {
	if t, _ := in.StringAttr("custom_call_target"); in.Opcode == hlo.OpCustomCall && (t == targetShardToFull || t == targetFullToShard) {
		return false
	}
	if want.Kind == Manual {
		return true
	}
	for _, o := range in.Operands {
		if p.shard[o].Kind == Manual {
			return true
		}
	}
	return false
}

// manual copies an instruction of a shard_map region unchanged: its
// shapes are already per-device. Replicated operands (constants made in
// the region) are used whole.
func (p *partitioner) manual(in *hlo.Instruction) (*hlo.Instruction, Sharding, error) {
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		s := p.shard[o]
		if s.Kind != Manual && !s.IsReplicated() {
			return nil, Sharding{}, fmt.Errorf("operand %s is sharded %s inside a manual region", o.Name, s)
		}
		ops[i] = p.local[o]
	}
	if t, _ := in.StringAttr("custom_call_target"); in.Opcode == hlo.OpCustomCall && t == targetSharding && len(ops) == 1 {
		return ops[0], Sharding{Kind: Manual}, nil // {manual} on a manual value says nothing new
	}
	return p.rewrite(in, in.Shape.Clone(), ops), Sharding{Kind: Manual}, nil
}

// elementwise runs on shards placed alike: the annotation's placement,
// else the first sharded operand's (the forward propagation rule).
func (p *partitioner) elementwise(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	target := Replicate()
	if annotated {
		target = want
	} else {
		for _, o := range in.Operands {
			if s := p.shard[o]; s.Kind == Tiled && o.Shape.Rank() == in.Shape.Rank() && !s.IsReplicated() {
				target = s
				break
			}
		}
	}
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		s := target
		if o.Shape.Rank() != in.Shape.Rank() {
			s = Replicate() // a scalar operand of clamp or select
		}
		var err error
		if ops[i], err = p.operand(in, i, s); err != nil {
			return nil, Sharding{}, err
		}
	}
	local, err := target.ShardShape(in.Shape)
	if err != nil {
		return nil, Sharding{}, err
	}
	return p.rewrite(in, local, ops), target, nil
}

// fallback runs in on whole values: every operand is all-gathered, the
// instruction runs as written, and visit takes this device's tile if the
// result is annotated as sharded.
func (p *partitioner) fallback(in *hlo.Instruction, _ Sharding, _ bool) (*hlo.Instruction, Sharding, error) {
	ops, err := p.replicatedOperands(in)
	if err != nil {
		return nil, Sharding{}, err
	}
	rep, err := Replicate().forShape(in.Shape)
	if err != nil {
		return nil, Sharding{}, err
	}
	if len(in.Operands) > 0 { // constants and iotas are made whole anyway
		p.fallbacks = append(p.fallbacks, p.qualified(in))
	}
	return p.rewrite(in, in.Shape.Clone(), ops), rep, nil
}

func allDims(rank int) []int {
	out := make([]int, rank)
	for i := range out {
		out[i] = i
	}
	return out
}

// tiledOperand is operand 0's sharding when it is tiled; ok is false when
// it is replicated (the instruction then runs on whole values locally).
func (p *partitioner) tiledOperand(in *hlo.Instruction) (Sharding, bool) {
	s := p.shard[in.Operands[0]]
	return s, s.Kind == Tiled && !s.IsReplicated()
}

// mapped runs a one-operand instruction on its operand's shard, whose
// tiles land on the result dimensions given by to (see remap).
func (p *partitioner) mapped(in *hlo.Instruction, to []int) (*hlo.Instruction, Sharding, error) {
	s, _ := p.tiledOperand(in)
	out, err := s.remap(in.Shape.Rank(), to)
	if err != nil {
		return nil, Sharding{}, err
	}
	local, err := out.ShardShape(in.Shape)
	if err != nil {
		return nil, Sharding{}, err
	}
	return p.rewrite(in, local, []*hlo.Instruction{p.local[in.Operands[0]]}), out, nil
}

// whole runs a one-operand instruction on a replicated operand as is.
func (p *partitioner) whole(in *hlo.Instruction) (*hlo.Instruction, Sharding, error) {
	rep, err := Replicate().forShape(in.Shape)
	if err != nil {
		return nil, Sharding{}, err
	}
	return p.rewrite(in, in.Shape.Clone(), []*hlo.Instruction{p.local[in.Operands[0]]}), rep, nil
}

// transpose moves tiles with their dimensions.
func (p *partitioner) transpose(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	if _, ok := p.tiledOperand(in); !ok {
		return p.whole(in)
	}
	to := make([]int, len(in.Dimensions()))
	for i, src := range in.Dimensions() {
		to[src] = i
	}
	return p.mapped(in, to)
}

// broadcast keeps the operand's tiles on the dimensions they map to; the
// new dimensions are whole.
func (p *partitioner) broadcast(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	if _, ok := p.tiledOperand(in); !ok {
		return p.whole(in)
	}
	to := make([]int, len(in.Dimensions()))
	for i, d := range in.Dimensions() {
		to[i] = int(d)
	}
	return p.mapped(in, to)
}

// reshape keeps the tiling when each tiled operand dimension has a result
// dimension starting at the same linear stride (same product of the
// dimensions before it) and both sizes divide by the tile count: then a
// tile is the same run of elements in both shapes. An unevenly tiled
// dimension needs a result dimension of its own size at that stride
// (the reshape leaves it alone, padding included). Otherwise it runs on
// whole values.
func (p *partitioner) reshape(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	s, ok := p.tiledOperand(in)
	if !ok {
		return p.whole(in)
	}
	src, dst := in.Operands[0].Shape.Dims, in.Shape.Dims
	to := make([]int, len(src))
	for i, k := range s.Tiles {
		to[i] = -1
		if k == 1 {
			continue
		}
		for j := range dst {
			even := dst[j]%k == 0 && src[i]%k == 0
			if prod(src[:i]) == prod(dst[:j]) && (even || dst[j] == src[i]) {
				to[i] = j
				break
			}
		}
		if to[i] < 0 {
			return p.fallback(in, want, annotated)
		}
	}
	out, err := s.remap(in.Shape.Rank(), to)
	if err != nil || !sameCount(s, in.Operands[0].Shape, out, in.Shape) {
		return p.fallback(in, want, annotated)
	}
	return p.mapped(in, to)
}

// sameCount reports whether the shards of a and b (placed by sa and sb)
// hold as many elements, as a local reshape between them needs.
func sameCount(sa Sharding, a hlo.Shape, sb Sharding, b hlo.Shape) bool {
	la, errA := sa.ShardShape(a)
	lb, errB := sb.ShardShape(b)
	return errA == nil && errB == nil && prod(la.Dims) == prod(lb.Dims)
}
