package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/load"
	"github.com/axle-ml/axle/npy"
	"github.com/axle-ml/axle/stablehlo"
)

// runInputs are the arrays of run's --inputs, read before the module so
// that their shapes can refine a StableHLO entry's dynamic dimensions.
type runInputs struct {
	spec    string
	arrays  []npy.Input
	dimVars []int64 // the values of the entry's dimension variables, if any
}

// loadForRun reads run's module and its --inputs (spec, "" for none).
// For StableHLO the inputs come first: the module is converted for their
// shapes, as jax.export's shape refinement compiles a shape-polymorphic
// export for the concrete arguments.
func loadForRun(path, spec, argsFile string, warn io.Writer) ([]*hlo.Module, *runInputs, error) {
	if spec == "" {
		mods, err := loadModules(path, 0, warn)
		return mods, nil, err
	}
	if argsFile != "" {
		return nil, nil, errors.New("axle run: --inputs: --args gives the arguments too: give one of the two")
	}
	arrays, err := npy.LoadInputs(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("axle run: --inputs: %w", err)
	}
	in := &runInputs{spec: spec, arrays: arrays}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if load.FormatOf(path, data) != load.MLIR {
		mods, err := load.Bytes(path, data, load.Options{Warn: warnTo(warn)})
		return mods, in, err
	}
	sig, err := load.Signature(path, data, load.Options{})
	if err != nil {
		return nil, nil, err
	}
	in.skipDimVars(sig)
	shapes, err := in.argShapes(sig)
	if err != nil {
		return nil, nil, fmt.Errorf("axle run: --inputs: %w", err)
	}
	if in.dimVars, err = sig.DimensionValues(shapes); err != nil {
		return nil, nil, fmt.Errorf("%s: --inputs %s: %w", path, spec, err)
	}
	mods, err := load.Bytes(path, data, load.Options{ArgShapes: shapes})
	return mods, in, err
}

// skipDimVars numbers positional arrays (arr_0, arg0, a list of .npy
// files) from the first argument after the entry's dimension variables
// when the arrays are exactly that many: a JAX caller passes the arrays
// only, the variables' values following from their shapes.
func (in *runInputs) skipDimVars(sig stablehlo.Signature) {
	if sig.DimVars == 0 || len(in.arrays) != len(sig.Args)-sig.DimVars {
		return
	}
	for i := range in.arrays {
		a := &in.arrays[i]
		if n := npy.Position(a.Name); n >= 0 {
			a.Name = fmt.Sprintf("arg%d", n+sig.DimVars)
		} else if a.Pos >= 0 {
			a.Pos += sig.DimVars
		}
	}
}

// argShapes are the shapes of the entry's arguments when it is given the
// arrays: an array's dimensions with the declared element type (a wrong
// element type is reported when the arrays are bound). An argument no
// array matches keeps its declared shape: a dimension variable, or an
// error if it has dynamic dimensions.
func (in *runInputs) argShapes(sig stablehlo.Signature) ([]hlo.Shape, error) {
	params := make([]*hlo.Instruction, len(sig.Args))
	for i, sh := range sig.Args {
		params[i] = &hlo.Instruction{Name: fmt.Sprintf("arg%d", i), Opcode: hlo.OpParameter, Shape: sh, ParamNumber: int64(i)}
	}
	shapes := hlo.CloneShapes(sig.Args)
	given := make([]bool, len(shapes))
	for _, a := range in.arrays {
		i := npy.ParamFor(a, params)
		if i < 0 || !sig.Args[i].IsArray() {
			continue // npy.BindInputs reports it with the module's parameters
		}
		shapes[i] = hlo.ArrayShape(sig.Args[i].DType, a.Lit.Shape().Dims...)
		given[i] = true
	}
	for i, sh := range shapes {
		if !given[i] && !isStaticShape(sh) {
			return nil, fmt.Errorf("no array for parameter %s in %s, whose dynamic dimensions it would give", npy.DescribeParam(params[i]), in.spec)
		}
	}
	return shapes, nil
}

// bind matches the arrays to m's parameters (see npy.BindInputs).
func (in *runInputs) bind(m *hlo.Module) ([]*hlo.Literal, error) {
	return npy.BindInputs(in.arrays, in.spec, m, in.dimVars)
}

// isStaticShape reports whether no dimension of sh is dynamic.
func isStaticShape(sh hlo.Shape) bool {
	for _, e := range sh.Tuple {
		if !isStaticShape(e) {
			return false
		}
	}
	for _, d := range sh.Dims {
		if d < 0 {
			return false
		}
	}
	return true
}
