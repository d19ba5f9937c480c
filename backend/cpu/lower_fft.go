package cpu

import "github.com/axle-ml/axle/hlo"

// lowerFFT compiles an fft instruction (stub: not yet compiled).
func lowerFFT(in *hlo.Instruction, threads int) (kernelFunc, bool) { return nil, false }
