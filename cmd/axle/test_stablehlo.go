package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/stablehlo"
)

// cmdTestStableHLO runs StableHLO test programs (the corpus's self-checking
// files and the interpreter's split test files):
// axle test-stablehlo [--backend interp|cpu] [--opt] DIR...
// It prints PASS, FAIL or SKIP per program and "N passed, M failed, K
// skipped" last. Only RUN-DISABLED programs and serialized-probe checks
// are skipped; a program the converter does not support yet fails.
func cmdTestStableHLO(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("test-stablehlo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", "interp", "backend to run the programs on (interp, cpu)")
	threads := fs.Int("threads", 0, "worker threads of the cpu backend (0: GOMAXPROCS)")
	optimize := fs.Bool("opt", false, "run the optimization pipeline before executing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "axle test-stablehlo: no directories given")
		return 2
	}
	if *backend != "interp" && *backend != "cpu" {
		fmt.Fprintf(stderr, "axle test-stablehlo: unknown backend %q (available: interp, cpu)\n", *backend)
		return 2
	}
	c, err := axle.NewClient(axle.ClientOptions{Backend: *backend, Threads: *threads})
	if err != nil {
		fmt.Fprintln(stderr, "axle test-stablehlo:", err)
		return 2
	}
	cases, err := stablehlo.FindCases(fs.Args()...)
	if err != nil {
		fmt.Fprintln(stderr, "axle test-stablehlo:", err)
		return 1
	}
	exec := func(m *hlo.Module, args []*hlo.Literal) ([]*hlo.Literal, error) {
		if *optimize {
			if _, err := opt.Standard().Run(m); err != nil {
				return nil, err
			}
		}
		x, err := c.Compile(m, axle.CompileOptions{})
		if err != nil {
			return nil, err
		}
		return x.ExecuteLiterals(args...)
	}
	passed, failed, skipped := 0, 0, 0
	for _, tc := range cases {
		o := stablehlo.RunCase(tc, exec)
		// interpreter.print output goes to the log, apart from the
		// PASS/FAIL lines.
		for _, line := range o.Printed {
			fmt.Fprintf(stderr, "PRINT %s: %s\n", tc.Name, line)
		}
		switch o.Status {
		case "pass":
			passed++
			fmt.Fprintf(stdout, "PASS %s\n", tc.Name)
		case "skip":
			skipped++
			fmt.Fprintf(stdout, "SKIP %s: %s\n", tc.Name, o.Reason)
		case "unsupported":
			failed++
			fmt.Fprintf(stdout, "FAIL %s: unsupported: %s\n", tc.Name, o.Reason)
		default:
			failed++
			fmt.Fprintf(stdout, "FAIL %s: %s\n", tc.Name, o.Reason)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 {
		return 1
	}
	return 0
}
