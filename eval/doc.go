// Package eval is Axle's reference evaluator (XLA's HloEvaluator): it runs
// a verified module on literals, instruction by instruction, with XLA's
// operation semantics. It is the oracle for passes and backends, what
// constant folding calls, and the fallback for tiny computations, so it is
// written to be obviously correct first. Each op family lives in its own
// file and registers its handlers in the dispatch table.
package eval
