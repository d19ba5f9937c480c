// Package mlir reads MLIR text as JAX, PyTorch/XLA and stablehlo-opt print
// it (the func, stablehlo, chlo, sdy and check dialects, pretty and generic
// forms) into one generic-form AST: ops with operands, typed results, an
// attribute dictionary and regions. It knows syntax, not semantics; the
// parent package stablehlo turns the AST into an hlo.Module.
package mlir
