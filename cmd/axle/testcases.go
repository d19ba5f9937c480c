package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
)

// cmdTestCases runs conformance case files:
// axle test-cases [--backend interp] [--opt] DIR...
func cmdTestCases(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("test-cases", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", "interp", "backend to run the cases on (interp, cpu)")
	threads := fs.Int("threads", 0, "worker threads of the cpu backend (0: GOMAXPROCS)")
	optimize := fs.Bool("opt", false, "run the optimization pipeline before executing")
	var of optFlags
	of.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "axle test-cases: no case directories given")
		return 2
	}
	if *backend != "interp" && *backend != "cpu" {
		fmt.Fprintf(stderr, "axle test-cases: unknown backend %q (available: interp, cpu)\n", *backend)
		return 2
	}
	c, err := axle.NewClient(axle.ClientOptions{Backend: *backend, Threads: *threads})
	if err != nil {
		fmt.Fprintln(stderr, "axle test-cases:", err)
		return 2
	}
	r := &conformance.Runner{Backend: &axle.ModuleRunner{Client: c}}
	if *optimize {
		opts := of.options()
		r.Prepare = func(m *hlo.Module) error {
			_, err := opt.Standard().RunWith(m, opts)
			return err
		}
	}
	files, err := conformance.FindCases(fs.Args()...)
	if err != nil {
		fmt.Fprintln(stderr, "axle test-cases:", err)
		return 1
	}
	if _, failed := r.RunFiles(files, stdout); failed > 0 {
		return 1
	}
	return 0
}
