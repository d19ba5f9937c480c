// Package mlir reads MLIR text as JAX, PyTorch/XLA and stablehlo-opt print
// it (the func, stablehlo, chlo, sdy and check dialects, pretty and generic
// forms) into one generic-form AST: ops with operands, typed results, an
// attribute dictionary and regions. It knows syntax, not semantics; the
// parent package stablehlo turns the AST into an hlo.Module.
//
// Parse reads a file (a module, or bare top-level ops); SplitFile cuts the
// reference interpreter's `// -----` files into sections that keep their
// line numbers; Print and (*Module).String write the generic form back.
// Errors are *Error values reading FILE:LINE:COL: message.
//
// The files: lexer.go (tokens), parser.go (top level, scopes, values),
// ops.go (generic ops, regions, blocks), types.go, attrs.go, dense.go,
// dialectattr.go, convdims.go and resources.go (attributes), the
// pretty_*.go files (each dialect's custom assembly, normalized to the
// generic attributes; pretty_stablehlo.go is the table of the forms a spec
// string describes), split.go, printer.go and printtypes.go. ast.go is
// the contract with the converter and records the choices made.
package mlir
