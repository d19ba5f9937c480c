//go:build amd64 && !purego

package kernels

import "testing"

func TestFamilyModel(t *testing.T) {
	for _, c := range []struct {
		sig           uint32
		family, model int
	}{
		{0x000C06F2, 6, 0xCF},    // Emerald Rapids (the development host)
		{0x000806F8, 6, 0x8F},    // Sapphire Rapids
		{0x00A10F11, 0x19, 0x11}, // Zen 4 Genoa
		{0x00A60F12, 0x19, 0x61}, // Zen 4 Raphael
		{0x00B40F40, 0x1A, 0x44}, // Zen 5 Granite Ridge
		{0x00000F4A, 0xF, 0x4},   // Pentium 4 (base family 0xF, no extension)
		{0x00000665, 6, 0x6},     // an old family-6 part without extended model
	} {
		if f, m := familyModel(c.sig); f != c.family || m != c.model {
			t.Errorf("familyModel(%#x) = %#x, %#x, want %#x, %#x", c.sig, f, m, c.family, c.model)
		}
	}
	if v, f, m := CPUModel(); v == "" || f == 0 {
		t.Errorf("CPUModel() = %q, %d, %d", v, f, m)
	}
}

func TestCPUPolicies(t *testing.T) {
	for _, c := range []struct {
		vendor             string
		family, model      int
		bf16DP, narrowGemm bool
	}{
		{"GenuineIntel", 6, 207, false, false},
		{"GenuineIntel", 6, 143, false, false},
		{"AuthenticAMD", 0x19, 0x11, true, true},
		{"AuthenticAMD", 0x1A, 0x44, true, false},
		{"AuthenticAMD", 0x17, 0x31, false, false},
		{"HygonGenuine", 0x18, 0x1, false, false},
	} {
		p := policyFor(c.vendor, c.family, c.model)
		if p.bf16DP != c.bf16DP || p.narrowGemm != c.narrowGemm {
			t.Errorf("policyFor(%s, %#x, %#x) = %+v", c.vendor, c.family, c.model, p)
		}
	}
}

// Where the CPU's policy narrows the GEMM, only products of narrowFlops
// or more leave the AVX-512 kernels, and a block built for a product
// carries its choice (the MC cut follows it); elsewhere every product
// may take them.
func TestWideForNarrowsLargeProducts(t *testing.T) {
	defer func(w bool) { wideGemm = w }(wideGemm)
	for _, c := range []struct {
		m, n, k      int
		wide, policy bool
	}{
		{256, 512, 784, true, true}, // an MLP layer
		{896, 896, 896, true, true}, // below 2·1024³
		{1024, 1024, 1024, false, true},
		{2048, 2048, 2048, false, true},
		{1024, 1024, 1024, true, false}, // no narrowing policy
	} {
		wideGemm = !c.policy
		if got := wideFor(c.m, c.n, c.k); got != c.wide {
			t.Errorf("%d×%d×%d, narrowing policy %v: wideFor %v", c.m, c.n, c.k, c.policy, got)
		}
		blk := packedBlock(func([]float32, int, int, int, int) {}, sgemmMR, sgemmNR, kernelF32, wideFor(c.m, c.n, c.k))
		want := sgemmMR
		if useAVX512 && c.wide {
			want = 2 * sgemmMR
		}
		if got := blockRows[float32](sgemmMR, sgemmNR, blk.wide); got != want {
			t.Errorf("%d×%d×%d: MC blocks cut in %d rows, want %d", c.m, c.n, c.k, got, want)
		}
	}
}

// BenchmarkBF16Peak is BenchmarkFMAPeak for VDPBF16PS: 12 independent
// chains, each instruction 32 multiply-adds (64 flops), the rate
// preferBF16DP's policy rows compare with the f32 FMA's.
func BenchmarkBF16Peak(b *testing.B) {
	if !useBF16 {
		b.Skip("no AVX512_BF16")
	}
	benchPeak(b, bf16Peak, 12*64, "GFLOP/s")
}

// AXLE_KERNELS as this run has it: purego, avx2 and avx512 leave the
// AVX512_BF16 kernels out, bf16 takes them wherever they run.
func TestKernelsEnvBF16(t *testing.T) {
	switch kernelsEnv {
	case "purego", "avx2", "avx512":
		if useBF16 || preferBF16DP {
			t.Errorf("AXLE_KERNELS=%s: useBF16 %v, preferBF16DP %v", kernelsEnv, useBF16, preferBF16DP)
		}
	case "bf16":
		if preferBF16DP != useBF16 {
			t.Errorf("AXLE_KERNELS=bf16: useBF16 %v, preferBF16DP %v", useBF16, preferBF16DP)
		}
	}
}
