// Command bf16 generates the AVX512_BF16 GEMM micro-kernels of package
// kernels (gemm_bf16_amd64.s), a VDPBF16PS throughput probe and the
// CPUID reader behind kernels.CPUModel.
//
// Neither Go's assembler nor avo v0.5 knows VDPBF16PS, so it is emitted
// as raw bytes, encoded here from its register numbers. That needs
// physical vector registers, so the kernels name theirs (Z0–Z31) rather
// than letting avo allocate them; the general-purpose registers, which no
// raw instruction touches, stay virtual. Run it with go generate in the
// kernels package, or
//
//	cd backend/cpu/kernels/_asm && go run ./bf16 -out ../gemm_bf16_amd64.s -stubs ../gemm_bf16_stub_amd64.go -pkg kernels
package main

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	for _, t := range [][2]int{{2, 2}, {1, 2}, {2, 1}, {1, 1}} {
		tileKernel(t[0], t[1])
	}
	peak()
	cpuid()
	Generate()
}

// Register plan of the tile kernels: accumulators from Z0 up (at most
// 12 rows × 2 vectors), the step's B vectors in Z24 and Z25, and the
// broadcast A pairs rotating through Z26–Z31 so consecutive rows do not
// reuse a register the previous row's VDPBF16PS still reads.
const (
	firstB     = 24
	firstBcast = 26
	bcasts     = 6
)

// zmm is physical register Zi.
func zmm(i int) reg.VecPhysical {
	return reg.Vector.Lookup(reg.Index(i), reg.S512).(reg.VecPhysical)
}

// tileKernel emits bf16gemm<rows>x<cols>: C[rows×cols] += A·B (C = A·B if
// overwrite) over k steps of bf16 pairs, from ablocks consecutive 6-row A
// slivers (each step 6 pairs, one 32-bit lane a row) and bblocks
// consecutive 16-column B slivers (each step 16 pairs, one 64-byte
// vector). Each step broadcasts a row's pair against the B vectors:
// VDPBF16PS adds both of a lane's products to its f32 accumulator.
func tileKernel(ablocks, bblocks int) {
	rows, cols := 6*ablocks, 16*bblocks
	name := fmt.Sprintf("bf16gemm%dx%d", rows, cols)
	TEXT(name, NOSPLIT, "func(k int, a, b *uint32, c *float32, ldc int, overwrite bool)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes C[%dx%d] += A·B (C = A·B if overwrite) over k steps of bf16 pairs from %d packed 6-row A sliver(s) and %d packed 16-column B sliver(s), each k steps long (AVX512_BF16).",
		name, rows, cols, ablocks, bblocks))
	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(2), ldc)
	prefetchC(c, ldc, rows, bblocks)
	// The second A sliver starts 24·k bytes on, the second B sliver 64·k.
	as, bs := []reg.Register{a}, []reg.Register{b}
	if ablocks == 2 {
		a1 := GP64()
		LEAQ(Mem{Base: k, Index: k, Scale: 2}, a1)
		SHLQ(Imm(3), a1)
		ADDQ(a, a1)
		as = append(as, a1)
	}
	if bblocks == 2 {
		b1 := GP64()
		MOVQ(k, b1)
		SHLQ(Imm(6), b1)
		ADDQ(b, b1)
		bs = append(bs, b1)
	}
	acc := func(r, v int) reg.VecPhysical { return zmm(r*bblocks + v) }
	for i := range rows * bblocks {
		VPXORD(zmm(i), zmm(i), zmm(i))
	}
	step := func(s int) {
		for v := range bblocks {
			VMOVUPS(Mem{Base: bs[v], Disp: 64 * s}, zmm(firstB+v))
		}
		for r := range rows {
			x := zmm(firstBcast + r%bcasts)
			VPBROADCASTD(Mem{Base: as[r/6], Disp: 4 * (6*s + r%6)}, x)
			for v := range bblocks {
				vdpbf16ps(zmm(firstB+v), x, acc(r, v))
			}
		}
	}
	advance := func(steps int) {
		for _, p := range as {
			ADDQ(U32(24*steps), p)
		}
		for _, p := range bs {
			ADDQ(U32(64*steps), p)
		}
	}
	kLoop4(name, k, step, advance)
	storeTile(name, c, ldc, rows, bblocks, acc)
}

// prefetchC asks for the tile's rows of C (64 bytes a vector) before the
// k loop, so they are in cache when the tile is stored.
func prefetchC(c, ldc reg.Register, rows, vecs int) {
	p := GP64()
	MOVQ(c, p)
	for r := range rows {
		for v := range vecs {
			PREFETCHT0(Mem{Base: p, Disp: 64 * v})
		}
		if r+1 < rows {
			ADDQ(ldc, p)
		}
	}
}

// kLoop4 runs step four at a time while four steps remain, then one at a
// time, advancing the operand pointers after each round.
func kLoop4(name string, k reg.Register, step func(s int), advance func(steps int)) {
	Label(name + "_loop4")
	CMPQ(k, Imm(4))
	JL(LabelRef(name + "_tail"))
	for s := range 4 {
		step(s)
	}
	advance(4)
	SUBQ(Imm(4), k)
	JMP(LabelRef(name + "_loop4"))
	Label(name + "_tail")
	TESTQ(k, k)
	JZ(LabelRef(name + "_store"))
	step(0)
	advance(1)
	DECQ(k)
	JMP(LabelRef(name + "_tail"))
}

// storeTile adds the accumulators into C's rows (overwrites them when
// overwrite: the first k block of a product sets C without reading it)
// and returns.
func storeTile(name string, c, ldc reg.Register, rows, vecs int, acc func(r, v int) reg.VecPhysical) {
	Label(name + "_store")
	ow := Load(Param("overwrite"), GP8())
	rowsOf := func(put func(m Mem, x reg.VecPhysical)) {
		p := GP64()
		MOVQ(c, p)
		for r := range rows {
			for v := range vecs {
				put(Mem{Base: p, Disp: 64 * v}, acc(r, v))
			}
			if r+1 < rows {
				ADDQ(ldc, p)
			}
		}
		VZEROUPPER()
		RET()
	}
	TESTB(ow, ow)
	JNZ(LabelRef(name + "_overwrite"))
	rowsOf(func(m Mem, x reg.VecPhysical) { VADDPS(m, x, x); VMOVUPS(x, m) })
	Label(name + "_overwrite")
	rowsOf(func(m Mem, x reg.VecPhysical) { VMOVUPS(x, m) })
}

// vdpbf16ps emits VDPBF16PS b, x, acc (Go operand order; Intel's
// vdpbf16ps acc, x, b): each 32-bit lane of acc += x.hi·b.hi, then
// += x.lo·b.lo, over the lanes' bf16 halves.
func vdpbf16ps(b, x, acc reg.VecPhysical) {
	enc := encodeVDPBF16PS(int(acc.PhysicalIndex()), int(x.PhysicalIndex()), int(b.PhysicalIndex()))
	var text []string
	for _, e := range enc {
		text = append(text, fmt.Sprintf("BYTE $0x%02x", e))
	}
	// One line an instruction, its mnemonic in a trailing comment.
	text[len(text)-1] += fmt.Sprintf(" // VDPBF16PS %s, %s, %s", b.Asm(), x.Asm(), acc.Asm())
	Instruction(&ir.Instruction{Opcode: strings.Join(text, "; "),
		Inputs: []Op{b, x, acc}, Outputs: []Op{acc}, ISA: []string{"AVX512_BF16"}})
}

// encodeVDPBF16PS is the EVEX encoding of VDPBF16PS zmm(dst), zmm(src1),
// zmm(src2) in Intel's order: EVEX.512.F3.0F38.W0 52 /r, ModRM.reg the
// destination, EVEX.vvvv the first source, ModRM.rm the second. Register
// numbers 0–31 split across the prefix: reg's bit 3 in R and bit 4 in R',
// rm's bit 3 in B and bit 4 in X (a register rm), vvvv's bit 4 in V', all
// stored inverted.
func encodeVDPBF16PS(dst, src1, src2 int) [6]byte {
	inv := func(r, bit int) byte { return byte(^(r >> bit) & 1) }
	p0 := inv(dst, 3)<<7 | inv(src2, 4)<<6 | inv(src2, 3)<<5 | inv(dst, 4)<<4 | 0b10 // R X B R' 00 mm=0F38
	p1 := byte(^src1&15)<<3 | 1<<2 | 0b10                                            // W=0, vvvv, 1, pp=F3
	p2 := byte(0b10)<<5 | inv(src1, 4)<<3                                            // z=0, L'L=512, b=0, V', aaa=0
	modrm := byte(0b11)<<6 | byte(dst&7)<<3 | byte(src2&7)
	return [6]byte{0x62, p0, p1, p2, 0x52, modrm}
}

// peak emits bf16Peak: rounds of 12 independent VDPBF16PS chains on ZMM
// registers (12·16 lanes · 2 multiply-adds = 384 per round), the
// instruction's throughput that decides kernels.preferBF16DP.
func peak() {
	TEXT("bf16Peak", NOSPLIT, "func(rounds int)")
	Doc("bf16Peak runs rounds of 12 independent VDPBF16PS on ZMM registers (384 bf16 multiply-adds a round).")
	n := Load(Param("rounds"), GP64())
	for i := range 14 {
		VPXORD(zmm(i), zmm(i), zmm(i))
	}
	Label("bf16Peak_loop")
	TESTQ(n, n)
	JZ(LabelRef("bf16Peak_done"))
	for i := range 12 {
		vdpbf16ps(zmm(12), zmm(13), zmm(i))
	}
	DECQ(n)
	JMP(LabelRef("bf16Peak_loop"))
	Label("bf16Peak_done")
	VZEROUPPER()
	RET()
}

// cpuid emits the CPUID reader: leaf and sub-leaf in EAX and ECX, the
// four result registers out.
func cpuid() {
	TEXT("cpuid", NOSPLIT, "func(leaf, sub uint32) (eax, ebx, ecx, edx uint32)")
	Doc("cpuid executes CPUID with EAX = leaf and ECX = sub.")
	Load(Param("leaf"), reg.EAX)
	Load(Param("sub"), reg.ECX)
	CPUID()
	Store(reg.EAX, Return("eax"))
	Store(reg.EBX, Return("ebx"))
	Store(reg.ECX, Return("ecx"))
	Store(reg.EDX, Return("edx"))
	RET()
}
