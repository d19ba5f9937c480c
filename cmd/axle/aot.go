package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/axle-ml/axle/aot"
	"github.com/axle-ml/axle/aot/gen"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
)

// cmdAOT compiles a module ahead of time into a Go package:
// axle aot --pkg NAME -o DIR [--main] [--import-path P] [--seed S] FILE
func cmdAOT(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("aot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pkg := fs.String("pkg", "", "the Go package's name")
	dir := fs.String("o", "", "the folder to write the package to")
	withMain := fs.Bool("main", false, "also write a command running the package, in DIR/cmd/NAME")
	importPath := fs.String("import-path", "", "the package's import path (default: from the go.mod above DIR)")
	seed := fs.Uint64("seed", 1, "seed of the values of elided constants and of the command's random arguments (as axle run --seed)")
	inputs := fs.String("inputs", "", "ONNX: arrays (.npz, by graph input name or arr_0, ...) whose shapes the module is compiled for (default: the model's, dynamic dimensions 1)")
	embedLimit := fs.Int64("embed-limit", 256<<20, "the largest plan embedded in the package; larger ones ship beside the binary")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *pkg == "" || *dir == "" {
		fmt.Fprintln(stderr, "axle aot: give --pkg NAME, -o DIR and one module file")
		return 2
	}
	path := fs.Arg(0)
	m, err := aotModule(path, *inputs, *seed, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	r, err := gen.Generate(m, gen.Options{Package: *pkg, Dir: *dir, Main: *withMain, ImportPath: *importPath,
		Seed: *seed, EmbedLimit: *embedLimit})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	fmt.Fprintf(stdout, "lowered %s\n", aot.LoweringSummary(r.Lowering))
	how := "embedded"
	if !r.Embedded {
		how = "beside the binary (over --embed-limit)"
	}
	fmt.Fprintf(stdout, "plan %d bytes, %s\n", r.PlanBytes, how)
	for _, f := range slices.Sorted(slices.Values(r.Files)) {
		fmt.Fprintf(stdout, "wrote %s\n", f)
	}
	return 0
}

// aotModule is the module a file holds, verified; for an ONNX model, the
// whole graph as one module for the shapes of --inputs (or the model's
// own, dynamic dimensions 1), which needs every node compiled.
func aotModule(path, inputs string, seed uint64, stderr io.Writer) (*hlo.Module, error) {
	if !isONNX(path) {
		mods, err := loadModules(path, 0, stderr)
		if err != nil {
			return nil, err
		}
		if err := hlo.Verify(mods[0]); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return mods[0], nil
	}
	model, err := onnx.Load(path)
	if err != nil {
		return nil, err
	}
	vals, err := modelInputs(model.Graph.Inputs, onnxRun{inputs: inputs, seed: seed})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	byName := map[string]*onnx.Value{}
	for i, vi := range model.Graph.Inputs {
		byName[vi.Name] = vals[i]
	}
	return graph.Module(model, byName) // its errors name the model

}
