package cpu

import "github.com/axle-ml/axle/hlo"

// lowerComplex compiles elementwise ops over complex values (stub).
func lowerComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) { return nil, false }

// lowerDotComplex compiles a dot of complex operands (stub).
func lowerDotComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) { return nil, false }
