package cpu

import "github.com/axle-ml/axle/hlo"

// lowerTriangularSolve compiles a triangular-solve (stub: not yet compiled).
func lowerTriangularSolve(in *hlo.Instruction, threads int) (kernelFunc, bool) { return nil, false }

// lowerCholesky compiles a cholesky (stub: not yet compiled).
func lowerCholesky(in *hlo.Instruction, threads int) (kernelFunc, bool) { return nil, false }
