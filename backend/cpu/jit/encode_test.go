//go:build linux && amd64 && !purego

package jit

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ymmEncodings are instructions as the encoder writes them (VEX, YMM)
// and as objdump prints them.
var ymmEncodings = []struct {
	emit func(a *asm)
	want string
}{
	{func(a *asm) { a.ps(opAdd, 3, 5, ymm(9)) }, "vaddps ymm3,ymm5,ymm9"},
	{func(a *asm) { a.ps(opAdd, 12, 1, at(mem{base: rdx, index: -1, disp: 0x40})) }, "vaddps ymm12,ymm1,YMMWORD PTR [rdx+0x40]"},
	{func(a *asm) { a.ps(opSub, 0, 15, at(mem{base: r12, index: rsi})) }, "vsubps ymm0,ymm15,YMMWORD PTR [r12+rsi*1]"},
	{func(a *asm) { a.ps(opMul, 7, 7, at(mem{base: rdi, index: -1, disp: 0x58})) }, "vmulps ymm7,ymm7,YMMWORD PTR [rdi+0x58]"},
	{func(a *asm) { a.ps(opDiv, 1, 2, ymm(3)) }, "vdivps ymm1,ymm2,ymm3"},
	{func(a *asm) { a.ps(opMax, 1, 2, ymm(3)) }, "vmaxps ymm1,ymm2,ymm3"},
	{func(a *asm) { a.ps(opMin, 8, 2, ymm(13)) }, "vminps ymm8,ymm2,ymm13"},
	{func(a *asm) { a.ps(opAnd, 1, 2, at(mem{base: rdx, index: -1, disp: 0x80})) }, "vandps ymm1,ymm2,YMMWORD PTR [rdx+0x80]"},
	{func(a *asm) { a.ps(opOr, 1, 2, ymm(3)) }, "vorps  ymm1,ymm2,ymm3"},
	{func(a *asm) { a.ps(opXor, 1, 2, ymm(3)) }, "vxorps ymm1,ymm2,ymm3"},
	{func(a *asm) { a.load(2, mem{base: rax, index: rsi}) }, "vmovups ymm2,YMMWORD PTR [rax+rsi*1]"},
	{func(a *asm) { a.load(10, mem{base: r13, index: -1, disp: 8}) }, "vmovups ymm10,YMMWORD PTR [r13+0x8]"},
	{func(a *asm) { a.store(mem{base: r8, index: rsi}, 11) }, "vmovups YMMWORD PTR [r8+rsi*1],ymm11"},
	{func(a *asm) { a.storeNT(mem{base: r8, index: rsi}, 4) }, "vmovntps YMMWORD PTR [r8+rsi*1],ymm4"},
	{func(a *asm) { a.mov(9, 2) }, "vmovaps ymm9,ymm2"},
	{func(a *asm) { a.sqrt(1, ymm(14)) }, "vsqrtps ymm1,ymm14"},
	{func(a *asm) { a.cmp(unordered, 3, 4, ymm(4)) }, "vcmpunordps ymm3,ymm4,ymm4"},
	{func(a *asm) { a.cmp(0x0D, 3, 4, at(mem{base: rdi, index: -1, disp: 0x48})) }, "vcmpgeps ymm3,ymm4,YMMWORD PTR [rdi+0x48]"},
	{func(a *asm) { a.blendv(5, 6, ymm(13), 8) }, "vblendvps ymm5,ymm6,ymm13,ymm8"},
	{func(a *asm) { a.fma(fmadd213, 1, 2, at(mem{base: rdx, index: -1, disp: 0x100})) }, "vfmadd213ps ymm1,ymm2,YMMWORD PTR [rdx+0x100]"},
	{func(a *asm) { a.fma(fmadd231, 10, 11, ymm(12)) }, "vfmadd231ps ymm10,ymm11,ymm12"},
	{func(a *asm) { a.fma(fnmadd231, 3, 4, at(mem{base: rdx, index: -1, disp: 0x20})) }, "vfnmadd231ps ymm3,ymm4,YMMWORD PTR [rdx+0x20]"},
	{func(a *asm) { a.fma(fnmadd213, 3, 9, ymm(2)) }, "vfnmadd213ps ymm3,ymm9,ymm2"},
	{func(a *asm) { a.pd(opPSubD, 1, 2, at(mem{base: rdx, index: -1})) }, "vpsubd ymm1,ymm2,YMMWORD PTR [rdx]"},
	{func(a *asm) { a.pd(opPSubD, 9, 9, ymm(1)) }, "vpsubd ymm9,ymm9,ymm1"},
	{func(a *asm) { a.shift(shiftRightArith, 3, 12, 1) }, "vpsrad ymm3,ymm12,0x1"},
	{func(a *asm) { a.shift(shiftLeft, 10, 10, 23) }, "vpslld ymm10,ymm10,0x17"},
	{func(a *asm) { a.shift(shiftRightLogical, 2, 9, 16) }, "vpsrld ymm2,ymm9,0x10"},
	{func(a *asm) { a.pd(opPAddD, 4, 5, ymm(12)) }, "vpaddd ymm4,ymm5,ymm12"},
	{func(a *asm) { a.pd(opPAnd, 4, 5, at(mem{base: rdx, index: -1, disp: 0x40})) }, "vpand  ymm4,ymm5,YMMWORD PTR [rdx+0x40]"},
	{func(a *asm) { a.load(3, mem{base: r10, index: rsi, scale: 4, disp: 0x60}) }, "vmovups ymm3,YMMWORD PTR [r10+rsi*4+0x60]"},
	{func(a *asm) { a.loadWords(11, mem{base: rbx, index: rsi, scale: 2, disp: 0x10}) }, "vpmovzxwd ymm11,XMMWORD PTR [rbx+rsi*2+0x10]"},
	{func(a *asm) { a.extractHigh(1, 12) }, "vextracti128 xmm1,ymm12,0x1"},
	{func(a *asm) { a.pack(packUSDW, 9, 2, 13) }, "vpackusdw xmm9,xmm2,xmm13"},
	{func(a *asm) { a.pack(packSSDW, 1, 10, 3) }, "vpackssdw xmm1,xmm10,xmm3"},
	{func(a *asm) { a.pack(packUSWB, 4, 4, 4) }, "vpackuswb xmm4,xmm4,xmm4"},
	{func(a *asm) { a.pack(packSSWB, 12, 0, 12) }, "vpacksswb xmm12,xmm0,xmm12"},
	{func(a *asm) { a.cvt(cvtDQ2PS, 3, ymm(11)) }, "vcvtdq2ps ymm3,ymm11"},
	{func(a *asm) { a.cvt(cvtTPS2DQ, 9, ymm(2)) }, "vcvttps2dq ymm9,ymm2"},
	{func(a *asm) { a.store64(mem{base: r12, index: rsi, disp: 0x10}, 10) }, "vmovq  QWORD PTR [r12+rsi*1+0x10],xmm10"},
	{func(a *asm) { a.cvtPH2PS(3, ymm(11)) }, "vcvtph2ps ymm3,xmm11"},
	{func(a *asm) { a.cvtPH2PS(12, at(mem{base: rbx, index: rsi, scale: 2, disp: 0x10})) }, "vcvtph2ps ymm12,XMMWORD PTR [rbx+rsi*2+0x10]"},
	{func(a *asm) { a.cvtPS2PH(ymm(11), 3) }, "vcvtps2ph xmm11,ymm3,0x0"},
	{func(a *asm) { a.cvtPS2PH(ymm(2), 14) }, "vcvtps2ph xmm2,ymm14,0x0"},
	{func(a *asm) { a.cvtPS2PH(at(mem{base: r12, index: rsi, scale: 2, disp: 0x20}), 10) }, "vcvtps2ph XMMWORD PTR [r12+rsi*2+0x20],ymm10,0x0"},
	{func(a *asm) { a.round(5, ymm(13), roundNearest) }, "vroundps ymm5,ymm13,0x0"},
	{func(a *asm) { a.round(2, at(mem{base: rdx, index: -1, disp: 0x20}), roundNearest) }, "vroundps ymm2,YMMWORD PTR [rdx+0x20],0x0"},
	{func(a *asm) { a.store128(mem{base: r12, index: rsi, scale: 2, disp: 0x20}, 10) }, "vmovdqu XMMWORD PTR [r12+rsi*2+0x20],xmm10"},
	{func(a *asm) { a.maskLoad(3, 12, mem{base: r9, index: rsi, scale: 4, disp: 0x20}) }, "vmaskmovps ymm3,ymm12,YMMWORD PTR [r9+rsi*4+0x20]"},
	{func(a *asm) { a.maskLoad(11, 2, mem{base: rdi, index: r13, scale: 4, disp: 0x900}) }, "vmaskmovps ymm11,ymm2,YMMWORD PTR [rdi+r13*4+0x900]"},
	{func(a *asm) { a.maskStore(mem{base: r12, index: rsi, scale: 4, disp: -0x20}, 15, 4) }, "vmaskmovps YMMWORD PTR [r12+rsi*4-0x20],ymm15,ymm4"},
	{func(a *asm) { a.subGP(r13, rcx) }, "sub    r13,rcx"},
	{func(a *asm) { a.loadGP(r8, mem{base: rdi, index: -1}) }, "mov    r8,QWORD PTR [rdi]"},
	{func(a *asm) { a.loadGP(r12, mem{base: rdi, index: -1, disp: 0x40}) }, "mov    r12,QWORD PTR [rdi+0x40]"},
	{func(a *asm) { a.addImm(rsi, 32) }, "add    rsi,0x20"},
	{func(a *asm) { a.cmpGP(rsi, rcx) }, "cmp    rsi,rcx"},
	{func(a *asm) { a.zero(rsi) }, "xor    esi,esi"},
	{func(a *asm) { a.movGP(r13, rcx) }, "mov    r13,rcx"},
	{func(a *asm) { a.addImm(r13, -32) }, "add    r13,0xffffffffffffffe0"},
	{func(a *asm) { a.zero(r9) }, "xor    r9d,r9d"},
	{func(a *asm) { a.prefetch(mem{base: r9, index: rsi, disp: 0x200}, 1) }, "prefetcht0 BYTE PTR [r9+rsi*1+0x200]"},
	{func(a *asm) { a.prefetch(mem{base: rax, index: rsi, scale: 4, disp: 0x4000}, 1) }, "prefetcht0 BYTE PTR [rax+rsi*4+0x4000]"},
	{func(a *asm) { a.prefetch(mem{base: r10, index: rsi, scale: 2, disp: 0x40}, 2) }, "prefetcht1 BYTE PTR [r10+rsi*2+0x40]"},
	{func(a *asm) { a.cmpMemZero(mem{base: rdi, index: -1, disp: 0x90}) }, "cmp    QWORD PTR [rdi+0x90],0x0"},
	{func(a *asm) { a.addMem(mem{base: rdi, index: -1, disp: 0x98}, 4) }, "add    QWORD PTR [rdi+0x98],0x4"},
	{func(a *asm) { a.decMem(mem{base: rdi, index: -1, disp: 0x88}) }, "dec    QWORD PTR [rdi+0x88]"},
	{func(a *asm) { a.addGPMem(rax, mem{base: rdi, index: -1, disp: 0x6c0}) }, "add    rax,QWORD PTR [rdi+0x6c0]"},
	{func(a *asm) { a.addGPMem(r12, mem{base: rdi, index: -1, disp: 0x10}) }, "add    r12,QWORD PTR [rdi+0x10]"},
	{func(a *asm) { a.broadcast(0, mem{base: rsi, index: -1}) }, "vbroadcastss ymm0,DWORD PTR [rsi]"},
	{func(a *asm) { a.ptest(11, at(mem{base: rdx, index: -1, disp: 0x40})) }, "vptest ymm11,YMMWORD PTR [rdx+0x40]"},
	{func(a *asm) { a.ptest(2, ymm(9)) }, "vptest ymm2,ymm9"},
	// Displacements: none, a byte (either sign, and R13's zero, which
	// cannot go without), 32 bits; a base needing a SIB byte.
	{func(a *asm) { a.load(4, mem{base: r13, index: -1}) }, "vmovups ymm4,YMMWORD PTR [r13+0x0]"},
	{func(a *asm) { a.load(4, mem{base: r12, index: -1, disp: 8}) }, "vmovups ymm4,YMMWORD PTR [r12+0x8]"},
	{func(a *asm) { a.load(4, mem{base: r12, index: -1}) }, "vmovups ymm4,YMMWORD PTR [r12]"},
	{func(a *asm) { a.ps(opMul, 9, 3, at(mem{base: rdx, index: -1, disp: -128})) }, "vmulps ymm9,ymm3,YMMWORD PTR [rdx-0x80]"},
	{func(a *asm) { a.ps(opMul, 9, 3, at(mem{base: rdx, index: -1, disp: 127})) }, "vmulps ymm9,ymm3,YMMWORD PTR [rdx+0x7f]"},
	{func(a *asm) { a.ps(opMul, 9, 3, at(mem{base: rdx, index: -1, disp: 128})) }, "vmulps ymm9,ymm3,YMMWORD PTR [rdx+0x80]"},
	{func(a *asm) { a.ps(opMul, 9, 3, at(mem{base: rdx, index: -1, disp: -129})) }, "vmulps ymm9,ymm3,YMMWORD PTR [rdx-0x81]"},
	{func(a *asm) { a.store(mem{base: r9, index: r11, scale: 4, disp: -4}, 14) }, "vmovups YMMWORD PTR [r9+r11*4-0x4],ymm14"},
	{func(a *asm) { a.vzeroupper() }, "vzeroupper"},
	{func(a *asm) { a.sfence() }, "sfence"},
	{func(a *asm) { a.ret() }, "ret"},
}

// TestEncodingDisassembles checks the encoder against GNU objdump: each
// instruction, encoded here, must disassemble to the text written by
// hand beside it (objdump's Intel syntax).
func TestEncodingDisassembles(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) not installed")
	}
	cases := ymmEncodings
	var a asm
	for _, c := range cases {
		c.emit(&a)
	}
	got := disassemble(t, objdump, a.b)
	if len(got) != len(cases) {
		t.Fatalf("objdump found %d instructions, want %d:\n%s", len(got), len(cases), strings.Join(got, "\n"))
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("instruction %d: disassembles to %q, want %q", i, got[i], c.want)
		}
	}
}

// disassemble returns the instructions of code as objdump (Intel
// syntax) prints them.
func disassemble(t *testing.T, objdump string, code []byte) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(file, code, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", file).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`^\s*[0-9a-f]+:\t[0-9a-f ]+\t(.*)$`)
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			got = append(got, strings.TrimSpace(m[1]))
		}
	}
	return got
}

// TestEncodingShortest checks that the encoder picks the short forms:
// the two-byte VEX prefix where it can, and no displacement or a
// one-byte one where that holds it.
func TestEncodingShortest(t *testing.T) {
	cases := []struct {
		name string
		emit func(a *asm)
		want int
	}{
		{"vaddps ymm1,ymm2,[rdx+0x40]", func(a *asm) { a.ps(opAdd, 1, 2, at(mem{base: rdx, index: -1, disp: 0x40})) }, 5},
		{"vaddps ymm12,ymm1,ymm3", func(a *asm) { a.ps(opAdd, 12, 1, ymm(3)) }, 4},
		{"vaddps ymm1,ymm2,ymm9 (VEX.B)", func(a *asm) { a.ps(opAdd, 1, 2, ymm(9)) }, 5},
		{"vaddps ymm1,ymm2,[rdx+0x100]", func(a *asm) { a.ps(opAdd, 1, 2, at(mem{base: rdx, index: -1, disp: 0x100})) }, 8},
		{"vfmadd213ps ymm1,ymm2,[rdx-0x80]", func(a *asm) { a.fma(fmadd213, 1, 2, at(mem{base: rdx, index: -1, disp: -128})) }, 6},
		{"vmovups ymm2,[rax+rsi*4]", func(a *asm) { a.load(2, mem{base: rax, index: rsi, scale: 4}) }, 5},
		{"vmovups ymm2,[r13+0]", func(a *asm) { a.load(2, mem{base: r13, index: -1}) }, 6},
		{"vmovups ymm2,[r8+rsi*4+0x20]", func(a *asm) { a.load(2, mem{base: r8, index: rsi, scale: 4, disp: 0x20}) }, 7},
	}
	for _, c := range cases {
		var a asm
		c.emit(&a)
		if len(a.b) != c.want {
			t.Errorf("%s: %d bytes (% x), want %d", c.name, len(a.b), a.b, c.want)
		}
	}
}

// TestEncodingWideDisassembles is TestEncodingDisassembles for the EVEX
// (AVX-512) forms wide code uses, compressed displacements included.
func TestEncodingWideDisassembles(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) not installed")
	}
	cases := []struct {
		emit func(a *asm)
		want []string
	}{
		{func(a *asm) { a.ps(opAdd, 3, 5, ymm(9)) }, []string{"vaddps zmm3,zmm5,zmm9"}},
		{func(a *asm) { a.ps(opAdd, 12, 1, at(mem{base: rdx, index: -1, disp: 0x40})) }, []string{"vaddps zmm12,zmm1,ZMMWORD PTR [rdx+0x40]"}},
		{func(a *asm) { a.ps(opSub, 0, 15, at(mem{base: r12, index: rsi})) }, []string{"vsubps zmm0,zmm15,ZMMWORD PTR [r12+rsi*1]"}},
		{func(a *asm) { a.ps(opMul, 7, 7, at(mem{base: rdi, index: -1, disp: 0x58})) }, []string{"vmulps zmm7,zmm7,ZMMWORD PTR [rdi+0x58]"}},
		{func(a *asm) { a.ps(opMul, 9, 3, at(mem{base: rdx, index: -1, disp: -8192})) }, []string{"vmulps zmm9,zmm3,ZMMWORD PTR [rdx-0x2000]"}},
		{func(a *asm) { a.ps(opMul, 9, 3, at(mem{base: rdx, index: -1, disp: 8192})) }, []string{"vmulps zmm9,zmm3,ZMMWORD PTR [rdx+0x2000]"}},
		{func(a *asm) { a.ps(opDiv, 1, 2, ymm(3)) }, []string{"vdivps zmm1,zmm2,zmm3"}},
		{func(a *asm) { a.ps(opMax, 1, 2, ymm(3)) }, []string{"vmaxps zmm1,zmm2,zmm3"}},
		{func(a *asm) { a.ps(opMin, 8, 2, ymm(13)) }, []string{"vminps zmm8,zmm2,zmm13"}},
		{func(a *asm) { a.ps(opAnd, 1, 2, at(mem{base: rdx, index: -1, disp: 0x80})) }, []string{"vandps zmm1,zmm2,ZMMWORD PTR [rdx+0x80]"}},
		{func(a *asm) { a.ps(opOr, 1, 2, ymm(3)) }, []string{"vorps  zmm1,zmm2,zmm3"}},
		{func(a *asm) { a.ps(opXor, 10, 2, ymm(11)) }, []string{"vxorps zmm10,zmm2,zmm11"}},
		{func(a *asm) { a.load(2, mem{base: rax, index: rsi, scale: 4, disp: 0x40}) }, []string{"vmovups zmm2,ZMMWORD PTR [rax+rsi*4+0x40]"}},
		{func(a *asm) { a.load(10, mem{base: r13, index: -1, disp: 8}) }, []string{"vmovups zmm10,ZMMWORD PTR [r13+0x8]"}},
		{func(a *asm) { a.store(mem{base: r8, index: rsi, scale: 4, disp: 0x80}, 11) }, []string{"vmovups ZMMWORD PTR [r8+rsi*4+0x80],zmm11"}},
		{func(a *asm) { a.storeNT(mem{base: r9, index: r11, scale: 4}, 4) }, []string{"vmovntps ZMMWORD PTR [r9+r11*4],zmm4"}},
		{func(a *asm) { a.mov(9, 2) }, []string{"vmovaps zmm9,zmm2"}},
		{func(a *asm) { a.sqrt(1, ymm(14)) }, []string{"vsqrtps zmm1,zmm14"}},
		{func(a *asm) { a.round(7, ymm(20), roundNearest) }, []string{"vrndscaleps zmm7,zmm20,0x0"}},
		{func(a *asm) { a.cvt(cvtDQ2PS, 3, ymm(11)) }, []string{"vcvtdq2ps zmm3,zmm11"}},
		{func(a *asm) { a.cvt(cvtTPS2DQ, 9, at(mem{base: rdx, index: -1, disp: 0x40})) }, []string{"vcvttps2dq zmm9,ZMMWORD PTR [rdx+0x40]"}},
		{func(a *asm) { a.cvtPH2PS(3, ymm(11)) }, []string{"vcvtph2ps zmm3,ymm11"}},
		{func(a *asm) { a.cvtPH2PS(20, at(mem{base: rdi, index: -1, disp: 0x80})) }, []string{"vcvtph2ps zmm20,YMMWORD PTR [rdi+0x80]"}},
		{func(a *asm) { a.cvtPH2PS(9, at(mem{base: rdi, index: -1, disp: 0x50})) }, []string{"vcvtph2ps zmm9,YMMWORD PTR [rdi+0x50]"}},
		{func(a *asm) { a.cvtPS2PH(ymm(17), 25) }, []string{"vcvtps2ph ymm17,zmm25,0x0"}},
		{func(a *asm) { a.cvtPS2PH(ymm(2), 14) }, []string{"vcvtps2ph ymm2,zmm14,0x0"}},
		{func(a *asm) { a.cvtPS2PH(at(mem{base: r8, index: rsi, scale: 2, disp: 0x40}), 28) }, []string{"vcvtps2ph YMMWORD PTR [r8+rsi*2+0x40],zmm28,0x0"}},
		{func(a *asm) { a.cmp(unordered, 3, 4, ymm(4)) }, []string{"vcmpunordps k1,zmm4,zmm4", "vpmovm2d zmm3,k1"}},
		{func(a *asm) { a.cmp(0x0D, 12, 4, at(mem{base: rdi, index: -1, disp: 0x80})) }, []string{"vcmpgeps k1,zmm4,ZMMWORD PTR [rdi+0x80]", "vpmovm2d zmm12,k1"}},
		{func(a *asm) { a.blendv(5, 6, ymm(13), 8) }, []string{"vpmovd2m k1,zmm8", "vblendmps zmm5{k1},zmm6,zmm13"}},
		{func(a *asm) { a.blendv(9, 10, ymm(1), 14) }, []string{"vpmovd2m k1,zmm14", "vblendmps zmm9{k1},zmm10,zmm1"}},
		{func(a *asm) { a.fma(fmadd213, 1, 2, at(mem{base: rdx, index: -1, disp: 0x100})) }, []string{"vfmadd213ps zmm1,zmm2,ZMMWORD PTR [rdx+0x100]"}},
		{func(a *asm) { a.fma(fmadd231, 10, 11, ymm(12)) }, []string{"vfmadd231ps zmm10,zmm11,zmm12"}},
		{func(a *asm) { a.fma(fnmadd231, 3, 4, at(mem{base: rdx, index: -1, disp: 0x20})) }, []string{"vfnmadd231ps zmm3,zmm4,ZMMWORD PTR [rdx+0x20]"}},
		{func(a *asm) { a.fma(fnmadd213, 3, 9, ymm(2)) }, []string{"vfnmadd213ps zmm3,zmm9,zmm2"}},
		{func(a *asm) { a.pd(opPSubD, 1, 2, at(mem{base: rdx, index: -1})) }, []string{"vpsubd zmm1,zmm2,ZMMWORD PTR [rdx]"}},
		{func(a *asm) { a.pd(opPAddD, 4, 5, ymm(12)) }, []string{"vpaddd zmm4,zmm5,zmm12"}},
		{func(a *asm) { a.pd(opPAnd, 4, 5, at(mem{base: rdx, index: -1, disp: 0x40})) }, []string{"vpandd zmm4,zmm5,ZMMWORD PTR [rdx+0x40]"}},
		{func(a *asm) { a.shift(shiftRightArith, 3, 12, 1) }, []string{"vpsrad zmm3,zmm12,0x1"}},
		{func(a *asm) { a.shift(shiftLeft, 10, 10, 23) }, []string{"vpslld zmm10,zmm10,0x17"}},
		{func(a *asm) { a.shift(shiftRightLogical, 2, 9, 16) }, []string{"vpsrld zmm2,zmm9,0x10"}},
		{func(a *asm) { a.broadcast(0, mem{base: rsi, index: -1}) }, []string{"vbroadcastss zmm0,DWORD PTR [rsi]"}},
		{func(a *asm) { a.broadcast(3, mem{base: rdi, index: -1, disp: 0x10}) }, []string{"vbroadcastss zmm3,DWORD PTR [rdi+0x10]"}},
		{func(a *asm) { a.ptest(11, at(mem{base: rdx, index: -1, disp: 0x40})) }, []string{"vptestmd k1,zmm11,ZMMWORD PTR [rdx+0x40]", "kortestw k1,k1"}},
		{func(a *asm) { a.ptest(2, ymm(9)) }, []string{"vptestmd k1,zmm2,zmm9", "kortestw k1,k1"}},
		// The upper 16 registers, which only EVEX reaches, in every field.
		{func(a *asm) { a.ps(opAdd, 17, 25, ymm(30)) }, []string{"vaddps zmm17,zmm25,zmm30"}},
		{func(a *asm) { a.ps(opMul, 31, 16, ymm(8)) }, []string{"vmulps zmm31,zmm16,zmm8"}},
		{func(a *asm) { a.ps(opSub, 3, 5, ymm(24)) }, []string{"vsubps zmm3,zmm5,zmm24"}},
		{func(a *asm) { a.fma(fmadd231, 20, 21, at(mem{base: r9, index: rsi, scale: 4, disp: 0x40})) }, []string{"vfmadd231ps zmm20,zmm21,ZMMWORD PTR [r9+rsi*4+0x40]"}},
		{func(a *asm) { a.load(18, mem{base: rdx, index: -1, disp: 0x80}) }, []string{"vmovups zmm18,ZMMWORD PTR [rdx+0x80]"}},
		{func(a *asm) { a.store(mem{base: r8, index: rsi, scale: 4}, 29) }, []string{"vmovups ZMMWORD PTR [r8+rsi*4],zmm29"}},
		{func(a *asm) { a.mov(16, 31) }, []string{"vmovaps zmm16,zmm31"}},
		{func(a *asm) { a.shift(shiftLeft, 22, 27, 23) }, []string{"vpslld zmm22,zmm27,0x17"}},
		{func(a *asm) { a.sqrt(19, ymm(26)) }, []string{"vsqrtps zmm19,zmm26"}},
		{func(a *asm) { a.cmp(unordered, 23, 17, ymm(30)) }, []string{"vcmpunordps k1,zmm17,zmm30", "vpmovm2d zmm23,k1"}},
		{func(a *asm) { a.blendv(16, 24, ymm(31), 20) }, []string{"vpmovd2m k1,zmm20", "vblendmps zmm16{k1},zmm24,zmm31"}},
		{func(a *asm) { a.ptest(28, at(mem{base: rdx, index: -1})) }, []string{"vptestmd k1,zmm28,ZMMWORD PTR [rdx]", "kortestw k1,k1"}},
		{func(a *asm) { a.pd(opPSubD, 25, 26, ymm(27)) }, []string{"vpsubd zmm25,zmm26,zmm27"}},
		{func(a *asm) { a.broadcast(21, mem{base: rsi, index: -1}) }, []string{"vbroadcastss zmm21,DWORD PTR [rsi]"}},
	}
	a := asm{wide: true}
	var want []string
	for _, c := range cases {
		c.emit(&a)
		want = append(want, c.want...)
	}
	got := disassemble(t, objdump, a.b)
	if len(got) != len(want) {
		t.Fatalf("objdump found %d instructions, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("instruction %d: disassembles to %q, want %q", i, got[i], want[i])
		}
	}
}

// Wide code allocates from all 32 ZMM registers (chain10's values and
// temporaries need more than 16 at three vectors a time), and its
// 8-lane block for a last half vector keeps to the 16 that VEX encodes.
func TestWideCodeRegisters(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) not installed")
	}
	defer func(w, a bool) { wideCode, wideAlways = w, a }(wideCode, wideAlways)
	wideCode, wideAlways = true, false
	c := func(v float32) Value { return Value{Op: Const, Value: v} }
	chain10 := &Program{Inputs: 1, Values: []Value{{Op: Input}, c(0.5), {Op: Mul, Args: [3]int{0, 1}},
		{Op: Add, Args: [3]int{2, 0}}, {Op: Tanh, Args: [3]int{3}}, {Op: Mul, Args: [3]int{4, 4}},
		{Op: Sub, Args: [3]int{5, 1}}, {Op: Exp, Args: [3]int{6}}, {Op: Mul, Args: [3]int{7, 4}},
		{Op: Abs, Args: [3]int{8}}, {Op: Sqrt, Args: [3]int{9}}, {Op: Sub, Args: [3]int{10, 2}}}}
	code, _, _, err := generate(chain10, false, targetOf(chain10))
	if err != nil {
		t.Fatal(err)
	}
	upper := regexp.MustCompile(`\bzmm(1[6-9]|2[0-9]|3[01])\b`)
	high := regexp.MustCompile(`\b[xy]mm(1[6-9]|2[0-9]|3[01])\b`)
	uses := 0
	for _, ins := range disassemble(t, objdump, code) {
		if upper.MatchString(ins) {
			uses++
		}
		if high.MatchString(ins) {
			t.Errorf("%q: an upper register in 8-lane code", ins)
		}
	}
	if uses == 0 {
		t.Error("wide chain10 uses none of zmm16-31")
	}
	t.Logf("%d instructions use zmm16-31", uses)
}
