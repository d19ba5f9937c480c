package stablehlo

import (
	"fmt"
	"github.com/axle-ml/axle/hlo"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Attribute readers. The generic form holds integer lists as
// `array<i64: ...>`; older producers write `dense<[...]> : tensor<Nxi64>`
// or `[1, 2]`: all are accepted.

func stringAttr(a mlir.Attr) string {
	switch a := a.(type) {
	case mlir.StringAttr:
		return a.Value
	case mlir.SymbolRefAttr:
		return a.Name
	}
	return ""
}

// intsOf reads an integer list attribute.
func intsOf(a mlir.Attr) ([]int64, error) {
	switch a := a.(type) {
	case nil:
		return nil, nil
	case mlir.DenseArrayAttr:
		if a.Ints == nil && a.Floats != nil {
			return nil, fmt.Errorf("float array where integers are expected")
		}
		return a.Ints, nil
	case mlir.ArrayAttr:
		out := make([]int64, len(a.Elems))
		for i, e := range a.Elems {
			v, ok := intOf(e)
			if !ok {
				return nil, fmt.Errorf("array element %d is not an integer", i)
			}
			out[i] = v
		}
		return out, nil
	case mlir.DenseAttr:
		return denseInts(a)
	case mlir.IntAttr:
		return []int64{a.Value}, nil
	}
	return nil, fmt.Errorf("attribute %T is not an integer list", a)
}

// denseInts reads the integer (or boolean) elements of a dense attribute,
// splats expanded.
func denseInts(d mlir.DenseAttr) ([]int64, error) {
	n := 1
	if tt, ok := d.Type.(mlir.TensorType); ok {
		for _, x := range tt.Dims {
			n *= int(x)
		}
	}
	if d.Hex != nil {
		lit, err := denseLiteral(d, hlo.Shape{})
		if err != nil {
			return nil, err
		}
		out := make([]int64, lit.Len())
		for i := range out {
			out[i] = lit.GetInt64(i)
		}
		return out, nil
	}
	out := make([]int64, 0, n)
	for _, tok := range d.Elems {
		v, err := parseIntToken(tok)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if (d.Splat || len(out) == 1) && n != 1 {
		v := int64(0)
		if len(out) == 1 {
			v = out[0]
		}
		out = out[:0]
		for range n {
			out = append(out, v)
		}
	}
	return out, nil
}

func parseIntToken(tok string) (int64, error) {
	tok = strings.TrimSpace(tok)
	switch tok {
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	}
	if v, err := strconv.ParseInt(tok, 0, 64); err == nil {
		return v, nil
	}
	u, err := strconv.ParseUint(tok, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("bad integer %q", tok)
	}
	return int64(u), nil
}

func intOf(a mlir.Attr) (int64, bool) {
	switch a := a.(type) {
	case mlir.IntAttr:
		return a.Value, true
	case mlir.BoolAttr:
		if a.Value {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// boolOf reads a boolean attribute (a unit attribute counts as true).
func boolOf(a mlir.Attr) bool {
	switch a := a.(type) {
	case mlir.BoolAttr:
		return a.Value
	case mlir.UnitAttr:
		return true
	case mlir.IntAttr:
		return a.Value != 0
	}
	return false
}

func floatOf(a mlir.Attr) (float64, bool) {
	switch a := a.(type) {
	case mlir.FloatAttr:
		return a.Value, true
	case mlir.IntAttr:
		return float64(a.Value), true
	}
	return 0, false
}

// enumOf reads an enum written as `#stablehlo<name VALUE>`, a bare
// keyword or a string.
func enumOf(a mlir.Attr) string {
	switch a := a.(type) {
	case mlir.DialectAttr:
		return strings.TrimSpace(a.Raw)
	case mlir.EnumAttr:
		return a.Value
	case mlir.StringAttr:
		return a.Value
	}
	return ""
}

// field returns a named field of a dialect attribute's body.
func field(a mlir.Attr, name string) mlir.Attr {
	d, ok := a.(mlir.DialectAttr)
	if !ok {
		return nil
	}
	for _, f := range d.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// opInts reads an integer list attribute of op.
func opInts(op *mlir.Op, name string) ([]int64, error) {
	v, err := intsOf(op.Attr(name))
	if err != nil {
		return nil, fmt.Errorf("attribute %s: %w", name, err)
	}
	return v, nil
}

// opInt reads an integer attribute of op, with a default.
func opInt(op *mlir.Op, name string, def int64) int64 {
	if v, ok := intOf(op.Attr(name)); ok {
		return v
	}
	return def
}

// pairs reads an Nx2 integer attribute (padding) as lows and highs.
func pairs(a mlir.Attr, n int) (lo, hi []int64, err error) {
	lo, hi = make([]int64, n), make([]int64, n)
	if a == nil {
		return lo, hi, nil
	}
	v, err := intsOf(a)
	if err != nil {
		return nil, nil, err
	}
	if len(v) != 2*n {
		return nil, nil, fmt.Errorf("padding has %d values for %d dimensions", len(v), n)
	}
	for i := range n {
		lo[i], hi[i] = v[2*i], v[2*i+1]
	}
	return lo, hi, nil
}

// orOnes returns v, or n ones when v is empty.
func orOnes(v []int64, n int) []int64 {
	if len(v) != 0 {
		return v
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
