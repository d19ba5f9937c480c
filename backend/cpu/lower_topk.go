package cpu

import "github.com/axle-ml/axle/hlo"

// lowerTopK compiles topk (stub: not yet).
func lowerTopK(in *hlo.Instruction, threads int) (kernel, bool) { return nil, false }
