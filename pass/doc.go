// Package pass runs HLO passes: a Pass is a named module transformation,
// a Pipeline one ordered table of them with nested fixed-point groups (XLA's
// HloPassPipeline and HloPassFix). The pipeline checks invariants between
// passes (the verifier, and that a pass reporting "unchanged" changed
// nothing), times every pass, selects passes by name, and hands the module
// after each pass to observers such as the dumpers.
package pass
