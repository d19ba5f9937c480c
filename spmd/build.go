package spmd

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// add appends a new instruction with an explicit shape to the SPMD entry.
func (p *partitioner) add(base string, op hlo.Opcode, shape hlo.Shape, operands []*hlo.Instruction, attrs ...hlo.Attr) *hlo.Instruction {
	in := &hlo.Instruction{Name: p.names.Unique(base), Opcode: op, Shape: shape, Operands: operands}
	for _, a := range attrs {
		in.SetAttr(a.Name, a.Value)
	}
	return p.comp.AddInstruction(in)
}

// rewrite copies a source instruction into the SPMD entry under its own
// name with new operands and shape. Annotations are dropped (the result
// is per-device); control predecessors follow their local values.
func (p *partitioner) rewrite(in *hlo.Instruction, shape hlo.Shape, operands []*hlo.Instruction) *hlo.Instruction {
	name := in.Name
	if p.fresh {
		name = p.names.Unique(in.Name)
	}
	c := &hlo.Instruction{Name: name, Opcode: in.Opcode, Shape: shape, Operands: operands,
		Literal: in.Literal, ParamNumber: in.ParamNumber}
	for _, a := range in.Attrs {
		if a.Name != "sharding" && a.Name != "control-predecessors" {
			c.Attrs = append(c.Attrs, a)
		}
	}
	for _, cp := range in.ControlPredecessors {
		if l := p.local[cp]; l != nil {
			c.ControlPredecessors = append(c.ControlPredecessors, l)
		}
	}
	return p.comp.AddInstruction(c)
}

// operand is the local value of operand i resharded to s.
func (p *partitioner) operand(in *hlo.Instruction, i int, s Sharding) (*hlo.Instruction, error) {
	o := in.Operands[i]
	return p.reshard(p.local[o], o.Shape, p.shard[o], s)
}

// replicatedOperands gathers every operand whole.
func (p *partitioner) replicatedOperands(in *hlo.Instruction) ([]*hlo.Instruction, error) {
	out := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		rep, err := Replicate().forShape(o.Shape)
		if err != nil {
			return nil, err
		}
		if out[i], err = p.operand(in, i, rep); err != nil {
			return nil, fmt.Errorf("operand %d: %w", i, err)
		}
	}
	return out, nil
}

func (p *partitioner) channel() hlo.Attr {
	p.nextChannel++
	return hlo.Attr{Name: "channel_id", Value: p.nextChannel - 1}
}

// collectiveAttrs are the attributes of a cross-partition collective over
// explicit groups of partition ids, as XLA's partitioner writes them.
func (p *partitioner) collectiveAttrs(groups [][]int64) []hlo.Attr {
	return []hlo.Attr{p.channel(), {Name: "replica_groups", Value: groups}, {Name: "use_global_device_ids", Value: true}}
}

// partitionID is this device's partition id (u32), made once.
func (p *partitioner) partitionID() *hlo.Instruction {
	if p.pid == nil {
		p.pid = p.add("partition-id", hlo.OpPartitionID, hlo.ScalarShape(hlo.U32), nil)
	}
	return p.pid
}

// fromTable is table[partition-id] as an s32 scalar: XLA's way of giving
// each device its own constant (a shard offset) in one program.
func (p *partitioner) fromTable(table []int32) (*hlo.Instruction, error) {
	key := fmt.Sprint(table)
	if v, ok := p.offsets[key]; ok {
		return v, nil
	}
	lit, err := hlo.LiteralFromSlice(table, int64(len(table)))
	if err != nil {
		return nil, err
	}
	c := p.add("offsets", hlo.OpConstant, lit.Shape().Clone(), nil)
	c.Literal = lit
	one := p.add("offset", hlo.OpDynamicSlice, hlo.ArrayShape(hlo.S32, 1), []*hlo.Instruction{c, p.partitionID()},
		hlo.Attr{Name: "dynamic_slice_sizes", Value: []int64{1}})
	v := p.add("offset", hlo.OpReshape, hlo.ScalarShape(hlo.S32), []*hlo.Instruction{one})
	p.offsets[key] = v
	return v, nil
}

// zero is the s32 constant 0.
func (p *partitioner) zero() *hlo.Instruction {
	if v, ok := p.offsets["zero"]; ok {
		return v
	}
	c := p.add("zero", hlo.OpConstant, hlo.ScalarShape(hlo.S32), nil)
	c.Literal = hlo.ScalarLiteral(int32(0))
	p.offsets["zero"] = c
	return c
}

// adder returns a scalar addition computation for t, added to the module
// once, for all-reduces of partial dot products.
func (p *partitioner) adder(t hlo.DType) *hlo.Computation {
	if c, ok := p.adders[t]; ok {
		return c
	}
	c := &hlo.Computation{Name: p.names.Unique("spmd_add_" + t.String())}
	s := hlo.ScalarShape(t)
	a := c.AddInstruction(&hlo.Instruction{Name: p.names.Unique("a"), Opcode: hlo.OpParameter, Shape: s})
	b := c.AddInstruction(&hlo.Instruction{Name: p.names.Unique("b"), Opcode: hlo.OpParameter, Shape: s, ParamNumber: 1})
	op := hlo.OpAdd
	if t == hlo.Pred {
		op = hlo.OpOr
	}
	c.Root = c.AddInstruction(&hlo.Instruction{Name: p.names.Unique("sum"), Opcode: op, Shape: s.Clone(), Operands: []*hlo.Instruction{a, b}})
	c.Params = []*hlo.Instruction{a, b}
	// Callees come before callers: put it first.
	p.mod.Computations = append([]*hlo.Computation{c}, p.mod.Computations...)
	c.Parent = p.mod
	p.adders[t] = c
	return c
}

// allReduce sums (with reducer) x over each group of partitions.
func (p *partitioner) allReduce(x *hlo.Instruction, groups [][]int64, reducer *hlo.Computation) *hlo.Instruction {
	attrs := append(p.collectiveAttrs(groups), hlo.Attr{Name: "to_apply", Value: reducer})
	return p.add(x.Name+".ar", hlo.OpAllReduce, x.Shape.Clone(), []*hlo.Instruction{x}, attrs...)
}
