package hlotext

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// PrintOptions choose between XLA's printed forms.
type PrintOptions struct {
	// Short is XLA's HloPrintOptions::ShortParsable(): no % prefixes, no
	// operand shapes, no computation signatures, no metadata,
	// backend_config or control-predecessors.
	Short bool
	// ElideLargeConstants prints constants of more than ten elements as
	// {...}, as XLA's ToString does unless print_large_constants is set.
	ElideLargeConstants bool
	// Canonical is XLA's HloPrintOptions::Canonical(): instructions named
	// tmp_0, tmp_1, ... in each computation, called computations printed
	// in place with their bodies, no metadata or backend_config. Two
	// modules that differ only in names print the same.
	Canonical bool
}

// CanonicalForm is XLA's canonical form (see PrintOptions.Canonical).
var CanonicalForm = PrintOptions{Short: true, Canonical: true}

// Default is XLA's default ToString form with large constants printed.
var Default = PrintOptions{}

// Short is XLA's short parsable form.
var Short = PrintOptions{Short: true}

// Print writes a module in HLO text.
func Print(m *hlo.Module, opts PrintOptions) string {
	pr := &printer{opts: opts, hidden: hiddenComputations(m)}
	pr.module(m)
	return pr.b.String()
}

// PrintInstruction writes one instruction as it appears in a computation
// (without indentation or ROOT).
func PrintInstruction(in *hlo.Instruction, opts PrintOptions) string {
	pr := &printer{opts: opts}
	if opts.Canonical {
		pr.top = true
		pr.canonicalInstruction(in)
		return pr.b.String()
	}
	pr.instruction(in)
	return pr.b.String()
}

// canonicalInstruction prints `shape opcode(operand shapes), attrs`.
func (pr *printer) canonicalInstruction(in *hlo.Instruction) {
	in.Shape.Append(&pr.b, true)
	pr.b.WriteByte(' ')
	pr.b.WriteString(in.Opcode.String())
	pr.b.WriteByte('(')
	pr.operands(in)
	pr.b.WriteByte(')')
	pr.attrs(in, nil)
}

// body prints a called computation in place: its instructions between
// braces, indented one step deeper than the line that calls it.
func (pr *printer) body(c *hlo.Computation) {
	saved, savedIndent, savedTop := pr.canon, pr.indent, pr.top
	pr.canon = canonicalNames(c)
	pr.top = false
	pr.b.WriteString("\n" + savedIndent + "{\n")
	pr.indent = savedIndent + "  "
	for _, in := range c.Instructions {
		pr.b.WriteString(pr.indent)
		if in == c.Root {
			pr.b.WriteString("ROOT ")
		}
		pr.instruction(in)
		pr.b.WriteByte('\n')
	}
	pr.b.WriteString(savedIndent + "}")
	pr.canon, pr.indent, pr.top = saved, savedIndent, savedTop
}

func canonicalNames(c *hlo.Computation) map[*hlo.Instruction]string {
	m := make(map[*hlo.Instruction]string, len(c.Instructions))
	for i, in := range c.Instructions {
		m[in] = "tmp_" + strconv.Itoa(i)
	}
	return m
}

type printer struct {
	b      strings.Builder
	opts   PrintOptions
	hidden map[*hlo.Computation]bool
	// canon holds the canonical names of the computation being printed.
	canon map[*hlo.Instruction]string
	// indent is the indentation of the line being printed (canonical
	// bodies nest).
	indent string
	// top is set while printing a lone instruction in canonical form,
	// whose operands are shown by shape only.
	top bool
}

// hiddenComputations are the computations that async ops print inline
// with XLA's syntax sugar, so they are not printed on their own.
func hiddenComputations(m *hlo.Module) map[*hlo.Computation]bool {
	sugared := map[*hlo.Computation]bool{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpAsyncStart {
				if cc := in.Computation("calls"); SingleInstructionAsync(cc) {
					sugared[cc] = true
				}
			}
		}
	}
	hidden := map[*hlo.Computation]bool{}
	for c := range sugared {
		hidden[c] = true
	}
	return hidden
}

// instrName prints an instruction's name, canonical when asked.
func (pr *printer) instrName(in *hlo.Instruction) {
	if pr.canon != nil {
		pr.b.WriteString(pr.canon[in])
		return
	}
	pr.name(in.Name)
}

func (pr *printer) name(n string) {
	if !pr.opts.Short {
		pr.b.WriteByte('%')
	}
	pr.b.WriteString(n)
}

func (pr *printer) module(m *hlo.Module) {
	b := &pr.b
	b.WriteString("HloModule ")
	b.WriteString(m.Name)
	if pr.opts.Canonical {
		pr.hidden = map[*hlo.Computation]bool{}
	}
	pre, post := splitModuleAttrs(m.Attrs)
	if m.IsScheduled {
		b.WriteString(", is_scheduled=true")
	}
	pr.rawAttrs(pre)
	if m.EntryLayout != nil {
		b.WriteString(", entry_computation_layout={")
		pr.programShape(m.EntryLayout)
		b.WriteByte('}')
	}
	if m.ReplicaCount != 1 {
		b.WriteString(", replica_count=")
		b.WriteString(strconv.FormatInt(m.ReplicaCount, 10))
	}
	if m.NumPartitions != 1 {
		b.WriteString(", num_partitions=")
		b.WriteString(strconv.FormatInt(m.NumPartitions, 10))
	}
	pr.rawAttrs(post)
	b.WriteString("\n\n")
	if m.StackFrameIndex != "" && !pr.opts.Canonical {
		b.WriteString(m.StackFrameIndex)
		b.WriteString("\n\n\n")
	}
	for _, c := range m.Computations {
		if pr.hidden[c] {
			continue
		}
		pr.computation(c)
		b.WriteString("\n\n")
	}
}

// XLA prints these header attributes before entry_computation_layout.
var moduleAttrsBeforeLayout = map[string]bool{"input_output_alias": true, "buffer_donor": true, "alias_passthrough_params": true}

func splitModuleAttrs(attrs []hlo.Attr) (pre, post []hlo.Attr) {
	for _, a := range attrs {
		if moduleAttrsBeforeLayout[a.Name] {
			pre = append(pre, a)
		} else {
			post = append(post, a)
		}
	}
	return pre, post
}

func (pr *printer) rawAttrs(attrs []hlo.Attr) {
	for _, a := range attrs {
		pr.b.WriteString(", ")
		pr.b.WriteString(a.Name)
		pr.b.WriteByte('=')
		pr.value(a.Value)
		// XLA ends this multi-line value with a line break of its own.
		if a.Name == "origin_recovery_table" {
			pr.b.WriteByte('\n')
		}
	}
}

func (pr *printer) programShape(ps *hlo.ProgramShape) {
	pr.b.WriteByte('(')
	for i, s := range ps.Params {
		if i > 0 {
			pr.b.WriteString(", ")
			if i%5 == 0 {
				pr.b.WriteString("/*index=" + strconv.Itoa(i) + "*/")
			}
		}
		s.Append(&pr.b, true)
	}
	pr.b.WriteString(")->")
	ps.Result.Append(&pr.b, true)
}

func (pr *printer) computation(c *hlo.Computation) {
	b := &pr.b
	if c.IsEntry {
		b.WriteString("ENTRY ")
	}
	pr.name(c.Name)
	if !pr.opts.Short {
		b.WriteString(" (")
		for i, p := range c.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Name)
			b.WriteString(": ")
			p.Shape.Append(b, false)
		}
		b.WriteString(") -> ")
		c.ResultShape().Append(b, false)
	}
	b.WriteString(" {\n")
	if pr.opts.Canonical {
		pr.canon = canonicalNames(c)
		defer func() { pr.canon = nil }()
	}
	for _, in := range c.Instructions {
		b.WriteString("  ")
		if in == c.Root {
			b.WriteString("ROOT ")
		}
		pr.instruction(in)
		b.WriteByte('\n')
	}
	b.WriteByte('}')
	if c.ExecutionThread != "" && c.ExecutionThread != "main" && !pr.hidden[c] {
		b.WriteString(", execution_thread=\"")
		b.WriteString(escapeC(c.ExecutionThread))
		b.WriteByte('"')
	}
}

func (pr *printer) instruction(in *hlo.Instruction) {
	b := &pr.b
	pr.instrName(in)
	b.WriteString(" = ")
	in.Shape.Append(b, true)
	b.WriteByte(' ')
	opcode := in.Opcode.String()
	var wrapped *hlo.Instruction
	if in.Opcode.Has(hlo.Async) {
		if c := in.Computation("calls"); c != nil && pr.hidden[c] {
			wrapped = c.Root
			opcode = wrapped.Opcode.String() + strings.TrimPrefix(opcode, "async")
		}
	}
	b.WriteString(opcode)
	b.WriteByte('(')
	switch in.Opcode {
	case hlo.OpConstant:
		pr.constant(in)
	case hlo.OpParameter:
		b.WriteString(strconv.FormatInt(in.ParamNumber, 10))
	default:
		pr.operands(in)
	}
	b.WriteByte(')')
	pr.attrs(in, wrapped)
}

func (pr *printer) operands(in *hlo.Instruction) {
	b := &pr.b
	withShape := !pr.opts.Short || pr.opts.Canonical
	for i, o := range in.Operands {
		if i > 0 {
			b.WriteString(", ")
			if !pr.opts.Short && i%5 == 0 {
				b.WriteString("/*index=" + strconv.Itoa(i) + "*/")
			}
		}
		if withShape {
			o.Shape.Append(b, true)
			if pr.top {
				continue
			}
			b.WriteByte(' ')
		}
		pr.instrName(o)
	}
}

func (pr *printer) constant(in *hlo.Instruction) {
	lit := in.Literal
	if lit == nil || lit.IsElided() || (pr.opts.ElideLargeConstants && in.Shape.IsArray() && in.Shape.NumElements() > 10) {
		pr.b.WriteString("{...}")
		return
	}
	lit.AppendPayload(&pr.b)
}

// skippedInShort are the attributes ShortParsable leaves out.
var skippedInShort = map[string]bool{"metadata": true, "backend_config": true}

// inlineBodies reports whether called computations print in place.
func (pr *printer) inlineBodies() bool { return pr.opts.Canonical && pr.canon != nil || pr.top }

func (pr *printer) attrs(in *hlo.Instruction, wrapped *hlo.Instruction) {
	for _, a := range in.Attrs {
		if a.Name == "calls" && (wrapped != nil || in.Opcode == hlo.OpAsyncDone || in.Opcode == hlo.OpAsyncUpdate) {
			continue
		}
		if wrapped != nil && in.Opcode == hlo.OpAsyncStart && isGeneric(a.Name) {
			continue
		}
		pr.attr(a)
	}
	if wrapped != nil && in.Opcode == hlo.OpAsyncStart {
		for _, a := range wrapped.Attrs {
			pr.attr(a)
		}
		for _, a := range in.Attrs {
			if isGeneric(a.Name) {
				pr.attr(a)
			}
		}
	}
	if len(in.ControlPredecessors) > 0 && !pr.opts.Short {
		pr.b.WriteString(", control-predecessors={")
		for i, c := range in.ControlPredecessors {
			if i > 0 {
				pr.b.WriteString(", ")
			}
			pr.name(c.Name)
		}
		pr.b.WriteByte('}')
	}
}

func isGeneric(name string) bool {
	for _, g := range hlo.GenericAttrs {
		if g == name {
			return true
		}
	}
	return false
}

func (pr *printer) attr(a hlo.Attr) {
	if pr.opts.Short && skippedInShort[a.Name] {
		return
	}
	pr.b.WriteString(", ")
	pr.b.WriteString(a.Name)
	pr.b.WriteByte('=')
	pr.value(a.Value)
}

func (pr *printer) value(v any) {
	b := &pr.b
	switch v := v.(type) {
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(formatFloat6(v))
	case []int64:
		writeInts(b, v)
	case []bool:
		b.WriteByte('{')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatBool(x))
		}
		b.WriteByte('}')
	case [][]int64:
		b.WriteByte('{')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeInts(b, x)
		}
		b.WriteByte('}')
	case hlo.Enum:
		b.WriteString(string(v))
	case []hlo.Enum:
		b.WriteByte('{')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(string(x))
		}
		b.WriteByte('}')
	case string:
		b.WriteByte('"')
		b.WriteString(escapeC(v))
		b.WriteByte('"')
	case hlo.Raw:
		b.WriteString(string(v))
	case hlo.IotaReplicaGroups:
		b.WriteString(string(v))
	case *hlo.Computation:
		if pr.inlineBodies() {
			pr.body(v)
			return
		}
		pr.name(v.Name)
	case []*hlo.Computation:
		if pr.inlineBodies() {
			b.WriteByte('{')
			for i, c := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				pr.body(c)
			}
			b.WriteString("\n" + pr.indent + "}")
			return
		}
		b.WriteByte('{')
		for i, c := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			pr.name(c.Name)
		}
		b.WriteByte('}')
	case *hlo.Window:
		b.WriteString(v.String())
	case *hlo.ConvDimNumbers:
		b.WriteString(v.String())
	case hlo.PaddingConfig:
		b.WriteString(v.String())
	case []hlo.SliceDim:
		b.WriteString(hlo.SliceString(v))
	case hlo.Shape:
		v.Append(b, true)
	case []hlo.Shape:
		b.WriteByte('{')
		for i, s := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			s.Append(b, true)
		}
		b.WriteByte('}')
	default:
		b.WriteString("<?>")
	}
}

func writeInts(b *strings.Builder, v []int64) {
	b.WriteByte('{')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	b.WriteByte('}')
}

// formatFloat6 is absl::StrCat's float formatting: %g with six significant
// digits.
func formatFloat6(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}
