//go:build amd64 && !purego

package kernels

import (
	"golang.org/x/sys/cpu"
)

// useAsm says whether the AVX2+FMA kernels run.
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA && kernelsEnv != "purego"

// useAVX512 says whether the AVX-512 kernels run as well: on a machine
// with AVX-512 F and DQ (every AVX-512 CPU since Skylake-SP; the OS must
// save the ZMM state, which x/sys/cpu checks) unless AXLE_KERNELS=avx2
// asks for the AVX2 kernels alone, for A/B runs.
// hasF16C: the half conversions' instructions (every AVX2 machine has
// them; the check is for the rare hypervisor that hides them).
var hasF16C = useAsm && cpu.X86.HasF16C

var useAVX512 = useAsm && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && kernelsEnv != "avx2"

// useVNNI says whether the 8-bit GEMM runs its AVX-512 VNNI kernels
// (VPDPBUSD, gemm_quad.go) where the AVX-512 kernels run, unless
// AXLE_KERNELS=avx512 asks for AVX-512 F/DQ kernels alone (the s16-pair
// path, for A/B runs).
var useVNNI = useAVX512 && cpu.X86.HasAVX512VNNI && kernelsEnv != "avx512"
