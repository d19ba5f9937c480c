package spmd

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Custom-call targets JAX and PyTorch/XLA write for the partitioner.
const (
	targetSharding    = "Sharding"
	targetFullToShard = "SPMDFullToShardShape"
	targetShardToFull = "SPMDShardToFullShape"
)

// Partition rewrites a module written on global shapes with sharding
// annotations into one SPMD program that every device runs on its own
// shards (reading partition-id where devices differ). It returns m itself
// when num_partitions is 1 or nothing is annotated; otherwise a new module
// (m is not modified) whose entry parameters and results are per-device
// shards, each keeping its sharding attribute so a caller can split
// arguments and reassemble results.
func Partition(m *hlo.Module) (*hlo.Module, error) {
	out, _, err := PartitionWithStats(m)
	return out, err
}

// Stats says how a module was partitioned.
type Stats struct {
	// Fallbacks names the entry instructions that ran on whole
	// (all-gathered) values because no rule partitions them.
	Fallbacks []string
	// Collectives counts the collectives the partitioner added.
	Collectives int
}

// PartitionWithStats is Partition, also saying what took the fallback.
func PartitionWithStats(m *hlo.Module) (*hlo.Module, Stats, error) {
	if m == nil || m.Entry == nil {
		return nil, Stats{}, fmt.Errorf("spmd: module without an entry computation")
	}
	if m.NumPartitions <= 1 || !annotated(m.Entry) {
		return m, Stats{}, nil
	}
	if m.ReplicaCount > 1 {
		return nil, Stats{}, fmt.Errorf("spmd: module %s has %d replicas; the partitioner handles partitions only", m.Name, m.ReplicaCount)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, Stats{}, fmt.Errorf("spmd: the module to partition does not verify: %w", err)
	}
	out := m.Clone()
	p := newPartitioner(out)
	first := p.nextChannel
	if err := p.run(); err != nil {
		return nil, Stats{}, fmt.Errorf("spmd: module %s: %w", m.Name, err)
	}
	return out, Stats{Fallbacks: p.fallbacks, Collectives: int(p.nextChannel - first)}, nil
}

// NeedsPartitioning reports whether m still has to go through Partition.
// The rule: num_partitions > 1, and either
//   - the entry holds @Sharding, @SPMDFullToShardShape or
//     @SPMDShardToFullShape custom-calls (Partition removes them all), or
//   - an entry instruction carries a tiled sharding while no computation
//     communicates (no collective, partition-id or replica-id): a
//     partitioned module whose shards depend on each other has to
//     communicate.
//
// The rule cannot tell a partitioned module whose devices never exchange
// data (an elementwise program on tiled parameters, say) from one still
// on global shapes: shapes alone do not say which they are. Such
// partitioned dumps must not be given to Partition.
func NeedsPartitioning(m *hlo.Module) bool {
	if m == nil || m.Entry == nil || m.NumPartitions <= 1 {
		return false
	}
	tiled := false
	for _, in := range m.Entry.Instructions {
		if isSPMDCall(in) {
			return true
		}
		if s, ok, err := Of(in); ok && err == nil && hasTiles(s) {
			tiled = true
		}
	}
	return tiled && !communicates(m)
}

func hasTiles(s Sharding) bool {
	if s.Kind == TupleKind {
		for _, e := range s.Elements {
			if hasTiles(e) {
				return true
			}
		}
		return false
	}
	return s.Kind == Tiled && !s.IsReplicated()
}

func communicates(m *hlo.Module) bool {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode.Has(hlo.Collective) || in.Opcode == hlo.OpPartitionID || in.Opcode == hlo.OpReplicaID {
				return true
			}
		}
	}
	return false
}

func isSPMDCall(in *hlo.Instruction) bool {
	if in.Opcode != hlo.OpCustomCall {
		return false
	}
	t, _ := in.StringAttr("custom_call_target")
	return t == targetSharding || t == targetFullToShard || t == targetShardToFull
}

// annotated reports whether any entry instruction has a sharding or is a
// partitioner custom-call.
func annotated(c *hlo.Computation) bool {
	for _, in := range c.Instructions {
		if in.HasAttr("sharding") || isSPMDCall(in) {
			return true
		}
	}
	return false
}

// partitioner rewrites the entry computation of mod (a clone it owns)
// instruction by instruction, in definition order.
type partitioner struct {
	mod   *hlo.Module
	src   *hlo.Computation // the global entry
	comp  *hlo.Computation // the SPMD entry being built
	names *hlo.NameSet
	n     int64 // partitions
	// local is each source instruction's value on a device; shard says
	// how that value is placed.
	local map[*hlo.Instruction]*hlo.Instruction
	shard map[*hlo.Instruction]Sharding
	// nextChannel keeps new collectives' channel ids unique in the module.
	nextChannel int64
	pid         *hlo.Instruction
	offsets     map[string]*hlo.Instruction
	adders      map[hlo.DType]*hlo.Computation
	// fallbacks names the instructions run on whole values.
	fallbacks []string
}

func newPartitioner(m *hlo.Module) *partitioner {
	p := &partitioner{
		mod: m, src: m.Entry, names: hlo.NewNameSet(m), n: m.NumPartitions,
		local: map[*hlo.Instruction]*hlo.Instruction{}, shard: map[*hlo.Instruction]Sharding{},
		offsets: map[string]*hlo.Instruction{}, adders: map[hlo.DType]*hlo.Computation{},
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if id, ok := in.Int("channel_id"); ok && id >= p.nextChannel {
				p.nextChannel = id + 1
			}
		}
	}
	p.nextChannel = max(p.nextChannel, 1)
	p.comp = &hlo.Computation{Name: p.src.Name, IsEntry: true, ExecutionThread: p.src.ExecutionThread,
		Params: make([]*hlo.Instruction, len(p.src.Params))}
	return p
}

// run partitions every entry instruction and swaps the new entry in.
func (p *partitioner) run() error {
	for _, in := range p.src.Instructions {
		if err := p.visit(in); err != nil {
			return fmt.Errorf("instruction %s: %w", in.Name, err)
		}
	}
	root := p.local[p.src.Root]
	root.SetAttr("sharding", hlo.Raw(p.shard[p.src.Root].String()))
	p.comp.Root = root
	p.removeDead()
	if err := p.comp.SortTopologically(); err != nil {
		return err
	}
	for i, c := range p.mod.Computations {
		if c == p.src {
			p.mod.Computations[i] = p.comp
		}
	}
	p.comp.Parent = p.mod
	p.mod.Entry = p.comp
	if p.mod.EntryLayout != nil {
		p.mod.EntryLayout = p.mod.ComputeEntryLayout()
	}
	return nil
}

// visit partitions one instruction: its rule gives a local value and the
// sharding it has; an annotation (or the root's default, replicated)
// then reshards it to the sharding asked for.
func (p *partitioner) visit(in *hlo.Instruction) error {
	want, isAnnotated, err := p.wanted(in)
	if err != nil {
		return err
	}
	var local *hlo.Instruction
	var have Sharding
	if p.isManual(in, want) {
		local, have, err = p.manual(in)
	} else {
		local, have, err = p.rule(in)(p, in, want, isAnnotated)
	}
	if err != nil {
		return err
	}
	if isAnnotated && !have.Equal(want) {
		if local, err = p.reshard(local, in.Shape, have, want); err != nil {
			return err
		}
		have = want
	}
	p.local[in], p.shard[in] = local, have
	return nil
}

// wanted is the sharding an instruction is asked to have: its
// annotation; replicated for unannotated parameters and the root (the
// caller gets whole values unless told otherwise).
func (p *partitioner) wanted(in *hlo.Instruction) (Sharding, bool, error) {
	s, ok, err := Of(in)
	if err != nil {
		return Sharding{}, false, err
	}
	if !ok && (in.Opcode == hlo.OpParameter || in == p.src.Root) {
		s, ok = Replicate(), true
	}
	if !ok {
		return Sharding{}, false, nil
	}
	if s.Kind == Maximal {
		s = Replicate() // every device computes it: see Maximal
	}
	if err := s.checkDevices(p.n); err != nil {
		return Sharding{}, false, err
	}
	s, err = s.forShape(in.Shape)
	return s, true, err
}

// handler partitions one instruction given its operands' local values
// (p.local) and shardings (p.shard), returning its local value and the
// sharding that value has. want is the annotation if annotated.
type handler func(p *partitioner, in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error)

var handlers = map[hlo.Opcode]handler{
	hlo.OpParameter:          (*partitioner).parameter,
	hlo.OpTuple:              (*partitioner).tuple,
	hlo.OpGetTupleElement:    (*partitioner).getTupleElement,
	hlo.OpCustomCall:         (*partitioner).customCall,
	hlo.OpDot:                (*partitioner).dot,
	hlo.OpReduce:             (*partitioner).reduce,
	hlo.OpTranspose:          (*partitioner).transpose,
	hlo.OpBroadcast:          (*partitioner).broadcast,
	hlo.OpReshape:            (*partitioner).reshape,
	hlo.OpConvolution:        (*partitioner).convolution,
	hlo.OpDynamicSlice:       (*partitioner).dynamicSlice,
	hlo.OpDynamicUpdateSlice: (*partitioner).dynamicUpdateSlice,
}

func (p *partitioner) rule(in *hlo.Instruction) handler {
	if h, ok := handlers[in.Opcode]; ok {
		return h
	}
	if in.Opcode.IsElementwise() && in.Shape.IsArray() && len(in.Operands) > 0 {
		return (*partitioner).elementwise
	}
	return (*partitioner).fallback
}

// removeDead drops the values resharding left unused (a whole value whose
// only user took its tile), keeping parameters and side effects.
func (p *partitioner) removeDead() {
	live := map[*hlo.Instruction]bool{}
	var mark func(in *hlo.Instruction)
	mark = func(in *hlo.Instruction) {
		if live[in] {
			return
		}
		live[in] = true
		for _, o := range in.Operands {
			mark(o)
		}
		for _, o := range in.ControlPredecessors {
			mark(o)
		}
	}
	mark(p.comp.Root)
	for _, in := range p.comp.Instructions {
		if in.Opcode == hlo.OpParameter || in.Opcode.Has(hlo.SideEffecting) {
			mark(in)
		}
	}
	dead := map[*hlo.Instruction]bool{}
	for _, in := range p.comp.Instructions {
		if !live[in] {
			dead[in] = true
		}
	}
	p.comp.RemoveInstructions(dead)
}
