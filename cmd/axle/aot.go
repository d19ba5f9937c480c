package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/axle-ml/axle/aot/gen"
	"github.com/axle-ml/axle/hlo"
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
	embedLimit := fs.Int64("embed-limit", 256<<20, "the largest plan embedded in the package; larger ones ship beside the binary")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *pkg == "" || *dir == "" {
		fmt.Fprintln(stderr, "axle aot: give --pkg NAME, -o DIR and one module file")
		return 2
	}
	path := fs.Arg(0)
	mods, err := loadModules(path, 0, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := hlo.Verify(mods[0]); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	r, err := gen.Generate(mods[0], gen.Options{Package: *pkg, Dir: *dir, Main: *withMain, ImportPath: *importPath,
		Seed: *seed, EmbedLimit: *embedLimit})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	fmt.Fprintf(stdout, "lowered %s\n", loweringSummary(r.Lowering))
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
