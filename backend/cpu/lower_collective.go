package cpu

import "github.com/axle-ml/axle/hlo"

// lowerSingleDevice compiles the collectives and the other ops whose
// meaning on one device is a copy or a constant (stub: not yet).
func lowerSingleDevice(in *hlo.Instruction, threads int) (kernel, string, bool) { return nil, "", false }
