package cpu

import "github.com/axle-ml/axle/hlo"

// lowerRandom compiles rng-bit-generator and rng (stub: not yet).
func lowerRandom(in *hlo.Instruction, threads int) (kernel, bool) { return nil, false }
