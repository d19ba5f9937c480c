package kernels

import (
	"encoding/binary"
	"unsafe"
)

// The 8-bit GEMM on AVX512_VNNI's VPDPBUSD, which adds the four products
// of a 32-bit lane's u8 bytes (one operand) and s8 bytes (the other) to an
// s32 accumulator: 64 multiply-adds an instruction, four times an f32
// FMA's and twice what VPDPWSSD on gemm_s8.go's s16 pairs gave (Xeon
// family 6 model 207, one core: 729 GOP/s VPDPBUSD against 176 GFLOP/s
// FMA; BenchmarkVNNI8Peak, BenchmarkFMAPeak). Where it runs, gemmS8 hands
// every product here; the s16 path stays for AVX2 and AVX-512 without
// VNNI.
//
// The operands are packed as quads of consecutive k: packed A holds, per
// quad step, MR rows of four u8; packed B holds NR columns of four s8, so
// the pair kernels' layout (6-row A slivers, 16-column B slivers, 4 bytes
// per row or column a step) carries over unchanged. A short last quad is
// padded with zeros.
//
// VPDPBUSD's unsigned operand is A. A u8 A goes in as it is; an s8 A is
// shifted into u8 by adding 128 (flipping its sign bit), which adds
// 128·Σₖ b[k,j] to every element of column j: the B packing sums each
// column of its block and hands the kernel −128 times that as the
// column's starting value (bias), so a block's contribution is exact on
// its own. All of it wraps modulo 2^32 as the s16 path does, so the two
// paths, the evaluator and the pure-Go twin agree bit for bit.

// Blocking: a k block of KC values is KC/4 quads, so the packed blocks
// take the same bytes as the f32 GEMM's (a 120-row A block of 120 KiB for
// L2, a 32-column pair of B slivers of 32 KiB for L1).
const (
	q8MR, q8NR = 6, 16
	q8KC       = 4 * gemmKC
	q8Tile     = 2 * q8NR // columns a kernel call computes
)

// gemmQuad is gemmS8's loop nest on quad-packed operands; the caller has
// handled empty products.
func gemmQuad[A byte8](m, n, k int, a Strided[A], b Strided[int8], c []int32, ldc int, accumulate bool, threads int) {
	_, shift := any(a).(Strided[int8])
	ab := Strided[byte]{Data: bytesOf(a.Data), Row: a.Row, Col: a.Col}
	threads = max(1, min(threads, (m+q8MR-1)/q8MR))
	if 2*m*n*k < gemmParallelFlops {
		threads = 1
	}
	per := ((m+threads-1)/threads + 2*q8MR - 1) / (2 * q8MR) * (2 * q8MR)
	nc := min(gemmNC, roundUp(n, q8Tile))
	kq := (min(q8KC, k) + 3) / 4
	bp := bytePool.get(4 * kq * nc)
	defer bytePool.put(bp)
	bias := make([]int32, nc)
	aps := make([][]byte, threads)
	for t := range aps {
		aps[t] = bytePool.get(4 * kq * roundUp(gemmMC, 2*q8MR))
		defer bytePool.put(aps[t])
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		slivers := roundUp(nb, q8Tile) / q8NR
		for pc := 0; pc < k; pc += q8KC {
			kb := min(q8KC, k-pc)
			parallel(threads, func(t int) {
				packBQuad(bp, bias, b, pc, jc, kb, nb, t*slivers/threads, (t+1)*slivers/threads, shift)
			})
			parallel(threads, func(t int) {
				lo, hi := t*per, min(m, (t+1)*per)
				mc := balancedBlock(hi-lo, gemmMC, 2*q8MR)
				for ic := lo; ic < hi; ic += mc {
					mb := min(mc, hi-ic)
					packAQuad(aps[t], ab, ic, pc, mb, kb, shift)
					macroKernelQuad(aps[t], bp, bias, c, ldc, ic, jc, mb, nb, (kb+3)/4, !accumulate && pc == 0)
				}
			})
		}
	}
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// bytesOf views 8-bit integers as bytes (the same bits).
func bytesOf[T byte8](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s))
}

// int8sOf views bytes as s8 (the same bits).
func int8sOf(s []byte) []int8 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&s[0])), len(s))
}

// bytePool and s32Pool hold the 8-bit GEMM's and convolution's scratch.
var (
	bytePool slicePool[byte]
	s32Pool  slicePool[int32]
)

// packAQuad packs A[ic:ic+mb, pc:pc+kb] into 6-row slivers of
// kq = ⌈kb/4⌉ steps, each step six rows' four bytes (flipped into u8 when
// shift: an s8 A plus 128); rows past mb and bytes past kb are zero.
func packAQuad(dst []byte, a Strided[byte], ic, pc, mb, kb int, shift bool) {
	kq := (kb + 3) / 4
	flip := byte(0)
	if shift {
		flip = 0x80
	}
	for s := 0; s < mb; s += q8MR {
		d := dst[s*4*kq : (s+q8MR)*4*kq]
		rows := min(q8MR, mb-s)
		if rows < q8MR || kb%4 != 0 {
			clear(d)
		}
		done := 0 // values of each row packed by the vector code
		if rows == q8MR && a.Col == 1 {
			done = 16 * packQuads6Rows(kb/16, a.Data[(ic+s)*a.Row+pc:], a.Row, d, flip)
		}
		if done == kb {
			continue
		}
		for r := range rows {
			packRowQuads(d[done/4*4*q8MR+4*r:], a, ic+s+r, pc+done, kb-done, 4*q8MR, flip)
		}
	}
}

// packRowQuads writes row i of v, columns [pc, pc+kb), four bytes a quad
// to dst[q*step:], each byte xor flip; a short last quad keeps the zeros
// dst holds past kb.
func packRowQuads(dst []byte, v Strided[byte], i, pc, kb, step int, flip byte) {
	at := i*v.Row + pc*v.Col
	whole := kb / 4
	if v.Col == 1 {
		src := v.Data[at : at+kb]
		f := uint32(flip) * 0x01010101
		for q := range whole {
			x := binary.LittleEndian.Uint32(src[4*q:])
			binary.LittleEndian.PutUint32(dst[q*step:], x^f)
		}
		for t := 4 * whole; t < kb; t++ {
			dst[whole*step+t%4] = src[t] ^ flip
		}
		return
	}
	for t := range kb {
		dst[t/4*step+t%4] = v.Data[at+t*v.Col] ^ flip
	}
}

// packBQuad packs B[pc:pc+kb, jc:jc+nb] into 16-column slivers of
// kq = ⌈kb/4⌉ steps, each step sixteen columns' four bytes, zero past nb
// and kb, for slivers [from, to) (threads share the work), and sets those
// columns' biases: −128·Σ over the block's rows of the column when shift
// (A is s8 shifted into u8), else zero.
func packBQuad(dst []byte, bias []int32, b Strided[int8], pc, jc, kb, nb, from, to int, shift bool) {
	kq := (kb + 3) / 4
	bt := Strided[byte]{Data: bytesOf(b.Data), Row: b.Col, Col: b.Row} // Bᵀ: a B column is a row of it
	for sl := from; sl < to; sl++ {
		d := dst[sl*4*q8NR*kq : (sl+1)*4*q8NR*kq]
		c0 := sl * q8NR
		cols := max(0, min(q8NR, nb-c0))
		if cols < q8NR || kb%4 != 0 {
			clear(d)
		}
		var sums [q8NR]int32
		if b.Col == 1 && cols == q8NR {
			packRows16Quads(d, b.Data[pc*b.Row+jc+c0:], b.Row, kb, &sums)
		} else {
			for j := range cols {
				packRowQuads(d[4*j:], bt, jc+c0+j, pc, kb, 4*q8NR, 0)
			}
			quadSums(d, kq, &sums)
		}
		for j, s := range sums {
			bias[c0+j] = 0
			if shift {
				bias[c0+j] = -128 * s
			}
		}
	}
}

// packRows16Quads packs kb rows of 16 s8 (src at the first, rows ld
// apart) as ⌈kb/4⌉ steps of 16 columns' four bytes, adding each column's
// values to sums; dst is cleared past kb.
func packRows16Quads(dst []byte, src []int8, ld, kb int, sums *[q8NR]int32) {
	done := 4 * packQuads16S8(kb/4, src, ld, dst, sums)
	for p := done; p < kb; p++ {
		row := bytesOf(src[p*ld : p*ld+q8NR])
		d := dst[p/4*4*q8NR+p%4:]
		for j, x := range row {
			d[4*j] = x
			sums[j] += int32(int8(x))
		}
	}
}

// quadSums adds to sums each column's values of a packed 16-column
// sliver of kq steps (zeros past the block's edge add nothing).
func quadSums(d []byte, kq int, sums *[q8NR]int32) {
	for q := range kq {
		step := d[q*4*q8NR : (q+1)*4*q8NR]
		for j := range q8NR {
			for _, x := range step[4*j : 4*j+4] {
				sums[j] += int32(int8(x))
			}
		}
	}
}

// macroKernelQuad runs the VNNI kernel over every 12×32 (or 6×32) tile of
// a packed block of kq steps; tiles past the edge of C go through a
// scratch tile.
func macroKernelQuad(ap, bp []byte, bias, c []int32, ldc, ic, jc, mb, nb, kq int, overwrite bool) {
	var scratch [2 * q8MR * q8Tile]int32
	packed := roundUp(mb, q8MR)
	for j := 0; j < nb; j += q8Tile {
		bs := bp[j*4*kq : (j+q8Tile)*4*kq]
		bj := bias[j : j+q8Tile]
		cols := min(q8Tile, nb-j)
		for i := 0; i < mb; i += 2 * q8MR {
			blocks := min(2, (packed-i)/q8MR)
			as := ap[i*4*kq : (i+blocks*q8MR)*4*kq]
			rows := min(blocks*q8MR, mb-i)
			off := (ic+i)*ldc + jc + j
			if rows == blocks*q8MR && cols == q8Tile {
				kernelQuad(blocks, kq, as, bs, c[off:], ldc, overwrite, bj)
				continue
			}
			kernelQuad(blocks, kq, as, bs, scratch[:], q8Tile, true, bj)
			storeEdge(c[off:], ldc, scratch[:], q8Tile, rows, cols, overwrite)
		}
	}
}

// kernelQuadGo is the VNNI kernel's pure-Go twin: C[6·blocks × 32] = bias
// + A·B over kq packed quad steps (added to C unless overwrite), wrapping
// as VPDPBUSD does.
func kernelQuadGo(blocks, kq int, a, b []byte, c []int32, ldc int, overwrite bool, bias []int32) {
	var acc [2 * q8MR * q8Tile]int32
	rows := blocks * q8MR
	for r := range rows {
		copy(acc[r*q8Tile:(r+1)*q8Tile], bias[:q8Tile])
	}
	for q := range kq {
		for r := range rows {
			a4 := a[(r/q8MR)*4*q8MR*kq+q*4*q8MR+(r%q8MR)*4:][:4]
			row := acc[r*q8Tile : (r+1)*q8Tile]
			for j := range row {
				b4 := b[(j/q8NR)*4*q8NR*kq+q*4*q8NR+(j%q8NR)*4:][:4]
				for t := range 4 {
					row[j] += int32(a4[t]) * int32(int8(b4[t]))
				}
			}
		}
	}
	storeAcc(acc[:rows*q8Tile], c, rows, q8Tile, ldc, overwrite)
}
