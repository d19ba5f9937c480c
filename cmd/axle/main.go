// Command axle parses, verifies, optimizes and runs HLO modules.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage() string {
	return `usage: axle <command> [flags] FILE...

FILE is HLO text (.hlo, .txt) or an HloModuleProto (.pb); without either extension, its content decides.

commands:
  parse [--short] [--replica-count N] FILE...   print modules in XLA's text form
  verify FILE...                                parse and verify modules
  run [--backend interp|cpu] [--threads T] [--opt] [--warmup K] [--repeat N] [--json] [--args FILE]
      [--inputs FILE.npz|A.npy,B.npy] [--save-outputs FILE.npz] FILE.hlo
                                                run a module on seeded random arguments (or given ones)
  opt [--backend cpu] [--passes p,q] [--skip-passes p] [--verify-each] [--timings]
      [--dump-to DIR] [--dump-pass-re RE] [--dump-format text,dot,html] FILE.hlo
                                                optimize a module with the standard pipeline (or the
                                                backend's: standard, then fusion) and print it
  aot --pkg NAME -o DIR [--main] [--import-path P] [--seed S] FILE
                                                compile a module ahead of time into a Go package (with --main,
                                                a command beside it) that runs without the compiler
  convert --to hlo|proto [-o OUT] FILE           write a module file (.hlo text or .pb HloModuleProto) as the other
  test-cases [--backend interp|cpu] [--opt] DIR... run conformance cases: PASS/FAIL per case, then "N passed, M failed"
  test-stablehlo [--backend interp|cpu] [--opt] DIR... run StableHLO test programs: PASS/FAIL/SKIP each, then counts
`
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	switch args[0] {
	case "parse":
		return cmdParse(args[1:], stdout, stderr)
	case "verify":
		return cmdVerify(args[1:], stdout, stderr)
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "opt":
		return cmdOpt(args[1:], stdout, stderr)
	case "aot":
		return cmdAOT(args[1:], stdout, stderr)
	case "convert":
		return cmdConvert(args[1:], stdout, stderr)
	case "test-cases":
		return cmdTestCases(args[1:], stdout, stderr)
	case "onnx-test":
		return cmdONNXTest(args[1:], stdout, stderr)
	case "test-stablehlo":
		return cmdTestStableHLO(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage())
		return 0
	}
	fmt.Fprintf(stderr, "axle: unknown command %q\n%s", args[0], usage())
	return 2
}
