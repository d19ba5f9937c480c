// Package stablehlo converts StableHLO programs, as JAX, PyTorch/XLA and
// GoMLX write them in MLIR text, into Axle's HLO modules, so that every
// later stage (verifier, passes, backends, evaluator) runs them.
//
// The MLIR text is parsed by package stablehlo/mlir into MLIR's generic
// form; Convert walks that AST: the entry function (`@main`, else the
// single public function) becomes the entry computation, calls are
// inlined, regions become called computations (reducers, comparators,
// while condition and body, conditional branches), CHLO ops are
// decomposed into HLO, and dynamic dimensions are refined to the static
// shapes of the arguments.
//
// ConvertProgram additionally turns the `check.*` ops of StableHLO's test
// suites into extra outputs of the entry computation and returns the
// comparisons to make on the host (Program.Compare), which is what
// `axle test-stablehlo` and this package's corpus test run. The
// interpreter's own ops are handled there too: interpreter.run_parallel,
// interpreter.print (its values become outputs for the runner's log,
// Program.Printed), and a RUN line's --args (the entry's arguments, fed
// in by RunCase). The custom_call forms of the checks keep
// stablehlo-translate's tolerances (expect_almost_eq 1e-3).
package stablehlo
