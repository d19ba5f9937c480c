// Package xb builds HLO modules from Go, op by op, in the manner of XLA's
// XlaBuilder.
//
// A Builder holds one computation under construction; ops are package
// functions (xb.Add, xb.MatMul, xb.Softmax, ...) taking and returning *Op.
// Every op's shape is checked when it is added, by hlo.InferShape, the same
// rules the verifier applies. The first error is recorded with the Go
// file and line that asked for the op; from then on every op returns a
// poisoned *Op and Build returns that error, so a model is written without
// an error check per line:
//
//	b := xb.New("mlp")
//	x := b.Param("x", hlo.F32, 8, 784)
//	w := b.Param("w", hlo.F32, 784, 10)
//	logits := xb.MatMul(x, w)
//	m, err := b.Build(xb.Softmax(logits, -1)) // err: "model.go:42: ..."
//
// Sub-computations (reduce bodies, while conditions and bodies,
// conditional branches) are Go functions that receive a fresh Builder and
// their parameters. HLO has no captures: values of the enclosing
// computation must be passed in as operands.
//
// Each Op keeps its inputs and its hlo.Instruction, so the built graph can
// be walked (for automatic differentiation, say) before or after Build.
package xb
