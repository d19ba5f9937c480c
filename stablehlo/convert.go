package stablehlo

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// ErrUnsupported marks an op, type or attribute the converter does not
// handle yet. Errors wrapping it say which (see UnsupportedReason).
var ErrUnsupported = errors.New("unsupported")

// Options configure a conversion.
type Options struct {
	// Entry names the entry function; "" means `main`, else the single
	// public function.
	Entry string
	// ArgShapes are the concrete shapes of the entry's arguments, used to
	// refine dynamic dimensions (`tensor<?x...>`); nil when the entry's
	// argument types are static.
	ArgShapes []hlo.Shape
}

// Program is a converted module together with the checks its `check.*`
// ops asked for.
type Program struct {
	Module *hlo.Module
	// NumResults is how many of the entry's outputs are the entry
	// function's own results; the checks' values follow them.
	NumResults int
	Checks     []Check
}

// Convert converts a parsed StableHLO module into an HLO module. Check
// ops are dropped.
func Convert(m *mlir.Module, opts Options) (*hlo.Module, error) {
	p, err := convert(m, opts, false)
	if err != nil {
		return nil, err
	}
	return p.Module, nil
}

// ConvertProgram converts a module and turns its check ops into extra
// outputs of the entry computation, listed in Program.Checks.
func ConvertProgram(m *mlir.Module, opts Options) (*Program, error) {
	return convert(m, opts, true)
}

// ParseText parses MLIR text and converts it; file names the text in
// error messages.
func ParseText(file, text string, opts Options) (*hlo.Module, error) {
	m, err := mlir.Parse(file, []byte(text))
	if err != nil {
		return nil, err
	}
	return Convert(m, opts)
}

// ParseFile reads, parses and converts an MLIR file.
func ParseFile(path string, opts Options) (*hlo.Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseText(path, string(b), opts)
}

// converter holds the state of one module's conversion.
type converter struct {
	src      *mlir.Module
	funcs    map[string]*mlir.Op
	out      *hlo.Module
	opts     Options
	checks   bool // turn check ops into outputs
	nextID   int
	nextComp int
	pending  []pendingCheck
	inlining map[inlineKey]bool // functions being inlined, against recursion
	err      error              // the first error of add, reported by op
	parallel bool               // converting interpreter.run_parallel
	pos      mlir.Pos           // the op being converted, for messages
	opName   string
}

// inlineKey is a function being inlined by one process of run_parallel
// (nil outside it).
type inlineKey struct {
	f    *mlir.Op
	proc *process
}

// pendingCheck is a check op converted into instructions of the entry.
type pendingCheck struct {
	Check
	actual, expected *hlo.Instruction
}

func convert(m *mlir.Module, opts Options, checks bool) (p *Program, err error) {
	c := &converter{src: m, funcs: map[string]*mlir.Op{}, opts: opts, checks: checks, inlining: map[inlineKey]bool{}}
	name := m.Name
	if name == "" {
		name = "stablehlo"
	}
	c.out = hlo.NewModule(name)
	c.moduleAttrs(m.Attrs)
	entry, err := c.findEntry(c.collectFuncs())
	if err != nil {
		return nil, err
	}
	// Malformed input that slips past the checks (an op with too few
	// operands, say) must not panic out of the package.
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%s: converting %s: %v", c.pos, c.opName, r)
		}
	}()
	return c.convertEntry(entry)
}

func (c *converter) findEntry(public []*mlir.Op) (*mlir.Op, error) {
	want := c.opts.Entry
	if want == "" {
		if f := c.funcs["main"]; f != nil {
			return f, nil
		}
		if len(public) == 1 {
			return public[0], nil
		}
		return nil, fmt.Errorf("%s: no @main and %d public functions: name the entry", c.src.Pos, len(public))
	}
	if f := c.funcs[want]; f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("%s: no function @%s", c.src.Pos, want)
}

// moduleAttrs keeps what HLO has a place for: replica and partition
// counts; every other module attribute is dropped.
func (c *converter) moduleAttrs(attrs []mlir.NamedAttr) {
	for _, a := range attrs {
		v, ok := a.Value.(mlir.IntAttr)
		switch {
		case a.Name == "mhlo.num_replicas" && ok:
			c.out.ReplicaCount = v.Value
		case a.Name == "mhlo.num_partitions" && ok:
			c.out.NumPartitions = v.Value
		}
	}
}

// name returns a fresh instruction name.
func (c *converter) name(stem string) string {
	c.nextID++
	return stem + "." + strconv.Itoa(c.nextID) // not Sprintf: once per instruction
}

// newComp returns a fresh computation added to the module.
func (c *converter) newComp(stem string) *hlo.Computation {
	c.nextComp++
	comp := &hlo.Computation{Name: fmt.Sprintf("%s.%d", stem, c.nextComp)}
	return c.out.AddComputation(comp)
}

func (c *converter) convertEntry(f *mlir.Op) (*Program, error) {
	body, err := funcBody(f)
	if err != nil {
		return nil, err
	}
	comp := &hlo.Computation{Name: "main", IsEntry: true}
	s := newScope(c, comp, nil)
	s.entry = true
	if c.opts.ArgShapes != nil && len(c.opts.ArgShapes) != len(body.Args) {
		return nil, fmt.Errorf("%s: @%s takes %d arguments, got %d shapes", f.Pos, stringAttr(f.Attr("sym_name")), len(body.Args), len(c.opts.ArgShapes))
	}
	shapes := make([]hlo.Shape, len(body.Args))
	for i, a := range body.Args {
		sh, err := c.argShape(f, i, a)
		if err != nil {
			return nil, err
		}
		shapes[i] = sh
		p := s.param(i, sh, fmt.Sprintf("arg%d", i))
		annotateParam(f, i, p)
		s.vals[a] = p
	}
	if c.opts.ArgShapes != nil {
		if err := c.bindDimVars(f, s, body, shapes); err != nil {
			return nil, err
		}
	}
	results, err := s.block(body)
	if err != nil {
		return nil, err
	}
	annotateModule(c.out, f, len(results))
	p := &Program{NumResults: len(results)}
	outs := append([]*hlo.Instruction(nil), results...)
	for _, pc := range c.pending {
		ch := pc.Check
		ch.Actual = len(outs)
		outs = append(outs, pc.actual)
		ch.Expected = -1
		if pc.expected != nil {
			ch.Expected = len(outs)
			outs = append(outs, pc.expected)
		}
		p.Checks = append(p.Checks, ch)
	}
	if len(outs) == 1 {
		comp.Root = outs[0]
	} else {
		comp.Root = s.tuple(outs)
	}
	c.out.AddComputation(comp)
	c.out.Entry = comp
	c.out.RemoveUnreachableComputations()
	c.out.EntryLayout = c.out.ComputeEntryLayout()
	p.Module = c.out
	return p, nil
}

// bindDimVars gives the entry's dimension variables (see Signature) the
// sizes of the arguments' `?` dimensions: shape computations read them as
// constants; the parameters stay, unused, so that the signature is the
// function's.
func (c *converter) bindDimVars(f *mlir.Op, s *scope, body *mlir.Block, shapes []hlo.Shape) error {
	sig, err := EntrySignature(c.src, stringAttr(f.Attr("sym_name")))
	if err != nil {
		return err
	}
	vars, err := sig.DimensionValues(shapes)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Pos, err)
	}
	for i, v := range vars {
		s.vals[body.Args[i]] = s.scalar(shapes[i].DType, float64(v))
	}
	return nil
}

// argShape is the shape of entry argument i: its type, with dynamic
// dimensions taken from Options.ArgShapes.
func (c *converter) argShape(f *mlir.Op, i int, a *mlir.Value) (hlo.Shape, error) {
	sh, err := shapeOfType(a.Type)
	if c.opts.ArgShapes == nil {
		if err != nil {
			return hlo.Shape{}, fmt.Errorf("%s: argument %d: %w", f.Pos, i, err)
		}
		if !isStatic(sh) {
			return hlo.Shape{}, fmt.Errorf("%s: argument %d (%s) has dynamic type %s and no concrete shape was given: %w", f.Pos, i, a.Name, typeString(a.Type), ErrUnsupported)
		}
		return sh, nil
	}
	got := c.opts.ArgShapes[i]
	if err := fitsType(got, a.Type); err != nil {
		return hlo.Shape{}, fmt.Errorf("%s: argument %d (%s): %w", f.Pos, i, a.Name, err)
	}
	if !isStatic(got) {
		return hlo.Shape{}, fmt.Errorf("%s: argument %d (%s): the given shape %s is not concrete", f.Pos, i, a.Name, got.HumanString())
	}
	return got, nil
}

// funcBody returns the single block of a func.func.
func funcBody(f *mlir.Op) (*mlir.Block, error) {
	if len(f.Regions) != 1 || len(f.Regions[0].Blocks) != 1 {
		return nil, fmt.Errorf("%s: function @%s: want one region of one block: %w", f.Pos, stringAttr(f.Attr("sym_name")), ErrUnsupported)
	}
	return f.Regions[0].Blocks[0], nil
}

// scope maps the SSA values of one function body or region to the
// instructions computing them in one computation.
type scope struct {
	c     *converter
	comp  *hlo.Computation
	vals  map[*mlir.Value]*hlo.Instruction
	outer *scope   // the enclosing scope, whose constants a region may reuse
	entry bool     // instructions land in the entry (check ops allowed)
	proc  *process // the process of run_parallel converting this scope, or nil
}

func newScope(c *converter, comp *hlo.Computation, outer *scope) *scope {
	return &scope{c: c, comp: comp, vals: map[*mlir.Value]*hlo.Instruction{}, outer: outer}
}

// get returns the instruction of a value. A constant defined outside a
// region is rebuilt inside it, since HLO computations capture nothing.
func (s *scope) get(v *mlir.Value) (*hlo.Instruction, error) {
	if in, ok := s.vals[v]; ok {
		return in, nil
	}
	if v.Def != nil && v.Def.Name == "stablehlo.constant" {
		ins, err := convertConstant(s, v.Def)
		if err != nil {
			return nil, err
		}
		s.vals[v] = ins[0]
		return ins[0], nil
	}
	return nil, fmt.Errorf("value %s is not defined in this region (a capture HLO cannot express here): %w", v.Name, ErrUnsupported)
}

// operands returns the instructions of an op's operands.
func (s *scope) operands(op *mlir.Op) ([]*hlo.Instruction, error) {
	out := make([]*hlo.Instruction, len(op.Operands))
	for i, v := range op.Operands {
		in, err := s.get(v)
		if err != nil {
			return nil, err
		}
		out[i] = in
	}
	return out, nil
}

// add appends an instruction of the given shape.
func (s *scope) add(op hlo.Opcode, shape hlo.Shape, operands []*hlo.Instruction, attrs ...hlo.Attr) *hlo.Instruction {
	in := &hlo.Instruction{Name: s.c.name(strings.ReplaceAll(op.String(), "-", "_")), Opcode: op, Shape: shape, Operands: operands}
	for _, a := range attrs {
		in.SetAttr(a.Name, a.Value)
	}
	if !isStatic(shape) {
		if err := refineAdd(in); err != nil && s.c.err == nil {
			s.c.err = err
		}
	}
	return s.comp.AddInstruction(in)
}

// infer appends an instruction whose shape hlo's shape inference computes.
func (s *scope) infer(op hlo.Opcode, operands []*hlo.Instruction, attrs ...hlo.Attr) (*hlo.Instruction, error) {
	in := &hlo.Instruction{Name: s.c.name(strings.ReplaceAll(op.String(), "-", "_")), Opcode: op, Operands: operands}
	for _, a := range attrs {
		in.SetAttr(a.Name, a.Value)
	}
	sh, err := hlo.InferShape(in)
	if err != nil {
		return nil, err
	}
	in.Shape = sh
	if in.Shape.IsArray() {
		in.Shape.SetDefaultLayoutIfMissing()
	}
	return s.comp.AddInstruction(in), nil
}

// param appends parameter number i.
func (s *scope) param(i int, shape hlo.Shape, name string) *hlo.Instruction {
	in := &hlo.Instruction{Name: s.c.name(name), Opcode: hlo.OpParameter, Shape: shape, ParamNumber: int64(i)}
	s.comp.AddInstruction(in)
	s.comp.Params = append(s.comp.Params, in)
	return in
}

func (s *scope) tuple(elems []*hlo.Instruction) *hlo.Instruction {
	shapes := make([]hlo.Shape, len(elems))
	for i, e := range elems {
		shapes[i] = e.Shape
	}
	return s.add(hlo.OpTuple, hlo.TupleShape(shapes...), elems)
}

func (s *scope) gte(t *hlo.Instruction, i int) *hlo.Instruction {
	return s.add(hlo.OpGetTupleElement, t.Shape.Tuple[i], []*hlo.Instruction{t}, hlo.Attr{Name: "index", Value: int64(i)})
}

// untuple returns the elements of a tuple-shaped instruction.
func (s *scope) untuple(t *hlo.Instruction) []*hlo.Instruction {
	out := make([]*hlo.Instruction, len(t.Shape.Tuple))
	for i := range out {
		out[i] = s.gte(t, i)
	}
	return out
}

// block converts a block's ops and returns the instructions of its
// terminator's operands (func.return or stablehlo.return).
func (s *scope) block(b *mlir.Block) ([]*hlo.Instruction, error) {
	for _, op := range b.Ops {
		switch op.Name {
		case "func.return", "stablehlo.return", "return":
			return s.operands(op)
		}
		if err := s.op(op); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// op converts one op and records its results.
func (s *scope) op(op *mlir.Op) error {
	s.c.pos, s.c.opName = op.Pos, op.Name
	fn := opTable[op.Name]
	if fn == nil {
		return fmt.Errorf("%s: op %s: %w", op.Pos, op.Name, ErrUnsupported)
	}
	var res []*hlo.Instruction
	var err error
	switch {
	case isQuant(op) && !quantAware[op.Name]:
		res, err = quantOp(s, op, fn)
	default:
		res, err = fn(s, op)
	}
	if err == nil && s.c.err != nil {
		err, s.c.err = s.c.err, nil
	}
	if err != nil {
		var pe *mlir.Error
		if errors.As(err, &pe) || strings.HasPrefix(err.Error(), op.Pos.String()) {
			return err
		}
		return fmt.Errorf("%s: %s: %w", op.Pos, op.Name, err)
	}
	if len(res) != len(op.Results) {
		return fmt.Errorf("%s: %s: converted to %d values for %d results", op.Pos, op.Name, len(res), len(op.Results))
	}
	for i, r := range op.Results {
		s.vals[r] = res[i]
	}
	annotateOp(op, res)
	return nil
}

// quantAware ops handle quantized types themselves: the two conversions,
// constants (whose values are the storage integers), and the ops that
// pass values through.
var quantAware = map[string]bool{
	"stablehlo.uniform_quantize": true, "stablehlo.uniform_dequantize": true, "stablehlo.constant": true,
	"func.call": true, "call": true, "stablehlo.tuple": true, "stablehlo.get_tuple_element": true,
	"stablehlo.optimization_barrier": true, "interpreter.probe": true, "stablehlo.composite": true,
	"stablehlo.custom_call": true, "check.expect_eq": true, "check.expect_eq_const": true,
	"check.expect_almost_eq": true, "check.expect_almost_eq_const": true, "check.expect_close": true,
	"check.expect_serialized_eq": true, "check.eq": true, "stablehlo.bitcast_convert": true,
}

// UnsupportedReason returns a short reason for an ErrUnsupported error
// (the op or feature named in it), for counting; "" for other errors.
func UnsupportedReason(err error) string {
	if err == nil || !errors.Is(err, ErrUnsupported) {
		return ""
	}
	msg := err.Error()
	// Drop the FILE:LINE:COL: prefix and the trailing ": unsupported".
	msg = strings.TrimSuffix(msg, ": "+ErrUnsupported.Error())
	if i := strings.LastIndex(msg, ": op "); i >= 0 {
		return msg[i+2:]
	}
	parts := strings.Split(msg, ": ")
	if len(parts) >= 2 {
		return strings.Join(parts[len(parts)-2:], ": ")
	}
	return msg
}
