// Package cpu is Axle's CPU backend. Compile optimizes a module with the
// standard pipeline, fuses it, lowers every instruction of the entry
// computation once to a kernel, schedules the instructions and assigns
// their buffers:
//
//   - The fusion passes (fusion_pipeline.go) are a pass.Pipeline run
//     once over the entry and every computation control flow calls:
//     reduce-iota-fusion, loop-fusion, fusion-dce, output-fusion,
//     multi-output-fusion, fusion-late-dce, each order with its reason.
//     Pipeline is the standard pipeline followed by them, what Compile
//     runs and `axle opt --backend cpu` dumps, verifies and times.
//   - Loop fusion (fusion.go): elementwise chains over f32/bf16/f16 with
//     the broadcasts, transposes, slices, reverses and reshapes of their
//     inputs (read through one composed affine index map, indexmap.go);
//     reduction fusion: a row reduction with its elementwise producer;
//     cheap producers (add, multiply, exp, ...) are recomputed in a second
//     fusion rather than stored, within a budget; nothing else is
//     duplicated.
//   - Output fusion (fusion_epilogue.go, lower_epilogue.go, both asking
//     product_plan.go whether the kernel can finish it): a dot or
//     convolution read only by one loop fusion, element for element
//     (bias, activation), joins it as a kOutput fusion; the GEMM or conv
//     kernel hands each block of its output to the fusion's tile program
//     as soon as the block is final, so the product is finished in cache
//     rather than written out and read back.
//   - Multi-output fusion (fusion_multi.go): loop fusions of the same
//     dimensions that read a full-size operand in common (an optimizer's
//     m', v' and W' all read the gradient), or a fusion and its producer
//     whose value is also read elsewhere, merge into one fusion whose
//     fused root is a tuple; its readers read get-tuple-elements of it.
//   - Tile programs (tile.go, tile_reduce.go, tile_multi.go): a fusion
//     runs tile by tile (512 elements), each fused instruction one vector
//     kernel call per tile; reductions fold each tile's row segments; a
//     multi-output program leaves each output's tile in its own buffer.
//   - Generated code (tile_jit.go, tile_seg.go, package jit): a loop
//     fusion whose ops all have x86-64 code runs as one generated loop
//     over vectors, values in registers; other programs run their runs
//     of such ops as generated segments. Same instructions as the
//     kernels, so the same bits as the tile programs.
//   - Kernels: dot and convolution on the GEMM of package kernels
//     (lower_linalg.go), data movement, convert, select, reduce and
//     reduce-window compiled with their index arithmetic resolved at
//     compile time (lower_movement*.go, lower_reduce*.go); anything else
//     runs on the evaluator's handler for its opcode.
//   - Scheduling (schedule.go) and buffer assignment (buffers.go): the
//     module's order, a memory-greedy list schedule and a depth-first one
//     are tried and the one needing the smallest arena is kept; reshapes
//     are views; fusions, dynamic-update-slice and evaluator kernels may
//     compute over an operand that dies; a multi-output fusion's tuple has
//     a buffer per element, which its get-tuple-elements view;
//     intermediates share one arena per execution, placed by
//     decreasing-size best fit.
//   - Execution (execute.go): arenas and output buffers are pooled across
//     executions (Recycle), donated arguments may hold outputs (Run), and
//     an executable may run on many goroutines at once.
//   - A cost model (costmodel.go) runs tiny modules on the evaluator when
//     the caller expects too few executions to repay compiling.
//
// The runtime API (package axle at the repository root) is the way in
// for users; this package is its engine.
package cpu
