package stablehlo

import (
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Signature is what a module's entry function takes, read before
// converting it: a caller with concrete arguments (an .npz of inputs)
// matches them to it and converts with their shapes as Options.ArgShapes.
type Signature struct {
	// Args are the declared shapes of the arguments; a `?` dimension is
	// hlo.Unbounded.
	Args []hlo.Shape
	// DimVars is how many leading arguments are dimension variables:
	// scalar integers whose values are the sizes of the other arguments'
	// `?` dimensions, as some jax.export versions pass them to @main.
	// Their values follow from the other arguments' shapes
	// (DimensionValues), so a caller need not supply them.
	DimVars int
	// VarNames are the dimension variables' names where the function
	// gives them (jax.global_constant), else "".
	VarNames []string
}

// EntrySignature returns the signature of m's entry function (entry: as
// Options.Entry).
func EntrySignature(m *mlir.Module, entry string) (Signature, error) {
	c := &converter{src: m, funcs: map[string]*mlir.Op{}, opts: Options{Entry: entry}}
	f, err := c.findEntry(c.collectFuncs())
	if err != nil {
		return Signature{}, err
	}
	body, err := funcBody(f)
	if err != nil {
		return Signature{}, err
	}
	sig := Signature{Args: make([]hlo.Shape, len(body.Args))}
	for i, a := range body.Args {
		if sig.Args[i], err = shapeOfType(a.Type); err != nil {
			return Signature{}, fmt.Errorf("%s: argument %d (%s): %w", f.Pos, i, a.Name, err)
		}
	}
	sig.DimVars = countDimVars(sig.Args)
	for i := range sig.DimVars {
		name := ""
		for _, e := range dictEntries(f.Attr("arg_attrs"), i) {
			if e.Name == "jax.global_constant" {
				name = stringAttr(e.Value)
			}
		}
		sig.VarNames = append(sig.VarNames, name)
	}
	return sig, nil
}

// collectFuncs records the module's functions and returns its public
// ones.
func (c *converter) collectFuncs() []*mlir.Op {
	var public []*mlir.Op
	for _, op := range c.src.Ops {
		if op.Name != "func.func" {
			continue
		}
		c.funcs[stringAttr(op.Attr("sym_name"))] = op
		if stringAttr(op.Attr("sym_visibility")) != "private" {
			public = append(public, op)
		}
	}
	return public
}

// countDimVars counts the leading scalar integer arguments of a function
// whose other arguments have `?` dimensions: its dimension variables.
func countDimVars(args []hlo.Shape) int {
	n := 0
	for n < len(args) && args[n].IsArray() && args[n].Rank() == 0 && args[n].DType.IsInteger() {
		n++
	}
	for _, a := range args[n:] {
		if !isStatic(a) {
			return n
		}
	}
	return 0
}

// DimensionValues returns the values of the dimension variables when the
// arguments have the given shapes: in order, the sizes of the `?`
// dimensions of the arguments after them. A later `?` must have the size
// of one of the variables (a function with fewer variables than `?`s
// repeats them); one that has none is an error naming the argument.
func (sig Signature) DimensionValues(shapes []hlo.Shape) ([]int64, error) {
	if sig.DimVars == 0 {
		return nil, nil
	}
	if len(shapes) != len(sig.Args) {
		return nil, fmt.Errorf("%d arguments, got %d shapes", len(sig.Args), len(shapes))
	}
	var vals []int64
	for i := sig.DimVars; i < len(sig.Args); i++ {
		for d, n := range sig.Args[i].Dims {
			if n >= 0 || d >= len(shapes[i].Dims) {
				continue
			}
			size := shapes[i].Dims[d]
			if len(vals) < sig.DimVars {
				vals = append(vals, size)
				continue
			}
			if !contains(vals, size) {
				return nil, fmt.Errorf("argument %d: dimension %d has size %d, which no dimension variable has (%s)", i, d, size, sig.varList(vals))
			}
		}
	}
	if len(vals) < sig.DimVars {
		return nil, fmt.Errorf("%d dimension variables for %d dynamic dimensions: %w", sig.DimVars, len(vals), ErrUnsupported)
	}
	return vals, nil
}

// varList prints the variables' values: "b = 3, n = 5".
func (sig Signature) varList(vals []int64) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		name := fmt.Sprintf("variable %d", i)
		if i < len(sig.VarNames) && sig.VarNames[i] != "" {
			name = sig.VarNames[i]
		}
		parts[i] = fmt.Sprintf("%s = %d", name, v)
	}
	return strings.Join(parts, ", ")
}

func contains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
