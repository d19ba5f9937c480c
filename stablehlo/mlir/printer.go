package mlir

import (
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// String prints the module in MLIR's generic form; Parse reads the text
// back to an equal module (but for positions, block labels and value
// names, which the printer makes unique within each function).
func (m *Module) String() string {
	var sb strings.Builder
	_ = Print(&sb, m)
	return sb.String()
}

// Print writes the module in generic form to w.
func Print(w io.Writer, m *Module) error {
	pr := &printer{names: map[*Value]string{}, used: map[string]bool{}}
	sb := &pr.sb
	sb.WriteString("module")
	if m.Name != "" {
		sb.WriteString(" @")
		sb.WriteString(symbolName(m.Name))
	}
	if len(m.Attrs) > 0 {
		sb.WriteString(" attributes ")
		pr.dict(m.Attrs)
	}
	sb.WriteString(" {\n")
	for _, op := range m.Ops {
		pr.op(op, "  ")
	}
	sb.WriteString("}\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

type printer struct {
	sb    strings.Builder
	names map[*Value]string
	used  map[string]bool
}

// name gives v a printed name unique in the current function, preferring
// the one it was written with.
func (pr *printer) define(v *Value, base string) string {
	if base == "" || !isAliasName(base[1:]) {
		base = "%v"
	}
	name := base
	for i := 1; pr.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	pr.used[name] = true
	return name
}

func (pr *printer) use(v *Value) string {
	if n, ok := pr.names[v]; ok {
		return n
	}
	return "%undefined"
}

func (pr *printer) op(op *Op, indent string) {
	sb := &pr.sb
	if isolatedOps[op.Name] {
		saved := pr.used
		pr.used = map[string]bool{}
		defer func() { pr.used = saved }()
	}
	sb.WriteString(indent)
	if len(op.Results) > 0 {
		name, _, _ := strings.Cut(pr.nameResults(op), "#")
		sb.WriteString(name)
		if len(op.Results) > 1 {
			sb.WriteString(":" + strconv.Itoa(len(op.Results)))
		}
		sb.WriteString(" = ")
	}
	sb.WriteString(quoteMLIR(op.Name))
	sb.WriteString("(")
	for i, v := range op.Operands {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(pr.use(v))
	}
	sb.WriteString(")")
	if len(op.Regions) > 0 {
		sb.WriteString(" (")
		for i, r := range op.Regions {
			if i > 0 {
				sb.WriteString(", ")
			}
			pr.region(r, indent)
		}
		sb.WriteString(")")
	}
	if len(op.Attrs) > 0 {
		sb.WriteString(" ")
		pr.dict(op.Attrs)
	}
	sb.WriteString(" : ")
	ft := FunctionType{}
	for _, v := range op.Operands {
		ft.Inputs = append(ft.Inputs, v.Type)
	}
	for _, v := range op.Results {
		ft.Results = append(ft.Results, v.Type)
	}
	pr.typ(ft)
	if l, ok := op.Loc.(LocAttr); ok {
		sb.WriteString(" ")
		sb.WriteString(l.Text)
	}
	sb.WriteString("\n")
}

// nameResults names op's results once (a block's ops are named before
// any is printed, so a use ahead of its definition, which the parser
// accepts, prints by name) and returns the first one's name.
func (pr *printer) nameResults(op *Op) string {
	if n, ok := pr.names[op.Results[0]]; ok {
		return n
	}
	base, _, _ := strings.Cut(op.Results[0].Name, "#")
	name := pr.define(op.Results[0], base)
	if len(op.Results) == 1 {
		pr.names[op.Results[0]] = name
		return name
	}
	for i, v := range op.Results {
		pr.names[v] = name + "#" + strconv.Itoa(i)
	}
	return pr.names[op.Results[0]]
}

func (pr *printer) region(r *Region, indent string) {
	sb := &pr.sb
	sb.WriteString("{\n")
	for i, b := range r.Blocks {
		if len(b.Args) > 0 || i > 0 {
			sb.WriteString(indent + "^bb" + strconv.Itoa(i))
			if len(b.Args) > 0 {
				sb.WriteString("(")
				for j, a := range b.Args {
					if j > 0 {
						sb.WriteString(", ")
					}
					pr.names[a] = pr.define(a, a.Name)
					sb.WriteString(pr.names[a] + ": ")
					pr.typ(a.Type)
				}
				sb.WriteString(")")
			}
			sb.WriteString(":\n")
		}
		for _, op := range b.Ops {
			if len(op.Results) > 0 {
				pr.nameResults(op)
			}
		}
		for _, op := range b.Ops {
			pr.op(op, indent+"  ")
		}
	}
	sb.WriteString(indent + "}")
}

func (pr *printer) dict(as []NamedAttr) {
	sb := &pr.sb
	sb.WriteString("{")
	for i, a := range as {
		if i > 0 {
			sb.WriteString(", ")
		}
		if isAttrName(a.Name) {
			sb.WriteString(a.Name)
		} else {
			sb.WriteString(quoteMLIR(a.Name))
		}
		if _, unit := a.Value.(UnitAttr); !unit {
			sb.WriteString(" = ")
			pr.attr(a.Value)
		}
	}
	sb.WriteString("}")
}

// isAttrName reports whether s can be written as a bare attribute name.
func isAttrName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIDChar(s[i]) {
			return false
		}
	}
	return true
}

// quoteMLIR quotes s with MLIR's escapes (\" \\ \n \t and \XX).
func quoteMLIR(s string) string {
	const hex = "0123456789ABCDEF"
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < ' ' || c > '~':
			b = append(b, '\\', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}

// symbolName writes a symbol's name bare when it lexes as one.
func symbolName(s string) string {
	if isAliasName(s) {
		return s
	}
	return quoteMLIR(s)
}

// enumMnemonics are the dialect attributes printed `#d<mnemonic VALUE>`.
var enumMnemonics = map[string]bool{
	"stablehlo.comparison_direction": true, "stablehlo.comparison_type": true,
	"stablehlo.precision": true, "stablehlo.fft_type": true, "stablehlo.rng_distribution": true,
	"stablehlo.rng_algorithm": true, "stablehlo.transpose": true, "stablehlo.result_accuracy_mode": true,
	"chlo.comparison_direction": true, "chlo.comparison_type": true, "chlo.precision": true,
}

func (pr *printer) attr(a Attr) {
	sb := &pr.sb
	switch a := a.(type) {
	case IntAttr:
		sb.WriteString(strconv.FormatInt(a.Value, 10))
		if a.Type != nil {
			sb.WriteString(" : ")
			pr.typ(a.Type)
		}
	case FloatAttr:
		sb.WriteString(floatText(a.Value, a.Type))
		if a.Type != nil {
			sb.WriteString(" : ")
			pr.typ(a.Type)
		}
	case BoolAttr:
		sb.WriteString(strconv.FormatBool(a.Value))
	case StringAttr:
		sb.WriteString(quoteMLIR(a.Value))
	case UnitAttr:
		sb.WriteString("unit")
	case ArrayAttr:
		sb.WriteString("[")
		for i, e := range a.Elems {
			if i > 0 {
				sb.WriteString(", ")
			}
			pr.attr(e)
		}
		sb.WriteString("]")
	case DenseArrayAttr:
		pr.denseArray(a)
	case DenseAttr:
		pr.dense(a)
	case DictAttr:
		pr.dict(a.Entries)
	case TypeAttr:
		pr.typ(a.Type)
	case SymbolRefAttr:
		for i, part := range strings.Split(a.Name, "::") {
			if i > 0 {
				sb.WriteString("::")
			}
			sb.WriteString("@" + symbolName(part))
		}
	case EnumAttr:
		sb.WriteString(a.Value)
	case DialectAttr:
		dialect, mnemonic, _ := strings.Cut(a.Name, ".")
		switch {
		case enumMnemonics[a.Name]:
			sb.WriteString("#" + dialect + "<" + mnemonic + " " + a.Raw + ">")
		case a.Raw == "" && a.Fields == nil:
			sb.WriteString("#" + a.Name)
		default:
			sb.WriteString("#" + a.Name + "<" + a.Raw + ">")
		}
	case LocAttr:
		sb.WriteString(a.Text)
	}
}

// floatText writes a float so that it lexes as one and reads back exactly;
// infinities and NaNs as the bit pattern of their type.
func floatText(v float64, t Type) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		name := ""
		if ft, ok := t.(FloatType); ok {
			name = ft.Name
		}
		if name == "f32" {
			return "0x" + strconv.FormatUint(uint64(math.Float32bits(float32(v))), 16)
		}
		if f := minifloat.Find(strings.ToLower(name)); f != nil {
			return "0x" + strconv.FormatUint(uint64(f.FromFloat64(v)), 16)
		}
		return "0x" + strconv.FormatUint(math.Float64bits(v), 16)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return mant + "e" + exp
}

func (pr *printer) denseArray(a DenseArrayAttr) {
	sb := &pr.sb
	sb.WriteString("array<")
	pr.typ(a.Elem)
	isBool := a.Elem == IntType{Width: 1}
	for i, v := range a.Ints {
		sb.WriteString(map[bool]string{true: ", ", false: ": "}[i > 0])
		if isBool {
			sb.WriteString(strconv.FormatBool(v != 0))
		} else {
			sb.WriteString(strconv.FormatInt(v, 10))
		}
	}
	for i, v := range a.Floats {
		sb.WriteString(map[bool]string{true: ", ", false: ": "}[i > 0])
		sb.WriteString(floatText(v, a.Elem))
	}
	sb.WriteString(">")
}

func (pr *printer) dense(a DenseAttr) {
	sb := &pr.sb
	sb.WriteString("dense<")
	switch {
	case a.Hex != nil:
		sb.WriteString(`"0x`)
		const hex = "0123456789ABCDEF"
		for _, b := range a.Hex {
			sb.WriteByte(hex[b>>4])
			sb.WriteByte(hex[b&15])
		}
		sb.WriteString(`"`)
	case a.Splat && len(a.Elems) == 1:
		sb.WriteString(a.Elems[0])
	case len(a.Elems) > 0:
		// Nested as the type's shape when it is static and holds them
		// all; else one flat list, which reads back the same.
		dims := []int64{int64(len(a.Elems))}
		if n, ok := staticCount(a.Type); ok && n == int64(len(a.Elems)) && len(a.Type.(TensorType).Dims) > 0 {
			dims = a.Type.(TensorType).Dims
		}
		elems := a.Elems
		pr.nested(dims, &elems)
	}
	sb.WriteString("> : ")
	pr.typ(a.Type)
}

// nested writes elements as nested lists following the shape dims.
func (pr *printer) nested(dims []int64, elems *[]string) {
	sb := &pr.sb
	sb.WriteString("[")
	for i := int64(0); i < dims[0] && len(*elems) > 0; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		if len(dims) > 1 {
			pr.nested(dims[1:], elems)
			continue
		}
		sb.WriteString((*elems)[0])
		*elems = (*elems)[1:]
	}
	sb.WriteString("]")
}
