package mlir

import "fmt"

// The AST is MLIR's generic form: every op, whatever syntax it was written
// in, is a name, operands, results, an attribute dictionary and regions.
// The parser normalizes each dialect's pretty syntax into exactly the
// attributes the generic form (`--mlir-print-op-generic`) would print, so
// a converter reads one form only.
//
// Choices the parser made where the contract left room (the converter may
// rely on them):
//   - Op.Attrs is sorted by name, as MLIR's DictionaryAttr keeps it, and
//     holds the properties (`<{...}>`) and the attribute dictionary merged.
//   - An integer or float attribute written without a type has MLIR's
//     default type, i64 or f64, as the generic printer shows it.
//   - Enum values are DialectAttr (`#stablehlo<comparison_direction LT>`),
//     never EnumAttr, whichever syntax they were written in.
//   - A struct attribute (#stablehlo.dot, .gather, .scatter, ...) has the
//     fields as written; StableHLO's printers leave out empty lists and
//     zero integers, so a missing field means [] or 0. Lists inside them
//     are ArrayAttr of IntAttr (i64).
//   - Types are values shared between uses (a tensor type spelled the same
//     way is parsed once per file): never mutate a Type's slices.
//   - A function declaration (func.func without a body) has one region
//     with no blocks, as in the generic form.
//   - Pretty forms StableHLO prints generically only (gather, scatter,
//     sort, if, case, map, reduce_window, select_and_scatter, collectives,
//     infeed/outfeed/send/recv, ...) are accepted in generic syntax only.

// Pos is a place in the source text, 1-based.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Module is a parsed `module { ... }` (or a file of top-level ops, which
// MLIR wraps in an implicit module).
type Module struct {
	Name  string      // the symbol after `module @`, without `@`; "" if none
	Attrs []NamedAttr // `attributes {...}` of the module
	Ops   []*Op       // top-level ops: func.func, sdy.mesh, ...
	Pos   Pos
}

// Op is one operation in generic form.
type Op struct {
	Name     string      // dialect-qualified: "stablehlo.add", "func.func", "func.return", "check.expect_eq"
	Operands []*Value    // uses, in order
	Results  []*Value    // definitions, in order; each carries its type
	Attrs    []NamedAttr // the generic form's attributes and properties, sorted by name
	Regions  []*Region
	Loc      Attr // the op's `loc(...)`, resolved through `#loc` aliases; nil if none
	Pos      Pos  // where the op starts in the text
}

// Region is a list of blocks; StableHLO regions have one block.
type Region struct {
	Blocks []*Block
}

// Block is a labelled list of ops with typed arguments.
type Block struct {
	Label string   // "^bb0", or "" for an entry block written without a label (pretty forms)
	Args  []*Value // block arguments, with types
	Ops   []*Op
}

// Value is an SSA value: an op result or a block argument.
type Value struct {
	// Name is as written, with `%` and any `#N` result index: "%0",
	// "%arg0", "%2#1"; the compact `reduce ... applies op` form's
	// synthesized block has "%lhs", "%rhs" and "%0".
	Name  string
	Type  Type
	Def   *Op // the defining op; nil for a block argument
	Index int // the result index in Def, or the argument index in its block
}

// NamedAttr is one `name = value` entry of an attribute dictionary. A
// unit attribute (`{has_side_effect}`) has Value UnitAttr{}.
type NamedAttr struct {
	Name  string
	Value Attr
}

// Attr is an attribute value.
type Attr interface{ attr() }

// Type is a type.
type Type interface{ typ() }

// Attribute kinds.
type (
	// IntAttr is an integer (`1 : i32`; Type i64 if none is written, as
	// in MLIR). Value holds it as written, up to 64 bits (unsigned values
	// above 2^63 wrap).
	IntAttr struct {
		Value int64
		Type  Type
	}
	// FloatAttr is a float (`1.0 : f32`, or a hex bit pattern `0x7FC00000 : f32`
	// of an f16, bf16, f32 or f64; Type f64 if none is written).
	FloatAttr struct {
		Value float64
		Type  Type
	}
	BoolAttr   struct{ Value bool }
	StringAttr struct{ Value string } // unquoted, escapes resolved
	UnitAttr   struct{}
	// ArrayAttr is `[a, b, ...]`.
	ArrayAttr struct{ Elems []Attr }
	// DenseArrayAttr is `array<i64: 1, 2>`: an element type and integers
	// (bools as 0/1) or floats.
	DenseArrayAttr struct {
		Elem   Type
		Ints   []int64
		Floats []float64
	}
	// DenseAttr is `dense<...> : tensor<...>` (or a dense resource). Its
	// elements are kept as written, one token per element in row-major
	// order after flattening nested lists, or as raw bytes for a hex blob
	// (`dense<"0x...">`, little-endian, as MLIR stores it). A splat holds
	// one element; a hex blob of exactly one element's bytes for a shape of
	// more is a splat too, as MLIR reads it. Complex elements are
	// "(re, im)" with the parts as written; an empty `dense<>` has no Elems.
	DenseAttr struct {
		Type  Type     // the shaped type after the colon
		Elems []string // element tokens: "1", "-2.5", "0x7FC0", "true", "(1.0, 2.0)" for complex
		Hex   []byte   // the hex blob's bytes when written as one; nil otherwise
		Splat bool     // one element broadcast to the whole shape
	}
	// DictAttr is `{a = ..., b}`.
	DictAttr struct{ Entries []NamedAttr }
	// TypeAttr is a type used as an attribute (`function_type = (i32) -> i32`).
	TypeAttr struct{ Type Type }
	// SymbolRefAttr is `@name` (nested `@a::@b` joined with "::").
	SymbolRefAttr struct{ Name string }
	// EnumAttr is a bare keyword (`DEFAULT`, `LT`). The parser does not
	// produce it: enums are DialectAttr, as the generic form writes them.
	EnumAttr struct{ Value string }
	// DialectAttr is `#dialect.name<...>` or `#dialect<name ...>`. Name is
	// the full mnemonic ("stablehlo.dot", "stablehlo.gather",
	// "stablehlo.conv", "stablehlo.comparison_direction",
	// "stablehlo.precision", "sdy.sharding", ...). Fields holds the body
	// parsed as `key = value` pairs where it has that shape; Raw always
	// holds the body's text between the angle brackets (after the mnemonic
	// in the `#d<name body>` form), its spacing normalized so that pretty
	// and generic spellings agree: no white space except one space
	// between two words, one after each comma, one either side of `=`;
	// strings kept verbatim. #stablehlo.conv's layout form
	// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` gets the nine fields of
	// ConvDimensionNumbers (input_batch_dimension, ...,
	// output_spatial_dimensions) as IntAttr and ArrayAttr of IntAttr.
	DialectAttr struct {
		Name   string
		Fields []NamedAttr
		Raw    string
	}
	// LocAttr is a location: `loc("file":1:2)`, `loc("name")`,
	// `loc(callsite(...))`, `loc(fused[...])`, `loc(unknown)`; kept as text,
	// `loc(...)` included. An op's `loc(#loc1)` is replaced by the alias's
	// location; aliases inside a location are kept as written.
	LocAttr struct{ Text string }
)

// Type kinds.
type (
	// TensorType is `tensor<2x?x3xf32>` or `tensor<*xf32>`. Dims holds -1
	// for a dynamic dimension; Unranked is set for `*`. Encoding is the
	// optional attribute after the element type (`#stablehlo.bounds<...>`).
	TensorType struct {
		Dims     []int64
		Unranked bool
		Elem     Type
		Encoding Attr
	}
	// IntType is `i32`, `si8`, `ui4`, `i1`. Signedness: 0 signless, 's' or 'u'.
	IntType struct {
		Width      int
		Signedness byte
	}
	// FloatType is `f32`, `bf16`, `f8E4M3FN`, ... as written.
	FloatType struct{ Name string }
	// ComplexType is `complex<f32>`.
	ComplexType struct{ Elem Type }
	// IndexType is `index`.
	IndexType struct{}
	// TupleType is `tuple<...>`.
	TupleType struct{ Elems []Type }
	// TokenType is `!stablehlo.token`.
	TokenType struct{}
	// FunctionType is `(ins) -> outs`.
	FunctionType struct{ Inputs, Results []Type }
	// QuantType is `!quant.uniform<i8:f32, 0.5:-3>` or its per-axis form
	// `!quant.uniform<i8<-127:127>:f32:1, {0.1:-1, 0.2:0}>`.
	QuantType struct {
		Storage    Type  // IntType
		StorageMin int64 // storage range; the type's full range when not written
		StorageMax int64
		HasRange   bool
		Expressed  Type // FloatType
		Axis       int  // -1 for per-tensor
		Scales     []float64
		ZeroPoints []int64
	}
	// OpaqueType is any other `!dialect.name<...>` type, or a builtin type
	// the AST does not model (`memref<...>`, `vector<...>`, `none`), kept
	// as text.
	OpaqueType struct{ Text string }
)

func (IntAttr) attr()        {}
func (FloatAttr) attr()      {}
func (BoolAttr) attr()       {}
func (StringAttr) attr()     {}
func (UnitAttr) attr()       {}
func (ArrayAttr) attr()      {}
func (DenseArrayAttr) attr() {}
func (DenseAttr) attr()      {}
func (DictAttr) attr()       {}
func (TypeAttr) attr()       {}
func (SymbolRefAttr) attr()  {}
func (EnumAttr) attr()       {}
func (DialectAttr) attr()    {}
func (LocAttr) attr()        {}

func (TensorType) typ()   {}
func (IntType) typ()      {}
func (FloatType) typ()    {}
func (ComplexType) typ()  {}
func (IndexType) typ()    {}
func (TupleType) typ()    {}
func (TokenType) typ()    {}
func (FunctionType) typ() {}
func (QuantType) typ()    {}
func (OpaqueType) typ()   {}

// Attr returns the op's attribute called name, or nil.
func (op *Op) Attr(name string) Attr {
	for _, a := range op.Attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return nil
}

// Error is a parse error at a position: FILE:LINE:COL: message.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }
