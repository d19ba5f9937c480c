// Package tile runs the CPU backend's fusions. A fusion's program runs
// tile by tile (512 elements): each fused instruction is one vector-kernel
// call per tile, operands read in place or gathered through one composed
// affine index map (indexmap.go), narrow floats widened to f32 and
// rounded back after every op (narrow.go), integer operands read
// converted and a loop fusion's result stored as integers (quantizing,
// tile_int.go). Row programs fold the row
// reductions a fusion reads back (softmax, layer norm: tile_row.go,
// tile_fold.go); reduction programs fold a fusion's root by rows
// (tile_reduce.go); multi-output programs leave each output's tile in its
// own buffer (tile_multi.go); an Epilogue finishes the blocks a GEMM or
// convolution kernel hands over (epilogue.go).
//
// Where every op has x86-64 code (package jit), a loop fusion runs as one
// generated loop over vectors with values in registers (tile_jit*.go),
// and other programs run their runs of such ops as generated segments
// (tile_seg.go, tile_pipe.go): the same instructions as the kernels, so
// the same bits as the tile programs.
//
// ops.go is the one op table: per opcode its vector kernel or float64
// definition, its generated op, whether a fusion may recompute it, and
// whether it is a logical op on predicate masks; an init-time check ties
// the columns together. The package imports only hlo, jit and kernels:
// the backend's fusion passes ask it what a fusion may hold (Computes,
// Cheap, Type, CompileLoop), and its lowering runs what it compiles
// (Loop, Reduce, Multi, NewEpilogue).
package tile
