// Package hlo holds Axle's intermediate representation: XLA's High Level
// Optimizer IR. It owns element types, shapes and layouts, literals, the
// opcode table, instructions, computations and modules, shape inference
// and the verifier. Text parsing and printing live in hlo/hlotext.
package hlo
