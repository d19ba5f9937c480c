//go:build amd64 && !purego

package kernels

import (
	"os"

	"golang.org/x/sys/cpu"
)

// The CPU's vendor, family and model, read once with CPUID: x/sys/cpu
// reports features, not which core implements them, and two cores with
// the same features can want different kernels (cpuPolicies).
var cpuVendor, cpuFamily, cpuModelNumber = readCPUModel()

// CPUModel reports the CPU's vendor string ("GenuineIntel",
// "AuthenticAMD", ...), family and model as CPUID gives them (extended
// family and model folded in: Emerald Rapids is 6, 207; Zen 4 Genoa is
// 0x19, 0x11), for benchmark notes and diagnostics. Where the kernels have
// no assembly (other architectures, purego builds) it returns "", 0, 0.
func CPUModel() (vendor string, family, model int) {
	return cpuVendor, cpuFamily, cpuModelNumber
}

// l2Bytes is one core's level-2 cache, from CPUID leaf 0x80000006 (ECX
// bits 16–31, in KiB: AMD's and Intel's alike), 0 where the CPU does not
// report it.
var l2Bytes = readL2()

// L2Bytes reports one core's level-2 cache in bytes (0: unknown). Choices
// whose working set is about that size ask it: 512 KiB on Zen 3, 1 MiB on
// Zen 4, 2 MiB on Sapphire Rapids.
func L2Bytes() int { return l2Bytes }

func readL2() int {
	if top, _, _, _ := cpuid(0x80000000, 0); top < 0x80000006 {
		return 0
	}
	_, _, c, _ := cpuid(0x80000006, 0)
	return int(c>>16) << 10
}

func readCPUModel() (string, int, int) {
	_, b, c, d := cpuid(0, 0)
	v := make([]byte, 0, 12)
	for _, r := range []uint32{b, d, c} { // the vendor string's order
		v = append(v, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	sig, _, _, _ := cpuid(1, 0)
	f, m := familyModel(sig)
	return string(v), f, m
}

// familyModel decodes CPUID leaf 1's EAX: the extended family is added
// when the base family is 0xF, and the extended model prefixes the model
// when the base family is 6 or 0xF (Intel's rule, which AMD's, extended
// model for base family 0xF, agrees with on every AMD part).
func familyModel(sig uint32) (family, model int) {
	base := int(sig >> 8 & 0xF)
	family, model = base, int(sig>>4&0xF)
	if base == 0xF {
		family += int(sig >> 20 & 0xFF)
	}
	if base == 6 || base == 0xF {
		model |= int(sig>>16&0xF) << 4
	}
	return family, model
}

// cpuPolicy is one row of cpuPolicies: the kernel preferences of the
// CPUs of a vendor and family whose model lies in [modelLo, modelHi].
type cpuPolicy struct {
	vendor           string
	family           int
	modelLo, modelHi int
	// bf16DP: bf16×bf16 products run on VDPBF16PS (gemmBF16DP) rather
	// than widening to f32 while packing, where the CPU has AVX512_BF16.
	bf16DP bool
	// narrowGemm: the f32 and f64 GEMM run their AVX2 micro-kernels even
	// where the AVX-512 ones can (the pair, direct and skinny kernels);
	// the 8-bit and bf16 kernels, convolution and elementwise code keep
	// AVX-512.
	narrowGemm bool
}

// cpuPolicies are the preferences by CPU model, first match wins; a CPU
// without a row takes the zero policy (every preference off). Each row
// says where its numbers come from.
var cpuPolicies = []cpuPolicy{
	// Intel Emerald Rapids (the development host, no AMX exposed): a loop
	// of independent VDPBF16PS zmm ran 1.35 G instructions/s, 43 G
	// multiply-adds, against 5.5 G VFMADD231PS zmm, 88 G: the dot product
	// is half the f32 rate, so widening to f32 stays. Sapphire Rapids and
	// Cooper Lake, not measured, take the zero policy, the same.
	{vendor: "GenuineIntel", family: 6, modelLo: 207, modelHi: 207, bf16DP: false},
	// AMD Zen 4 (Zen 3, the same family, has no AVX512_BF16, which
	// preferBF16DP checks): VDPBF16PS is reported at about twice the
	// f32 FMA rate; PyTorch/oneDNN's bf16 matmul of 2048³ on two threads
	// takes 42 ms against 87 ms for f32.
	//
	// Zen 4 runs a 512-bit operation as two halves on its 256-bit units:
	// on the Zen 4 host of issue 42 (2026-12-06), AXLE_KERNELS=avx2 ran
	// gemm_f32_1024 7% faster than the AVX-512 kernels (10.3 against
	// 11.0 ms over 30 runs), and measured again (2026-12-07) over 30
	// shapes, the AVX2 kernels win from 2·1024³ flops on, the AVX-512
	// ones below it by 1–22% (narrowFlops in gemm.go has the figures): so
	// the GEMM narrows only there. VPDPBUSD keeps its 4× the
	// multiply-adds of an FMA at either width, so the 8-bit kernels stay
	// wide.
	{vendor: "AuthenticAMD", family: 0x19, modelLo: 0, modelHi: 0xFF, bf16DP: true, narrowGemm: true},
	// AMD Zen 5: not measured; assumed to keep Zen 4's bf16 ratio (its
	// wider FP units widen both instructions alike). Its server parts run
	// 512-bit operations whole, so the GEMM stays wide.
	{vendor: "AuthenticAMD", family: 0x1A, modelLo: 0, modelHi: 0xFF, bf16DP: true},
}

// policyFor is the first row of cpuPolicies matching the CPU, or the
// zero policy.
func policyFor(vendor string, family, model int) cpuPolicy {
	for _, p := range cpuPolicies {
		if p.vendor == vendor && p.family == family && p.modelLo <= model && model <= p.modelHi {
			return p
		}
	}
	return cpuPolicy{}
}

// kernelsEnv is AXLE_KERNELS: purego, avx2 and avx512 each leave out the
// AVX512_BF16 kernels (avx512 means AVX-512 without its VNNI and BF16
// extensions); bf16 takes them wherever the CPU has AVX512_BF16, whatever
// cpuPolicies says.
var kernelsEnv = os.Getenv("AXLE_KERNELS")

// useBF16 says whether the AVX512_BF16 kernels (VDPBF16PS) can run.
var useBF16 = useAVX512 && cpu.X86.HasAVX512BF16 &&
	kernelsEnv != "purego" && kernelsEnv != "avx2" && kernelsEnv != "avx512"

// wideGemm says whether the f32 and f64 GEMM may take their AVX-512
// kernels (where useAVX512 holds) at any size: unless the CPU's policy
// narrows the large products to the AVX2 ones (wideFor).
// AXLE_KERNELS=avx512 asks for them whatever the policy, for A/B runs.
var wideGemm = !policyFor(cpuVendor, cpuFamily, cpuModelNumber).narrowGemm || kernelsEnv == "avx512"

// preferBF16DP says whether GemmNarrowF32 runs bf16×bf16 products on
// VDPBF16PS: where the kernels can run and the CPU's policy, or
// AXLE_KERNELS=bf16, asks for it. Tests set it to run the path anywhere
// (on the Go twin of the kernels where useBF16 is false).
var preferBF16DP = useBF16 && (policyFor(cpuVendor, cpuFamily, cpuModelNumber).bf16DP || kernelsEnv == "bf16")

// Kernels names the kernel families this process runs, for benchmark
// notes and `axle run`: "avx512+vnni+bf16" and the like, "avx2",
// "purego"; "gemm-avx2" where the CPU's policy narrows the GEMM's large
// products (wideFor), and
// "bf16dp" where bf16 products run on VDPBF16PS.
func Kernels() string {
	if !useAsm {
		return "purego"
	}
	if !useAVX512 {
		return "avx2"
	}
	s := "avx512"
	for _, f := range []struct {
		on   bool
		name string
	}{{useVNNI, "vnni"}, {useBF16, "bf16"}, {preferBF16DP, "bf16dp"}, {!wideGemm, "gemm-avx2"}} {
		if f.on {
			s += "+" + f.name
		}
	}
	return s
}
