package spmd

import (
	"fmt"
	"slices"

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
	// Fallbacks names the instructions that ran on whole (all-gathered)
	// values because no rule partitions them: entry instructions by
	// name, those of called computations as computation/instruction.
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
	s := newSession(out)
	first := s.nextChannel
	if err := s.run(); err != nil {
		return nil, Stats{}, fmt.Errorf("spmd: module %s: %w", m.Name, err)
	}
	return out, Stats{Fallbacks: s.fallbacks, Collectives: countChannels(out, first)}, nil
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

// countChannels counts the instructions of m with a channel id from
// first on: the collectives the partitioner added and kept.
func countChannels(m *hlo.Module, first int64) int {
	n := 0
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if id, ok := in.Int("channel_id"); ok && id >= first {
				n++
			}
		}
	}
	return n
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

// session is what partitioning one module shares across its
// computations: names, channel ids, the adders, the fallbacks, and the
// partitioned copies of called computations.
type session struct {
	mod   *hlo.Module
	names *hlo.NameSet
	n     int64 // partitions
	// nextChannel keeps new collectives' channel ids unique in the module.
	nextChannel int64
	adders      map[hlo.DType]*hlo.Computation
	// fallbacks names the instructions run on whole values.
	fallbacks []string
	// copies holds the partitioned copies of called computations by
	// source and placement (callKey); sources lists the computations
	// copied, to drop or rename once every caller is partitioned.
	copies  map[string]copied
	sources []*hlo.Computation
	// original lists the module's computations before partitioning.
	original []*hlo.Computation
	// probing counts the trial partitions under way (loopState): their
	// copies are thrown away, so they register nothing.
	probing int
	probed  map[string]Sharding
}

// partitioner rewrites one computation of the module (a clone the
// session owns) instruction by instruction, in definition order, into a
// new computation.
type partitioner struct {
	*session
	src  *hlo.Computation // the global computation
	comp *hlo.Computation // the SPMD computation being built
	// params places the parameters of a called computation (its caller
	// decides); nil for the entry, whose annotations decide.
	params []Sharding
	// fresh gives the copy's instructions new names (src was copied
	// before under its own).
	fresh bool
	// local is each source instruction's value on a device; shard says
	// how that value is placed.
	local   map[*hlo.Instruction]*hlo.Instruction
	shard   map[*hlo.Instruction]Sharding
	pid     *hlo.Instruction
	offsets map[string]*hlo.Instruction
}

func newSession(m *hlo.Module) *session {
	s := &session{mod: m, names: hlo.NewNameSet(m), n: m.NumPartitions,
		adders: map[hlo.DType]*hlo.Computation{}, copies: map[string]copied{}, probed: map[string]Sharding{}, original: slices.Clone(m.Computations)}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if id, ok := in.Int("channel_id"); ok && id >= s.nextChannel {
				s.nextChannel = id + 1
			}
		}
	}
	s.nextChannel = max(s.nextChannel, 1)
	return s
}

// partitioner starts the SPMD copy of src, its parameters placed by
// params (nil for the entry). The first copy of a computation keeps its
// names; src, which may still be called whole (by a fallback), takes new
// ones.
func (s *session) partitioner(src *hlo.Computation, params []Sharding) *partitioner {
	p := &partitioner{session: s, src: src, params: params,
		local: map[*hlo.Instruction]*hlo.Instruction{}, shard: map[*hlo.Instruction]Sharding{},
		offsets: map[string]*hlo.Instruction{}}
	p.fresh = s.probing > 0 || slices.Contains(s.sources, src)
	name := src.Name
	if p.fresh {
		name = s.names.Unique(src.Name)
	} else {
		s.sources = append(s.sources, src)
		src.Name = s.names.Unique(src.Name)
	}
	p.comp = &hlo.Computation{Name: name, ExecutionThread: src.ExecutionThread,
		Params: make([]*hlo.Instruction, len(src.Params)), Parent: s.mod}
	return p
}

// run partitions every entry instruction and swaps the new entry in.
func (s *session) run() error {
	p := s.partitioner(s.mod.Entry, nil)
	p.comp.IsEntry = true
	if err := p.visitAll(); err != nil {
		return err
	}
	if _, err := p.finish(nil); err != nil {
		return err
	}
	for i, c := range s.mod.Computations {
		if c == p.src {
			s.mod.Computations[i] = p.comp
		}
	}
	s.mod.Entry = p.comp
	s.tidy()
	if s.mod.EntryLayout != nil {
		s.mod.EntryLayout = s.mod.ComputeEntryLayout()
	}
	return nil
}

// visitAll partitions every instruction of src in definition order.
func (p *partitioner) visitAll() error {
	for _, in := range p.src.Instructions {
		if err := p.visit(in); err != nil {
			if p.src.IsEntry {
				return fmt.Errorf("instruction %s: %w", in.Name, err)
			}
			return fmt.Errorf("computation %s, instruction %s: %w", p.comp.Name, in.Name, err)
		}
	}
	return nil
}

// finish reshards the root to root (when given), drops dead values and
// orders the copy; it returns the root's placement.
func (p *partitioner) finish(root *Sharding) (Sharding, error) {
	x, have := p.local[p.src.Root], p.shard[p.src.Root]
	if root != nil {
		var err error
		if x, err = p.reshard(x, p.src.Root.Shape, have, *root); err != nil {
			return Sharding{}, fmt.Errorf("computation %s, root: %w", p.comp.Name, err)
		}
		have = *root
	}
	if p.src.IsEntry {
		x.SetAttr("sharding", hlo.Raw(have.String()))
	}
	p.comp.Root = x
	p.removeDead()
	return have, p.comp.SortTopologically()
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
// annotation; in the entry, replicated for unannotated parameters and the
// root (the caller gets whole values unless told otherwise); in a called
// computation, the parameters' placement its caller chose.
func (p *partitioner) wanted(in *hlo.Instruction) (Sharding, bool, error) {
	s, ok, err := Of(in)
	if err != nil {
		return Sharding{}, false, err
	}
	if in.Opcode == hlo.OpParameter && p.params != nil {
		if in.ParamNumber < 0 || int(in.ParamNumber) >= len(p.params) {
			return Sharding{}, false, fmt.Errorf("parameter number %d out of range", in.ParamNumber)
		}
		return p.params[in.ParamNumber], true, nil
	}
	if !ok && p.src.IsEntry && (in.Opcode == hlo.OpParameter || in == p.src.Root) {
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

// controlHandlers partition called computations, which visits their
// instructions through rule: a table of its own, filled at init, breaks
// the initialization cycle.
var controlHandlers map[hlo.Opcode]handler

func init() {
	controlHandlers = map[hlo.Opcode]handler{
		hlo.OpWhile:       (*partitioner).while,
		hlo.OpCall:        (*partitioner).call,
		hlo.OpConditional: (*partitioner).conditional,
	}
}

func (p *partitioner) rule(in *hlo.Instruction) handler {
	if h, ok := handlers[in.Opcode]; ok {
		return h
	}
	if h, ok := controlHandlers[in.Opcode]; ok {
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
