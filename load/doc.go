// Package load reads a module file in any format Axle takes — HLO text
// (.hlo, .txt), an HloModuleProto or XLA's HloProto dump (.pb, gzipped
// too) and StableHLO in MLIR text (.mlir) — choosing the reader by the
// file's extension or, when that says nothing, by its content.
//
// It is its own package, rather than part of the root package's runtime,
// so that tools which only read modules (converters, linters, the
// command's parse and verify) do not link the CPU backend, and so that the
// format readers' own tests may run modules on the runtime without an
// import cycle. The runtime's Client.CompileFile and Client.CompileBytes
// come through here.
//
// A StableHLO module exported shape-polymorphically (`tensor<?x4xf32>`)
// is refined to the concrete shapes of Options.ArgShapes, as
// jax.export's shape refinement does; Signature tells a caller, before
// converting, what the entry takes.
package load
