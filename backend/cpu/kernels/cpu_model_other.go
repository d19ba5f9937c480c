//go:build !amd64 || purego

package kernels

// CPUModel reports the CPU's vendor string, family and model as CPUID
// gives them, for benchmark notes and diagnostics. Where the kernels have
// no assembly (this build) it returns "", 0, 0.
func CPUModel() (vendor string, family, model int) { return "", 0, 0 }

// L2Bytes reports one core's level-2 cache in bytes: unknown (0) here.
func L2Bytes() int { return 0 }

// useBF16 says whether the AVX512_BF16 kernels can run: never here.
var useBF16 = false

// preferBF16DP says whether GemmNarrowF32 runs bf16×bf16 products on the
// VDPBF16PS path: never by default here; tests set it to run the path on
// the kernels' Go twin.
var preferBF16DP = false

// wideGemm says whether the f32 and f64 GEMM may take their AVX-512
// kernels: the question does not arise here.
const wideGemm = true

// Kernels names the kernel families this process runs: the pure-Go ones.
func Kernels() string { return "purego" }
