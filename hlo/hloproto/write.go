package hloproto

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"google.golang.org/protobuf/proto"
)

// Write encodes a module as HloModuleProto bytes.
func Write(m *hlo.Module) ([]byte, error) {
	p, err := FromModule(m)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(p)
}

// writer numbers computations and instructions: ids are unique in the
// module, as XLA requires, computations from 1 and instructions from 1.
type writer struct {
	compID map[*hlo.Computation]int64
	instID map[*hlo.Instruction]int64
}

// FromModule converts a module to XLA's HloModuleProto. Attributes go to the
// fields XLA's HloInstruction::ToProto fills; what those fields cannot say
// exactly (attribute order and presence, sharding, unknown attributes, the
// header's verbatim attributes) rides in Axle's extension, which XLA ignores.
func FromModule(m *hlo.Module) (*HloModuleProto, error) {
	w := &writer{compID: map[*hlo.Computation]int64{}, instID: map[*hlo.Instruction]int64{}}
	next := int64(1)
	for i, c := range m.Computations {
		w.compID[c] = int64(i + 1)
		for _, in := range c.Instructions {
			w.instID[in] = next
			next++
		}
	}
	p := &HloModuleProto{Name: m.Name}
	if m.Entry != nil {
		p.EntryComputationName = m.Entry.Name
		p.EntryComputationId = w.compID[m.Entry]
	}
	fusions := fusionComputations(m)
	for _, c := range m.Computations {
		cp, err := w.computation(c)
		if err != nil {
			return nil, err
		}
		cp.IsFusionComputation = fusions[c]
		p.Computations = append(p.Computations, cp)
	}
	if m.IsScheduled {
		p.Schedule = &HloScheduleProto{Sequences: map[int64]*HloScheduleProto_InstructionSequence{}}
		for _, c := range m.Computations {
			if fusions[c] {
				continue
			}
			seq := &HloScheduleProto_InstructionSequence{}
			for _, in := range c.Instructions {
				seq.InstructionIds = append(seq.InstructionIds, w.instID[in])
			}
			p.Schedule.Sequences[w.compID[c]] = seq
		}
	}
	// XLA's HloModule::CreateFromProto wants host_program_shape; a module
	// without an entry layout gets its entry's signature (Axle's extension
	// says there was none).
	if layout := m.EntryLayout; layout != nil || m.Entry != nil {
		if layout == nil {
			layout = m.ComputeEntryLayout()
		}
		ps, err := programShapeToProto(layout)
		if err != nil {
			return nil, fmt.Errorf("module %s: entry_computation_layout: %w", m.Name, err)
		}
		p.HostProgramShape = ps
	}
	moduleAliasesToProto(m, p)
	ext := &AxleModule{ReplicaCount: m.ReplicaCount, NumPartitions: m.NumPartitions, StackFrameIndex: m.StackFrameIndex,
		HasEntryLayout: m.EntryLayout != nil, IsScheduled: m.IsScheduled}
	for _, a := range m.Attrs {
		v, err := valueToProto(a.Value)
		if err != nil {
			return nil, fmt.Errorf("module %s: attribute %s: %w", m.Name, a.Name, err)
		}
		ext.Attrs = append(ext.Attrs, &AxleAttr{Name: a.Name, Verbatim: v})
	}
	return p, setExt(p, ext)
}

// fusionComputations are those a fusion calls: XLA marks them and leaves
// them out of the schedule.
func fusionComputations(m *hlo.Module) map[*hlo.Computation]bool {
	out := map[*hlo.Computation]bool{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpFusion {
				for _, cc := range in.CalledComputations() {
					out[cc] = true
				}
			}
		}
	}
	return out
}

func programShapeToProto(ps *hlo.ProgramShape) (*ProgramShapeProto, error) {
	p := &ProgramShapeProto{ParameterNames: slices.Clone(ps.ParamNames)}
	for _, s := range ps.Params {
		sp, err := shapeToProto(s)
		if err != nil {
			return nil, err
		}
		p.Parameters = append(p.Parameters, sp)
	}
	r, err := shapeToProto(ps.Result)
	p.Result = r
	return p, err
}

func (w *writer) computation(c *hlo.Computation) (*HloComputationProto, error) {
	cp := &HloComputationProto{Name: c.Name, Id: w.compID[c], ExecutionThread: c.ExecutionThread}
	if c.Root != nil {
		cp.RootId = w.instID[c.Root]
	}
	for _, in := range c.Instructions {
		ip, err := w.instruction(in)
		if err != nil {
			return nil, fmt.Errorf("computation %s: %w", c.Name, err)
		}
		cp.Instructions = append(cp.Instructions, ip)
	}
	ps := &hlo.ProgramShape{Result: c.ResultShape()}
	for _, p := range c.Params {
		if p != nil {
			ps.Params = append(ps.Params, p.Shape)
			ps.ParamNames = append(ps.ParamNames, p.Name)
		}
	}
	if c.Root != nil {
		sp, err := programShapeToProto(ps)
		if err != nil {
			return nil, fmt.Errorf("computation %s: %w", c.Name, err)
		}
		cp.ProgramShape = sp
	}
	return cp, nil
}

func (w *writer) instruction(in *hlo.Instruction) (*P, error) {
	sp, err := shapeToProto(in.Shape)
	if err != nil {
		return nil, fmt.Errorf("instruction %s: shape: %w", in.Name, err)
	}
	p := &P{Name: in.Name, Opcode: in.Opcode.String(), Shape: sp, Id: w.instID[in]}
	for i, o := range in.Operands {
		id, ok := w.instID[o]
		if !ok {
			return nil, fmt.Errorf("instruction %s: operand %d (%s) is in no computation of the module", in.Name, i, o.Name)
		}
		p.OperandIds = append(p.OperandIds, id)
	}
	for _, o := range in.ControlPredecessors {
		p.ControlPredecessorIds = append(p.ControlPredecessorIds, w.instID[o])
	}
	if in.Opcode == hlo.OpParameter {
		p.ParameterNumber = in.ParamNumber
	}
	if in.Opcode == hlo.OpConstant && in.Literal != nil {
		if p.Literal, err = literalToProto(in.Literal); err != nil {
			return nil, fmt.Errorf("instruction %s: literal: %w", in.Name, err)
		}
	}
	ext, err := w.attrs(in, p)
	if err != nil {
		return nil, fmt.Errorf("instruction %s: %w", in.Name, err)
	}
	return p, setExt(p, ext)
}

// attrs fills p's attribute fields and returns the manifest: every
// attribute in order, with a verbatim value where XLA's fields do not give
// back exactly the value written.
func (w *writer) attrs(in *hlo.Instruction, p *P) (*AxleInstruction, error) {
	ext := &AxleInstruction{}
	calls := map[string][]*hlo.Computation{}
	var callNames []string
	for _, a := range in.Attrs {
		switch c := a.Value.(type) {
		case *hlo.Computation:
			calls[a.Name] = []*hlo.Computation{c}
			callNames = append(callNames, a.Name)
			ext.Attrs = append(ext.Attrs, &AxleAttr{Name: a.Name, Verbatim: &AxleValue{V: &AxleValue_Computations{Computations: &AxleComputations{Count: 1}}}})
			continue
		case []*hlo.Computation:
			calls[a.Name] = c
			callNames = append(callNames, a.Name)
			ext.Attrs = append(ext.Attrs, &AxleAttr{Name: a.Name, Verbatim: &AxleValue{V: &AxleValue_Computations{Computations: &AxleComputations{Count: int64(len(c)), List: true}}}})
			continue
		}
		attr := &AxleAttr{Name: a.Name}
		if cd, ok := codecs[a.Name]; !ok || !cd.enc(p, in.Opcode, a.Value) {
			v, err := valueToProto(a.Value)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
			}
			attr.Verbatim = v
		}
		ext.Attrs = append(ext.Attrs, attr)
	}
	for _, name := range xlaCallOrder(in.Opcode, callNames) {
		for _, c := range calls[name] {
			p.CalledComputationIds = append(p.CalledComputationIds, w.compID[c])
		}
	}
	// Where XLA's fields do not read back as written (two attributes
	// sharing a field, a float32 epsilon, a reordered map), the verbatim
	// value is what Axle reads.
	for i, attr := range ext.Attrs {
		if attr.Verbatim != nil {
			continue
		}
		v := in.Attrs[i].Value
		if got, _ := codecs[attr.Name].dec(p, in.Opcode); !sameValue(got, v) {
			vp, err := valueToProto(v)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: %w", attr.Name, err)
			}
			attr.Verbatim = vp
		}
	}
	return ext, nil
}

// xlaCallOrder lists the computation attributes in the order of XLA's
// called_computations: a while's body comes before its condition.
func xlaCallOrder(op hlo.Opcode, names []string) []string {
	if op == hlo.OpWhile {
		out := slices.Clone(names)
		slices.SortStableFunc(out, func(a, b string) int {
			rank := func(s string) int {
				if s == "body" {
					return 0
				}
				return 1
			}
			return rank(a) - rank(b)
		})
		return out
	}
	return names
}
