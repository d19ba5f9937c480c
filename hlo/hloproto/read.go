package hloproto

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/axle-ml/axle/hlo"
	"google.golang.org/protobuf/proto"
)

// Read decodes a module file: HloModuleProto bytes, or the HloProto that
// wraps one (what --xla_dump_hlo_as_proto writes as .hlo.pb, with the buffer
// assignment beside the module), either of them gzipped (.hlo.pb.gz). A
// malformed file is an error, never a panic.
func Read(data []byte) (*hlo.Module, error) {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		var err error
		if data, err = gunzip(data); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
	}
	p := &HloModuleProto{}
	err := proto.Unmarshal(data, p)
	if err != nil || !isModule(p) {
		// The two messages share field 1's wire type; the one whose
		// entry computation is among its computations is the module.
		if wrapped := (&HloProto{}); proto.Unmarshal(data, wrapped) == nil && isModule(wrapped.HloModule) {
			return ToModule(wrapped.HloModule)
		}
	}
	if err != nil {
		if off, msg, ok := wireError(data, p.ProtoReflect().Descriptor()); ok {
			return nil, fmt.Errorf("HloModuleProto: byte %d: %s", off, msg)
		}
		return nil, fmt.Errorf("HloModuleProto: %w", err)
	}
	return ToModule(p)
}

// maxUnzipped bounds a gzipped file's contents, so that a small hostile
// file cannot claim all memory.
const maxUnzipped = 1 << 32

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxUnzipped+1))
	if err == nil && len(out) > maxUnzipped {
		err = fmt.Errorf("more than %d bytes unzipped", int64(maxUnzipped))
	}
	return out, err
}

// isModule reports whether p names an entry computation it holds.
func isModule(p *HloModuleProto) bool {
	if p == nil {
		return false
	}
	for _, c := range p.Computations {
		if c.Id == p.EntryComputationId && c.Name == p.EntryComputationName {
			return true
		}
	}
	return false
}

// reader resolves ids while converting a module proto.
type reader struct {
	comps map[int64]*hlo.Computation
}

// ToModule converts an HloModuleProto to a module. Errors name the
// computation, the instruction and the field that is wrong.
func ToModule(p *HloModuleProto) (*hlo.Module, error) {
	if p == nil {
		return nil, fmt.Errorf("HloModuleProto: nil")
	}
	m := hlo.NewModule(p.Name)
	r := &reader{comps: map[int64]*hlo.Computation{}}
	for i, cp := range p.Computations {
		if _, dup := r.comps[cp.Id]; dup {
			return nil, fmt.Errorf("computation %s: id %d is also computation %s's", cp.Name, cp.Id, r.comps[cp.Id].Name)
		}
		if cp.Name == "" {
			return nil, fmt.Errorf("computations[%d] has no name", i)
		}
		c := m.AddComputation(&hlo.Computation{Name: cp.Name, ExecutionThread: cp.ExecutionThread})
		r.comps[cp.Id] = c
	}
	for i, cp := range p.Computations {
		if err := r.computation(cp, m.Computations[i]); err != nil {
			return nil, fmt.Errorf("computation %s: %w", cp.Name, err)
		}
	}
	m.Entry = r.comps[p.EntryComputationId]
	if m.Entry == nil {
		m.Entry = m.Computation(p.EntryComputationName)
	}
	if m.Entry == nil {
		return nil, fmt.Errorf("entry_computation_id %d names no computation", p.EntryComputationId)
	}
	m.Entry.IsEntry = true
	return m, moduleHeader(p, m)
}

// moduleHeader sets what the text's header says: from Axle's extension when
// Axle wrote the proto, from XLA's fields otherwise.
func moduleHeader(p *HloModuleProto, m *hlo.Module) error {
	ext := &AxleModule{}
	has, err := getExt(p, ext)
	if err != nil {
		return fmt.Errorf("module %s: %w", p.Name, err)
	}
	m.IsScheduled = p.Schedule != nil
	hasLayout := p.HostProgramShape != nil
	if has {
		m.ReplicaCount, m.NumPartitions, m.StackFrameIndex = ext.ReplicaCount, ext.NumPartitions, ext.StackFrameIndex
		m.IsScheduled, hasLayout = ext.IsScheduled, ext.HasEntryLayout
		for _, a := range ext.Attrs {
			v, err := valueFromProto(a.Verbatim, "module attribute "+a.Name)
			if err != nil {
				return err
			}
			m.Attrs = append(m.Attrs, hlo.Attr{Name: a.Name, Value: v})
		}
	}
	if !has {
		moduleAliasesFromProto(p, m)
	}
	switch {
	case hasLayout && p.HostProgramShape != nil:
		ps, err := programShapeFromProto(p.HostProgramShape)
		if err != nil {
			return fmt.Errorf("host_program_shape: %w", err)
		}
		m.EntryLayout = ps
	case !has:
		m.EntryLayout = m.ComputeEntryLayout()
	}
	return nil
}

func programShapeFromProto(p *ProgramShapeProto) (*hlo.ProgramShape, error) {
	ps := &hlo.ProgramShape{ParamNames: append([]string{}, p.ParameterNames...)}
	if len(p.ParameterNames) == 0 {
		ps.ParamNames = nil
	}
	for i, sp := range p.Parameters {
		s, err := shapeFromProto(sp, fmt.Sprintf("parameters[%d]", i))
		if err != nil {
			return nil, err
		}
		ps.Params = append(ps.Params, s)
	}
	r, err := shapeFromProto(p.Result, "result")
	ps.Result = r
	return ps, err
}

func (r *reader) computation(cp *HloComputationProto, c *hlo.Computation) error {
	byID := map[int64]*hlo.Instruction{}
	for _, ip := range cp.Instructions {
		if prev, dup := byID[ip.Id]; dup {
			return fmt.Errorf("instruction %s: id %d is also instruction %s's", ip.Name, ip.Id, prev.Name)
		}
		in, err := newInstruction(ip)
		if err != nil {
			return err
		}
		byID[ip.Id] = c.AddInstruction(in)
	}
	defined := map[*hlo.Instruction]bool{}
	for i, ip := range cp.Instructions {
		in := c.Instructions[i]
		if err := r.links(ip, in, byID, defined); err != nil {
			return fmt.Errorf("instruction %s: %w", in.Name, err)
		}
		defined[in] = true
		if err := r.attrs(ip, in); err != nil {
			return fmt.Errorf("instruction %s: %w", in.Name, err)
		}
		if in.Opcode == hlo.OpParameter {
			n := in.ParamNumber
			if n < 0 || n >= int64(len(cp.Instructions)) {
				return fmt.Errorf("instruction %s: parameter_number %d out of range", in.Name, n)
			}
			for int64(len(c.Params)) <= n {
				c.Params = append(c.Params, nil)
			}
			if c.Params[n] != nil {
				return fmt.Errorf("instruction %s: parameter_number %d is also %s's", in.Name, n, c.Params[n].Name)
			}
			c.Params[n] = in
		}
	}
	// Printers and passes take Params to be parameters 0..n-1 with no gap.
	for i, prm := range c.Params {
		if prm == nil {
			return fmt.Errorf("has parameter %d but no parameter_number %d", len(c.Params)-1, i)
		}
	}
	c.Root = byID[cp.RootId]
	if c.Root == nil && len(c.Instructions) > 0 {
		return fmt.Errorf("root_id %d names no instruction of the computation", cp.RootId)
	}
	return nil
}

func newInstruction(ip *P) (*hlo.Instruction, error) {
	op, ok := hlo.OpcodeByName(ip.Opcode)
	if !ok {
		return nil, fmt.Errorf("instruction %s: opcode %q is not one Axle knows", ip.Name, ip.Opcode)
	}
	s, err := shapeFromProto(ip.Shape, "instruction "+ip.Name+": shape")
	if err != nil {
		return nil, err
	}
	in := &hlo.Instruction{Name: ip.Name, Opcode: op, Shape: s}
	switch op {
	case hlo.OpParameter:
		in.ParamNumber = ip.ParameterNumber
	case hlo.OpConstant:
		if ip.Literal == nil {
			return nil, fmt.Errorf("instruction %s: constant has no literal", ip.Name)
		}
		if in.Literal, err = literalFromProto(ip.Literal, "instruction "+ip.Name); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// links resolves operand_ids and control_predecessor_ids, which must name
// instructions of the same computation.
func (r *reader) links(ip *P, in *hlo.Instruction, byID map[int64]*hlo.Instruction, defined map[*hlo.Instruction]bool) error {
	for i, id := range ip.OperandIds {
		o := byID[id]
		if o == nil {
			return fmt.Errorf("operand_ids[%d] = %d names no instruction of the computation", i, id)
		}
		if !defined[o] {
			// hlo.proto: operands appear before their users. A cycle
			// would otherwise hang every walk over the graph.
			return fmt.Errorf("operand_ids[%d] = %d names %s, which comes after it", i, id, o.Name)
		}
		in.Operands = append(in.Operands, o)
	}
	for i, id := range ip.ControlPredecessorIds {
		o := byID[id]
		if o == nil {
			return fmt.Errorf("control_predecessor_ids[%d] = %d names no instruction of the computation", i, id)
		}
		in.ControlPredecessors = append(in.ControlPredecessors, o)
	}
	return nil
}

// called resolves called_computation_ids.
func (r *reader) called(ip *P) ([]*hlo.Computation, error) {
	var out []*hlo.Computation
	for i, id := range ip.CalledComputationIds {
		c := r.comps[id]
		if c == nil {
			return nil, fmt.Errorf("called_computation_ids[%d] = %d names no computation", i, id)
		}
		out = append(out, c)
	}
	return out, nil
}
