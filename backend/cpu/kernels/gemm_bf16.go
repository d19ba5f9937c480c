package kernels

import (
	"fmt"
	"math"
	"unsafe"
)

//go:generate sh -c "cd _asm && go run ./bf16 -out ../gemm_bf16_amd64.s -stubs ../gemm_bf16_stub_amd64.go -pkg kernels"

// bf16×bf16→f32 GEMM on AVX512_BF16's VDPBF16PS, GemmNarrowF32's path
// where preferBF16DP says the CPU runs it faster than the f32 kernels
// (cpu_model_amd64.go).
//
// VDPBF16PS takes its operands as bf16 pairs in 32-bit lanes and adds
// both of a lane's products to the lane's f32 accumulator, so the shared
// dimension is taken in pairs, as the s8 GEMM's VPMADDWD takes it: packed
// A holds, per pair step, MR words (a[i,2p] in the low half, a[i,2p+1] in
// the high), packed B NR words (b[2p,j], b[2p+1,j]). A kernel step
// broadcasts a row's word against the B vectors: 32 multiply-adds an
// instruction against 16 for an f32 FMA, and half the bytes packed. An
// odd k, rows past m and columns past n are padded with zeros.
//
// The driver is gemmCore's, counting k in pairs, with K slices of bf16KC
// steps; its float32 buffers hold the packed words (words). Its size
// thresholds count pair steps too: a product runs inline below 2^24 flops
// here, not 2^23.
//
// Rounding differs from the f32 kernels': the instruction reads bf16
// subnormals as zero, flushes subnormal results to zero and rounds to
// nearest even after every product, whatever MXCSR says (dotBF16, the
// kernels' Go twin, gives the same bits).
const bf16MR, bf16NR = 6, 16

// bf16KC is the bf16 GEMM's K slice in pair steps (2048 values of k), four
// times the f32 GEMM's gemmKC: each slice reads and writes all of C once,
// and at twice the f32 kernels' multiply-adds a cycle those passes cost
// twice as much. On Zen 4, 2048³ on two threads: 256 steps 42.6 ms, 512
// 40.5, 1024 39.5 (one process, runs alternated; 1024 again best of three
// rounds). The f32 GEMM measured no difference between 256 and 512. A
// slice of B then takes 128 KiB a pair of slivers, past L1, and a block
// of A 480 KiB of L2 (1 MiB on Zen 4): the kernel's B loads hit L2 and
// keep up.
const bf16KC = 1024

// gemmBF16DP is GemmNarrowF32 for two bf16 operands on VDPBF16PS (on
// the kernels' Go twin where the CPU has no AVX512_BF16).
func gemmBF16DP(m, n, k int, a, b Narrow, c []float32, ldc int, accumulate bool, threads int) {
	pb := func(dst []float32, pc, jc, kb, nb, from, to int) {
		packBBF16(words(dst), b, k, pc, jc, kb, nb, from, to)
	}
	gemmCore(m, n, (k+1)/2, bf16Block(a, k), pb, c, ldc, accumulate, threads, bf16MR, bf16NR, nil)
}

// bf16Block is the bf16 GEMM's blocks of C for A (k values a row): each
// packs its rows of A in pairs and runs the VDPBF16PS kernels over them.
func bf16Block(a Narrow, k int) aBlock[float32] {
	return aBlock[float32]{kc: bf16KC, run: func(ap, bp, c []float32, ldc, ic, pc, jc, mb, nb, kb int, overwrite, _ bool, _ bPrefetch[float32], _ *TileOps) int {
		packABF16(words(ap), a, k, ic, pc, mb, kb)
		macroKernelBF16(words(ap), words(bp), c, ldc, ic, jc, mb, nb, kb, overwrite)
		return 0
	}}
}

// PackedBF16 is a bf16 B (k×n) packed once for GemmBF16Packed, as
// gemmBF16DP's packer lays it out: for each K slice (bf16KC pair steps)
// every NR-column sliver, pair step by pair step. A model's constant
// weights: packing them on every call read and wrote all of B for one
// use of each word per block of A's rows.
type PackedBF16 struct {
	k, n   int
	panels [][]float32 // by K slice; the words as float32 buffers hold them
}

// PackBF16 packs the bf16 B (k×n, read through its strides) for
// GemmBF16Packed.
func PackBF16(k, n int, b Narrow) (*PackedBF16, error) {
	if k < 0 || n < 0 {
		return nil, fmt.Errorf("kernels: PackBF16: negative size %d×%d", k, n)
	}
	if k > 0 && n > 0 && (len(b.Data) <= (k-1)*b.Row+(n-1)*b.Col || b.Row < 0 || b.Col < 0) {
		return nil, fmt.Errorf("kernels: PackBF16: %d values cannot hold a %d×%d operand with strides %d, %d", len(b.Data), k, n, b.Row, b.Col)
	}
	p := &PackedBF16{k: k, n: n}
	slivers, kp := (n+bf16NR-1)/bf16NR, (k+1)/2
	for pc := 0; pc < kp; pc += bf16KC {
		kb := min(bf16KC, kp-pc)
		panel := make([]float32, slivers*bf16NR*kb)
		packBBF16(words(panel), b, k, pc, 0, kb, n, 0, slivers)
		p.panels = append(p.panels, panel)
	}
	return p, nil
}

// panel returns the slivers of K slice pc (in pair steps) from column jc
// (a multiple of NR) on.
func (p *PackedBF16) panel(pc, jc, kb, _ int) []float32 {
	return p.panels[pc/bf16KC][jc/bf16NR*bf16NR*kb:]
}

// GemmBF16Packed is GemmNarrowF32 on the bf16 dot-product kernels (the
// VDPBF16PS path, its Go twin where the CPU lacks the instruction) for a
// bf16 A and a B packed ahead by PackBF16: the same bits, B read in place.
func GemmBF16Packed(m, n, k int, a Narrow, packed *PackedBF16, c []float32, ldc int, threads int) error {
	if packed == nil || packed.k != k || packed.n != n {
		return fmt.Errorf("kernels: GemmBF16Packed: a %d×%d product given a packed B of another shape", k, n)
	}
	if m > 0 && n > 0 && (ldc < n || len(c) < (m-1)*ldc+n) {
		return fmt.Errorf("kernels: GemmBF16Packed: %d values with rows %d apart cannot hold a %d×%d C", len(c), ldc, m, n)
	}
	if m > 0 && k > 0 && (a.Row < 0 || a.Col < 0 || len(a.Data) <= (m-1)*a.Row+(k-1)*a.Col) {
		return fmt.Errorf("kernels: GemmBF16Packed: %d values cannot hold a %d×%d A with strides %d, %d", len(a.Data), m, k, a.Row, a.Col)
	}
	gemmCoreFrom(m, n, (k+1)/2, bf16Block(a, k), bSource[float32]{panel: packed.panel}, c, ldc, false, threads, bf16MR, bf16NR, nil)
	return nil
}

// words is a float32 packing buffer seen as the 32-bit words it holds:
// packed bf16 pairs are bit patterns, never float values, so they go
// through no float register (which may quiet a NaN's bits).
func words(f []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
}

// packABF16 packs rows [ic, ic+mb) of A, pair steps [pc, pc+kb) (values
// [2pc, 2pc+2kb) of k), into MR-row slivers of kb steps, MR words a step.
func packABF16(dst []uint32, a Narrow, k, ic, pc, mb, kb int) {
	n := min(2*kb, k-2*pc) // values of k in the block
	for s := 0; s < mb; s += bf16MR {
		d := dst[s*kb : (s+bf16MR)*kb]
		rows := min(bf16MR, mb-s)
		if rows < bf16MR {
			clear(d)
		}
		if rows == bf16MR && a.Col == 1 && packWords6(d, a.Data, (ic+s)*a.Row+2*pc, a.Row, n) {
			continue
		}
		for r := range rows {
			packPairs(d[r:], a.Data, (ic+s+r)*a.Row+2*pc*a.Col, a.Col, n, bf16MR)
		}
	}
}

// littleEndian: a bf16 pair in memory, value 2q then 2q+1, read as one
// 32-bit word holds 2q in its low half, as the kernels take it.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// packWords6 packs six rows of a row-major A (row 0 at src[at], rows lda
// apart), n values each, as packPairs would: where each row's pairs lie
// in memory as aligned 32-bit words, already the words the kernel takes,
// so packing is a transpose of six rows of words (a word a load, not two
// halves put together). It reports false, packing nothing, elsewhere.
func packWords6(d []uint32, src []uint16, at, lda, n int) bool {
	if n < 2 {
		return false
	}
	q := n / 2 // whole pairs
	var w [bf16MR][]uint32
	for r := range w {
		o := at + r*lda
		var ok bool
		if w[r], ok = wordsOf(src[o : o+2*q]); !ok {
			return false
		}
	}
	ld := 0 // the rows' distance in words, where a whole number
	if lda%2 == 0 {
		ld = lda / 2
	}
	interleaveWords6(d[:bf16MR*q], &w, ld)
	if n%2 == 1 { // the last value alone, its partner zero
		o := d[bf16MR*q:]
		for r := range bf16MR {
			o[r] = uint32(src[at+r*lda+n-1])
		}
	}
	return true
}

// packBBF16 packs columns [jc, jc+nb) of B, pair steps [pc, pc+kb), into
// NR-column slivers of kb steps, NR words a step; only slivers [from, to)
// (in units of NR columns), so threads can share the work.
func packBBF16(dst []uint32, b Narrow, k, pc, jc, kb, nb, from, to int) {
	to = min(to, (nb+bf16NR-1)/bf16NR)
	n := min(2*kb, k-2*pc)
	if b.Col == 1 {
		whole := max(from, min(to, nb/bf16NR)) // slivers [from, whole) are NR wide
		packRowsBF16(dst, b, 2*pc, jc, n, kb, from, whole)
		from = whole
	}
	for sl := from; sl < to; sl++ {
		d := dst[sl*bf16NR*kb : (sl+1)*bf16NR*kb]
		c0 := sl * bf16NR
		cols := min(bf16NR, nb-c0)
		if cols < bf16NR {
			clear(d)
		}
		if b.Col == 1 {
			packRowPairs16(d, b, 2*pc, jc+c0, n, cols)
			continue
		}
		for j := range cols {
			packPairs(d[j:], b.Data, (jc+c0+j)*b.Col+2*pc*b.Row, b.Row, n, bf16NR)
		}
	}
}

// packRowsBF16 packs whole slivers [from, to) of a B with unit column
// stride, rows [p, p+n), a pair of rows at a time across all of them:
// each row is read front to back once, where a sliver at a time read a
// 32-byte piece of every row, a row apart (half a cache line, the other
// half read again for the next sliver).
func packRowsBF16(dst []uint32, b Narrow, p, j, n, kb, from, to int) {
	if from >= to {
		return
	}
	cols := (to - from) * bf16NR
	for q := range (n + 1) / 2 {
		lo := b.Data[(p+2*q)*b.Row+j+from*bf16NR:][:cols]
		var hi []uint16
		if 2*q+1 < n {
			hi = b.Data[(p+2*q+1)*b.Row+j+from*bf16NR:][:cols]
			if interleaveRowsBF16(to-from, lo, hi, dst[from*bf16NR*kb+q*bf16NR:], bf16NR*kb) {
				continue
			}
		}
		for sl := range to - from {
			o := (*[bf16NR]uint32)(dst[(from+sl)*bf16NR*kb+q*bf16NR:])
			l := (*[bf16NR]uint16)(lo[sl*bf16NR:])
			if hi == nil { // an odd last value: its partner zero
				for x := range bf16NR {
					o[x] = uint32(l[x])
				}
				continue
			}
			h := (*[bf16NR]uint16)(hi[sl*bf16NR:])
			for x := range bf16NR {
				o[x] = uint32(l[x]) | uint32(h[x])<<16
			}
		}
	}
}

// packRowPairs16 packs cols (≤ NR) contiguous columns from column j of
// rows [p, p+n) of a B with unit column stride two rows at a time (a
// partial sliver: packRowsBF16 packs whole ones).
func packRowPairs16(d []uint32, b Narrow, p, j, n, cols int) {
	for q := range (n + 1) / 2 {
		lo := b.Data[(p+2*q)*b.Row+j:][:cols]
		o := d[q*bf16NR:][:cols]
		if 2*q+1 == n {
			for x, v := range lo {
				o[x] = uint32(v)
			}
			continue
		}
		hi := b.Data[(p+2*q+1)*b.Row+j:][:cols]
		for x, v := range lo {
			o[x] = uint32(v) | uint32(hi[x])<<16
		}
	}
}

// packPairs writes the n values src[at + i·stride] as pairs, pair q to
// dst[q·step]: value 2q in the low half, 2q+1 in the high, zero past n.
func packPairs(dst []uint32, src []uint16, at, stride, n, step int) {
	if stride == 1 {
		s := src[at : at+n]
		for q := range n / 2 {
			dst[q*step] = uint32(s[2*q]) | uint32(s[2*q+1])<<16
		}
	} else {
		for q := range n / 2 {
			dst[q*step] = uint32(src[at+2*q*stride]) | uint32(src[at+(2*q+1)*stride])<<16
		}
	}
	if n%2 == 1 {
		dst[n/2*step] = uint32(src[at+(n-1)*stride])
	}
}

// macroKernelBF16 runs the kernels over a packed block of kp pair steps:
// tiles of two A slivers by two B slivers where the block has them, fewer
// at its edges; tiles past the edge of C go through a scratch tile.
func macroKernelBF16(ap, bp []uint32, c []float32, ldc, ic, jc, mb, nb, kp int, overwrite bool) {
	var scratch [2 * bf16MR * 2 * bf16NR]float32
	for j := 0; j < nb; j += 2 * bf16NR {
		bblocks := 1
		if j+bf16NR < nb {
			bblocks = 2
		}
		bs := bp[j*kp : (j+bblocks*bf16NR)*kp]
		for i := 0; i < mb; i += 2 * bf16MR {
			ablocks := 1
			if i+bf16MR < mb {
				ablocks = 2
			}
			as := ap[i*kp : (i+ablocks*bf16MR)*kp]
			rows, cols := min(ablocks*bf16MR, mb-i), min(bblocks*bf16NR, nb-j)
			off := (ic+i)*ldc + jc + j
			if rows == ablocks*bf16MR && cols == bblocks*bf16NR {
				kernelBF16(ablocks, bblocks, kp, as, bs, c[off:], ldc, overwrite)
				continue
			}
			w := bblocks * bf16NR
			kernelBF16(ablocks, bblocks, kp, as, bs, scratch[:], w, true)
			addTile(scratch[:], c[off:], rows, cols, w, ldc, overwrite)
		}
	}
}

// kernelBF16Go is the kernels' Go twin: C[MR·ablocks × NR·bblocks] += A·B
// (C = A·B if overwrite) over kp pair steps of ablocks A slivers and
// bblocks B slivers, each kp steps long, as the assembly computes it.
func kernelBF16Go(ablocks, bblocks, kp int, a, b []uint32, c []float32, ldc int, overwrite bool) {
	for u := range ablocks {
		for v := range bblocks {
			tileBF16Go(kp, a[u*bf16MR*kp:(u+1)*bf16MR*kp], b[v*bf16NR*kp:(v+1)*bf16NR*kp],
				c[u*bf16MR*ldc+v*bf16NR:], ldc, overwrite)
		}
	}
}

// tileBF16Go computes one MR×NR tile: every element's sum runs over the
// steps in order, one dotBF16 a step, as each lane of the assembly's
// accumulators does.
func tileBF16Go(kp int, a, b []uint32, c []float32, ldc int, overwrite bool) {
	var acc [bf16MR * bf16NR]float32
	for q := range kp {
		ap := a[q*bf16MR : (q+1)*bf16MR]
		bp := b[q*bf16NR : (q+1)*bf16NR]
		for i, x := range ap {
			row := acc[i*bf16NR : (i+1)*bf16NR]
			for j, y := range bp {
				row[j] = dotBF16(row[j], x, y)
			}
		}
	}
	storeAcc(acc[:], c, bf16MR, bf16NR, ldc, overwrite)
}

// dotBF16 is one lane of VDPBF16PS: acc plus the products of the bf16
// pairs x and y, high halves first, then low (Intel SDM, VDPBF16PS: two
// f32 FMAs in that order), each rounded to nearest even, reading bf16
// subnormals as zero and flushing a subnormal result to zero.
func dotBF16(acc float32, x, y uint32) float32 {
	acc = fmaBF16(acc, uint16(x>>16), uint16(y>>16))
	return fmaBF16(acc, uint16(x), uint16(y))
}

// fmaBF16 is acc + x·y for bf16 x and y, rounded once. The product of
// two bf16 values (8 significant bits each) is exact in float64 at any
// exponent, and acc + x·y in float64 is exact or off by less than an f32
// rounding can see (the 24 bits of acc and the 16 of the product fit 53
// unless one is below the other's f32 rounding position, and then it
// cannot reach a tie), so rounding the float64 sum to f32 rounds as a
// fused multiply-add would.
func fmaBF16(acc float32, x, y uint16) float32 {
	return roundFTZ(float64(acc) + bf16DAZ(x)*bf16DAZ(y))
}

// bf16DAZ is x's value, zero (of x's sign) if x is subnormal.
func bf16DAZ(x uint16) float64 {
	if x&0x7F80 == 0 {
		x &= 0x8000
	}
	return float64(math.Float32frombits(uint32(x) << 16))
}

// tinyF32 is where x86 flushes a result to zero: below it, a value
// rounded to 24 significant bits with an unbounded exponent is still
// below the least normal f32, 2⁻¹²⁶ (tininess after rounding, as SSE
// detects it); at it, the tie rounds up to 2⁻¹²⁶. Measured on the
// development host: 2⁻¹²⁶ - 0.75·2⁻¹⁵⁰ flushes, 2⁻¹²⁶ - 0.25·2⁻¹⁵⁰ gives
// 2⁻¹²⁶. Sums near it are exact in float64 (acc is a multiple of 2⁻¹⁴⁹,
// at least 2⁻¹⁵¹ from it), so comparing the float64 sum decides right.
const tinyF32 = 0x1p-126 - 0x1p-151

// roundFTZ is s rounded to f32, to nearest even, and flushed to zero of
// its sign where tiny.
func roundFTZ(s float64) float32 {
	if math.Abs(s) < tinyF32 {
		return float32(math.Copysign(0, s))
	}
	return float32(s)
}
