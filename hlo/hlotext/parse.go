package hlotext

import (
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Options configure parsing.
type Options struct {
	// File names the input in error messages.
	File string
	// ReplicaCount, when non-zero, is the module's replica count unless the
	// text sets replica_count itself (XLA's HloModuleConfig).
	ReplicaCount int64
	// Warn, when set, receives what the parser accepted leniently (see
	// Warning); without it such input is still accepted, silently.
	Warn func(Warning)
}

// Parse parses one HLO module.
func Parse(text string, opts Options) (*hlo.Module, error) {
	return parseAt(text, 0, opts)
}

// ParseFile parses every module in a file: modules are separated by lines
// `// -----` (the --split-input-file convention of XLA's test files).
func ParseFile(text string, opts Options) ([]*hlo.Module, error) {
	var mods []*hlo.Module
	for _, part := range splitModules(text) {
		if len(mods) > 0 && onlyComments(part.text) {
			continue
		}
		m, err := parseAt(part.text, part.line, opts)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	return mods, nil
}

type filePart struct {
	text string
	line int // line offset of the part in the file
}

func splitModules(text string) []filePart {
	if !strings.Contains(text, "// -----") {
		return []filePart{{text, 0}}
	}
	var parts []filePart
	start, line, startLine := 0, 0, 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != '\n' {
			continue
		}
		lineStart := i - 1
		for lineStart >= 0 && text[lineStart] != '\n' {
			lineStart--
		}
		l := strings.TrimSpace(text[lineStart+1 : i])
		line++
		if l == "// -----" {
			parts = append(parts, filePart{text[start : lineStart+1], startLine})
			start, startLine = min(i+1, len(text)), line
		}
	}
	return append(parts, filePart{text[start:], startLine})
}

// onlyComments reports whether s holds nothing but space and comments.
func onlyComments(s string) bool {
	sc := &scanner{src: s}
	sc.skip()
	return sc.eof()
}

// parser holds the state of one module parse.
type parser struct {
	scanner
	opts  Options
	mod   *hlo.Module
	comps map[string]*compState
	// names holds every instruction name in the module, for naming
	// anonymous nested instructions uniquely.
	names map[string]bool
	cur   *compState
	// missingOK lets operands that are not defined become parameters (the
	// operands of a single-instruction input).
	missingOK bool
	// asyncUsers are the computations an async-start already calls.
	asyncUsers map[*hlo.Computation]bool
	// repeatedNames is set when a written name repeats in another
	// computation, so names must be made unique as XLA's parser does.
	repeatedNames bool
	// nextSuffix is the last .N suffix given to a base name.
	nextSuffix map[string]int
}

// compState is a computation being parsed or referenced before definition.
type compState struct {
	comp    *hlo.Computation
	defined bool
	defPos  int
	refPos  int
	instrs  map[string]*hlo.Instruction
	root    *hlo.Instruction
	nroots  int
	ctrl    []ctrlRef
	wrapped bool // made by the parser for an async-sugar instruction
	params  map[int64]string
	fwd     *forwardRefs // operands named before their definition
}

type ctrlRef struct {
	in    *hlo.Instruction
	names []string
	pos   []int
}

func parseAt(text string, baseLine int, opts Options) (*hlo.Module, error) {
	p := &parser{
		scanner: scanner{src: text, file: opts.File, baseLine: baseLine},
		opts:    opts,
		comps:   map[string]*compState{},
		names:   map[string]bool{},

		asyncUsers: map[*hlo.Computation]bool{},
		nextSuffix: map[string]int{},
	}
	m, err := p.module()
	if err != nil {
		if p.err != nil {
			return nil, p.err
		}
		return nil, err
	}
	return m, nil
}

func (p *parser) module() (*hlo.Module, error) {
	p.mod = hlo.NewModule("_")
	if p.opts.ReplicaCount > 0 {
		p.mod.ReplicaCount = p.opts.ReplicaCount
	}
	if !p.skip() {
		return nil, p.err
	}
	if p.eof() {
		return nil, p.errorf("expects HloModule or a computation, but the input is empty")
	}
	if p.peekIdent() == "HloModule" {
		p.ident()
		name := p.ident()
		if name == "" {
			return nil, p.errorf("expects module name")
		}
		p.mod.Name = name
		p.accept(':') // XLA's lexer reads `name:` as a name too
		for p.accept(',') {
			if err := p.moduleAttr(); err != nil {
				return nil, err
			}
		}
	}
	if err := p.stackFrameIndex(); err != nil {
		return nil, err
	}
	if p.atSingleInstruction() {
		return p.singleInstructionModule()
	}
	var entry *hlo.Computation
	for {
		if !p.skip() {
			return nil, p.err
		}
		if p.eof() {
			break
		}
		isEntry := false
		entryPos := p.pos
		if p.peekIdent() == "ENTRY" {
			p.ident()
			isEntry = true
		}
		c, err := p.computation()
		if err != nil {
			return nil, err
		}
		if isEntry {
			if entry != nil {
				return nil, p.errorAt(entryPos, "expects only one ENTRY")
			}
			entry = c
		}
	}
	if err := p.checkUndefined(); err != nil {
		return nil, err
	}
	if len(p.mod.Computations) == 0 {
		return nil, p.errorf("expects at least one computation")
	}
	if entry == nil {
		entry = p.mod.Computations[len(p.mod.Computations)-1]
	}
	entry.IsEntry = true
	p.mod.Entry = entry
	if p.mod.EntryLayout == nil {
		p.mod.EntryLayout = p.mod.ComputeEntryLayout()
	}
	if p.repeatedNames {
		uniquifyNames(p.mod)
	}
	return p.mod, nil
}

var stackFrameSections = map[string]bool{"FileNames": true, "FunctionNames": true, "FileLocations": true, "StackFrames": true}

// stackFrameIndex keeps the stack frame tables XLA prints after the header.
// Each section is a name followed by lines that start with an id.
func (p *parser) stackFrameIndex() error {
	p.skip()
	start := p.pos
	end := -1
	for stackFrameSections[p.peekIdent()] {
		p.ident()
		for {
			p.skip()
			if c := p.peekByte(); c < '0' || c > '9' {
				break
			}
			for !p.eof() && p.peekByte() != '\n' && p.peekByte() != '\r' {
				if c := p.peekByte(); c == '"' || c == '{' {
					var err error
					if c == '"' {
						_, err = p.quoted()
					} else {
						err = p.balanced()
					}
					if err != nil {
						return err
					}
					continue
				}
				p.pos++
			}
		}
		end = p.pos
	}
	if end >= 0 {
		p.mod.StackFrameIndex = strings.TrimRight(p.src[start:end], " \t\r\n")
	}
	return nil
}

// checkUndefined reports a computation referenced but never defined.
func (p *parser) checkUndefined() error {
	first := -1
	var name string
	for n, cs := range p.comps {
		if !cs.defined && (first < 0 || cs.refPos < first) {
			first, name = cs.refPos, n
		}
	}
	if first >= 0 {
		return p.errorAt(first, "computation does not exist: %s", name)
	}
	return nil
}

// moduleAttr parses one header attribute after `HloModule name,`.
func (p *parser) moduleAttr() error {
	namePos := p.pos
	name := p.ident()
	if name == "" {
		return p.errorf("expects attribute name")
	}
	if err := p.expect('=', "after attribute name"); err != nil {
		return err
	}
	switch name {
	case "is_scheduled":
		b, err := p.boolean()
		if err != nil {
			return err
		}
		p.mod.IsScheduled = b
	case "replica_count":
		n, err := p.integer()
		if err != nil {
			return err
		}
		p.mod.ReplicaCount = n
	case "num_partitions":
		n, err := p.integer()
		if err != nil {
			return err
		}
		p.mod.NumPartitions = n
	case "entry_computation_layout":
		ps, err := p.programShape()
		if err != nil {
			return err
		}
		p.mod.EntryLayout = ps
	default:
		if _, dup := p.mod.Attr(name); dup {
			return p.errorAt(namePos, "duplicate module attribute %q", name)
		}
		p.skip()
		save := p.pos
		var err error
		switch name {
		case "input_output_alias":
			err = p.checkInputOutputAlias()
		case "buffer_donor":
			err = p.checkBufferDonor()
		}
		if err != nil {
			return err
		}
		p.pos = save
		v, err := p.rawValue()
		if err != nil {
			return err
		}
		p.mod.Attrs = append(p.mod.Attrs, hlo.Attr{Name: name, Value: hlo.Raw(v)})
	}
	return nil
}

// programShape parses {(shape, ...)->shape}.
func (p *parser) programShape() (*hlo.ProgramShape, error) {
	if err := p.expect('{', "at the start of entry_computation_layout"); err != nil {
		return nil, err
	}
	ps := &hlo.ProgramShape{}
	if err := p.expect('(', "at the start of the parameter list"); err != nil {
		return nil, err
	}
	if !p.accept(')') {
		for {
			sh, err := p.shape()
			if err != nil {
				return nil, err
			}
			ps.Params = append(ps.Params, sh)
			if p.accept(')') {
				break
			}
			if err := p.expect(',', "between parameter shapes"); err != nil {
				return nil, err
			}
		}
	}
	if !p.acceptStr("->") {
		return nil, p.errorf("expects '->' in entry_computation_layout")
	}
	res, err := p.shape()
	if err != nil {
		return nil, err
	}
	ps.Result = res
	return ps, p.expect('}', "at the end of entry_computation_layout")
}

func (p *parser) boolean() (bool, error) {
	switch p.ident() {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, p.errorf("expects true or false")
}

// compRef returns the computation with this name, creating a placeholder
// for one defined later in the file.
func (p *parser) compRef(name string, pos int) *hlo.Computation {
	cs, ok := p.comps[name]
	if !ok {
		cs = &compState{comp: &hlo.Computation{Name: name}, refPos: pos}
		p.comps[name] = cs
	}
	return cs.comp
}

func (p *parser) computation() (*hlo.Computation, error) {
	namePos := p.pos
	name := p.ident()
	if name == "" {
		return nil, p.errorf("expects computation name")
	}
	cs, ok := p.comps[name]
	if ok && cs.defined {
		return nil, p.errorAt(namePos, "computation %s is already defined\n%s: error: computation previously defined here\n%s\n^",
			name, p.locate(cs.defPos), p.sourceLine(cs.defPos))
	}
	if !ok {
		cs = &compState{comp: &hlo.Computation{Name: name}}
		p.comps[name] = cs
	}
	cs.defined, cs.defPos = true, namePos
	c := cs.comp
	c.Parent = p.mod // shape inference may read the module's replica count
	var sig *hlo.Shape
	if p.accept('(') {
		if err := p.signatureParams(); err != nil {
			return nil, err
		}
		if !p.acceptStr("->") {
			return nil, p.errorf("expects '->' after computation parameters")
		}
		res, err := p.shape()
		if err != nil {
			return nil, err
		}
		sig = &res
	}
	if err := p.expect('{', "at the start of computation "+name); err != nil {
		return nil, err
	}
	if err := p.computationBody(cs, sig, namePos); err != nil {
		return nil, err
	}
	save := p.pos
	if p.accept(',') {
		if p.ident() != "execution_thread" || !p.accept('=') {
			p.pos = save
			return nil, p.errorf("expects execution_thread= after computation %s", name)
		}
		t, err := p.quoted()
		if err != nil {
			return nil, err
		}
		c.ExecutionThread = t
	}
	p.mod.AddComputation(c)
	return c, nil
}

// computationBody parses instructions up to the closing '}' of a
// computation whose '{' has been read, and completes the computation.
func (p *parser) computationBody(cs *compState, sig *hlo.Shape, namePos int) error {
	outer := p.cur
	defer func() { p.cur = outer }()
	p.cur = cs
	cs.instrs = map[string]*hlo.Instruction{}
	c := cs.comp
	for {
		if !p.skip() {
			return p.err
		}
		if p.accept('}') {
			break
		}
		if p.eof() {
			return p.errorf("expects '}' at the end of computation %s", c.Name)
		}
		if err := p.instruction(); err != nil {
			return err
		}
	}
	if len(c.Instructions) == 0 {
		return p.errorAt(namePos, "computation %s has no instructions", c.Name)
	}
	return p.finishComputation(cs, sig, namePos)
}

// inlineComputation parses a computation body written in place of a
// computation name (XLA's canonical form prints called computations so).
func (p *parser) inlineComputation() (*hlo.Computation, error) {
	pos := p.pos
	if err := p.enter("computation"); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.expect('{', "at the start of a computation"); err != nil {
		return nil, err
	}
	name := p.uniqueCompName("computation")
	cs := &compState{comp: &hlo.Computation{Name: name, Parent: p.mod}, defined: true, defPos: pos}
	p.comps[name] = cs
	missing := p.missingOK
	p.missingOK = false
	defer func() { p.missingOK = missing }()
	if err := p.computationBody(cs, nil, pos); err != nil {
		return nil, err
	}
	p.mod.AddComputation(cs.comp)
	return cs.comp, nil
}

// atInlineComputation reports whether '{' here opens a computation body
// rather than a list of names.
func (p *parser) atInlineComputation() bool {
	save := p.pos
	defer func() { p.pos = save }()
	if !p.accept('{') {
		return false
	}
	if p.atShape() {
		return true
	}
	id := p.ident()
	return id == "ROOT" || (id != "" && p.accept('='))
}

// atSingleInstruction reports whether the text is one instruction rather
// than computations: `name = ...` or `shape opcode(...)`.
func (p *parser) atSingleInstruction() bool {
	save := p.pos
	defer func() { p.pos = save }()
	if p.atShape() {
		return true
	}
	id := p.ident()
	if id == "" {
		return false
	}
	if p.accept('=') {
		return true
	}
	// `add(f32[] x, ...)`: an instruction missing its `name =`, not a
	// computation `add (x: f32[]) -> ...`.
	if _, isOp := hlo.OpcodeByName(id); isOp && p.accept('(') {
		if p.accept(')') {
			return !p.acceptStr("->")
		}
		return p.ident() == "" || !p.accept(':')
	}
	return false
}

// singleInstructionModule builds a module from one instruction, as XLA's
// parser does for such text: operands that are not defined become
// parameters of the shapes written for them.
func (p *parser) singleInstructionModule() (*hlo.Module, error) {
	cs := &compState{comp: &hlo.Computation{Name: "main", Parent: p.mod}, defined: true, instrs: map[string]*hlo.Instruction{}}
	p.comps["main"] = cs
	p.cur = cs
	p.missingOK = true
	name, namePos := "", p.pos
	if !p.atShape() {
		name = p.ident()
		if !p.accept('=') {
			return nil, p.errorf("expects '=' in instruction")
		}
	}
	in, err := p.instructionRHS(name, namePos, false)
	if err != nil {
		return nil, err
	}
	cs.root = in
	if p.skip(); !p.eof() {
		return nil, p.errorf("Expected eof after the instruction")
	}
	if err := p.finishComputation(cs, nil, namePos); err != nil {
		return nil, err
	}
	if err := p.checkUndefined(); err != nil {
		return nil, err
	}
	cs.comp.IsEntry = true
	p.mod.AddComputation(cs.comp)
	p.mod.Entry = cs.comp
	p.mod.EntryLayout = p.mod.ComputeEntryLayout()
	if p.repeatedNames {
		uniquifyNames(p.mod)
	}
	return p.mod, nil
}

// signatureParams skips `name: shape, ...)`: the parameter instructions
// carry the same information.
func (p *parser) signatureParams() error {
	if p.accept(')') {
		return nil
	}
	for {
		if p.ident() == "" {
			return p.errorf("expects parameter name")
		}
		if err := p.expect(':', "after parameter name"); err != nil {
			return err
		}
		if _, err := p.shapeOnly(); err != nil {
			return err
		}
		if p.accept(')') {
			return nil
		}
		if err := p.expect(',', "between parameters"); err != nil {
			return err
		}
	}
}

func (p *parser) finishComputation(cs *compState, sig *hlo.Shape, namePos int) error {
	c := cs.comp
	c.Root = cs.root
	if c.Root == nil {
		c.Root = c.Instructions[len(c.Instructions)-1]
	}
	if err := p.resolveForward(cs); err != nil {
		return err
	}
	c.Params = nil
	for _, in := range c.Instructions {
		if in.Opcode != hlo.OpParameter {
			continue
		}
		n := int(in.ParamNumber)
		if n > len(c.Instructions) {
			return p.errorAt(namePos, "parameter number %d of computation %s is larger than its instruction count", n, c.Name)
		}
		for len(c.Params) <= n {
			c.Params = append(c.Params, nil)
		}
		c.Params[n] = in
	}
	for i, prm := range c.Params {
		if prm == nil {
			return p.errorAt(namePos, "computation %s has no parameter number %d", c.Name, i)
		}
	}
	for _, r := range cs.ctrl {
		for i, n := range r.names {
			pred, ok := cs.instrs[n]
			if !ok {
				return p.errorAt(r.pos[i], "'%s' is not defined", n)
			}
			r.in.ControlPredecessors = append(r.in.ControlPredecessors, pred)
		}
	}
	if sig != nil && !sig.Compatible(c.Root.Shape) {
		return p.errorAt(namePos, "Shape of computation %s, %s, is not compatible with that of its root instruction %s, %s",
			c.Name, sig.HumanString(), c.Root.Name, c.Root.Shape.HumanString())
	}
	return nil
}
