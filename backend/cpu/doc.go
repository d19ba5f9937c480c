// Package cpu is Axle's CPU backend: it optimizes a module with the
// standard pipeline, fuses elementwise chains into loop fusions, and
// lowers every instruction of the entry computation once, at compile
// time, to a thunk: fusions to tile programs (each fused instruction
// computes a whole tile of a few hundred elements with one typed loop),
// dot and convolution to the kernels of package kernels, everything else
// to the reference evaluator's handler for that opcode.
//
// This is the first slice of the backend: buffers are plain literals
// (no buffer assignment or arena yet), tile programs cover f32
// elementwise chains with scalar broadcasts, and control flow runs
// through the evaluator.
package cpu
