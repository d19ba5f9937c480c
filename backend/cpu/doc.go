// Package cpu is Axle's CPU backend's engine. Compile has the compiler
// (package backend/cpu/compiler, registered through package frontend:
// this package imports no parser, pass, evaluator or code generator) run
// the standard passes and this package's fusion passes (FusionPasses),
// then lowers each computation the backend runs as a program to kernels,
// schedules it and assigns its buffers; the Executable it returns holds
// only what execution needs. With Options.RecordPlan it keeps what it
// decided (Plan: the lowering each instruction took, the schedules), and
// Load lowers a fused module following a plan without any compiler: what
// an ahead-of-time package (package aot) runs. In reading order:
//
//   - The pipeline (fusion_pipeline.go): reduce-iota-fusion,
//     int8-dot-fusion (fusion_int8_dot.go), loop-fusion,
//     fusion-dce, output-fusion, multi-output-fusion, fusion-late-dce,
//     each ordering with its reason, run once over the entry and every
//     computation control flow calls (sequentialComputations).
//     `axle opt --backend cpu` dumps, verifies and times every pass.
//   - Fusion policy (fusion*.go): loop fusion of elementwise chains with
//     the index ops of their inputs; cheap producers recomputed within a
//     budget (fusion_copy.go); output fusion of a dot or convolution with
//     its elementwise reader (fusion_epilogue.go); multi-output fusion of
//     siblings (fusion_multi.go). What the fusions may hold is package
//     tile's op table; whether a product's kernel can finish an epilogue
//     is product_plan.go's, which fusion and lowering both ask: neither
//     calls the other.
//   - The compiler (compiler.go): options, threads, lowering counts and
//     fallbacks; it compiles every called computation (while bodies,
//     branches, calls, fusion bodies no fused kernel takes, async
//     computations) once, from the same module, with the same options.
//   - Lowering (lower_table.go, lower_*.go): per opcode an ordered list
//     of named lowerings of one kernel shape, tried in order, the
//     evaluator's handler last; the names are what `axle run` reports.
//     One file per op family: fusions run as tile programs (package tile),
//     dot and convolution on the GEMM and convolution kernels (package
//     kernels), movement, reduce, sort, scatter and the rest with their
//     index arithmetic resolved at compile time; reducers and comparators
//     that are not one op run as lane programs (lanes.go). Collectives
//     (lower_collective_devices.go) run package collective's Do through
//     the frame's participant in a multi-device launch (RunOn), the
//     single-device copies (lower_collective.go) otherwise.
//   - Scheduling (schedule.go) and buffer assignment (buffers.go): the
//     order needing the smallest arena of three candidates; views,
//     in-place updates, one pooled arena per execution.
//   - Branch sections (branches.go): where two independent branches of
//     small steps meet at a join (a bidirectional RNN's directions), they
//     run at once on two threads; their values keep their buffers until
//     the join.
//   - Plans (plan.go): recording what compiling decided, and Load.
//   - Execution (execute.go, run.go, runstate.go): arenas and outputs pooled across
//     executions, donation, many goroutines at once, cancellation.
//   - A cost model (costmodel.go) runs tiny modules on the evaluator when
//     the caller expects too few executions to repay compiling.
//
// ADDING_AN_OP.md at the repository root lists what an opcode touches
// here. The runtime API (package axle at the repository root) is the way
// in for users; this package is its engine.
package cpu
