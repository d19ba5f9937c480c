package kernels

import (
	"errors"
	"fmt"
	"math"
)

// s8×s8→s32 GEMM, the f32 driver's blocking (gemmCore) on integer data.
//
// AVX2 has no 8-bit multiply that is both exact and accumulating
// (VPMADDUBSW saturates in s16 and wants one operand unsigned), so the
// operands are widened to s16 while packing, with the shared dimension
// taken in pairs: packed A holds, per pair of k, MR (a[i,2p], a[i,2p+1])
// pairs, packed B holds NR (b[2p,j], b[2p+1,j]) pairs. One VPMADDWD of a
// broadcast A pair against a B vector then yields eight exact s32 sums of
// two products (|a·b| ≤ 2^14, so a pair sum fits s16 × s16 → s32), and
// VPADDD adds them into the MR×NR s32 tile kept in registers. An odd k is
// padded with a zero pair half.
//
// Sums wrap modulo 2^32, as XLA's s32 accumulation (preferred_element_type
// s32) does: wrapping addition is associative, so the result is the exact
// integer sum reduced to s32 whatever the blocking, thread count or
// kernel, and the assembly and Go kernels agree bit for bit. A sum can
// leave the s32 range only once k reaches 2^31/2^14 = 131072 (all
// products (-128)·(-128)).

// Blocking: a k block of KC values is KC/2 pairs of s16, so the packed
// blocks take the same bytes as the f32 GEMM's (an MC×KC A block of
// 120 KiB for L2, a KC-deep B sliver of 16 KiB for L1).
const (
	s8MR, s8NR = 6, 16
	s8KC       = 2 * gemmKC
)

// ErrGemmArgs reports a GEMM whose sizes, strides or buffers do not fit.
var ErrGemmArgs = errors.New("kernels: bad GEMM arguments")

// GemmS8 sets C = A·B (or adds A·B to C when accumulate is true) for s8
// A (m×k) and B (k×n) given as strided views and s32 C, row-major with
// row stride ldc. Products and sums are exact, wrapping modulo 2^32 (XLA's
// s32 accumulation). threads > 1 splits the rows of C across that many
// goroutines; the result does not depend on it. It returns an error
// wrapping ErrGemmArgs, touching nothing, when a size, stride or ldc is
// negative or 2^31 or more, or a view or C is too short for the product.
func GemmS8(m, n, k int, a, b Strided[int8], c []int32, ldc int, accumulate bool, threads int) error {
	return gemm8(m, n, k, a, b, c, ldc, accumulate, threads)
}

// GemmU8S8 is GemmS8 for a u8 A (ONNX's MatMulInteger: u8 activations,
// s8 weights). The u8 values widen to s16 as exactly as s8 ones do, and a
// product's size (≤ 255·128) keeps every pair sum exact in s32.
func GemmU8S8(m, n, k int, a Strided[uint8], b Strided[int8], c []int32, ldc int, accumulate bool, threads int) error {
	return gemm8(m, n, k, a, b, c, ldc, accumulate, threads)
}

// byte8 are the 8-bit element types A may have.
type byte8 interface{ int8 | uint8 }

func gemm8[A byte8](m, n, k int, a Strided[A], b Strided[int8], c []int32, ldc int, accumulate bool, threads int) error {
	if err := checkGemmS8(m, n, k, a, b, c, ldc); err != nil {
		return err
	}
	gemmS8(m, n, k, a, b, c, ldc, accumulate, threads)
	return nil
}

func checkGemmS8[A byte8](m, n, k int, a Strided[A], b Strided[int8], c []int32, ldc int) error {
	for _, v := range []int{m, n, k, ldc, a.Row, a.Col, b.Row, b.Col} {
		// Sizes and strides below 2^31 keep the extents below in int64
		// range on every platform, so a huge argument cannot wrap past
		// the checks.
		if v < 0 || int64(v) > math.MaxInt32 {
			return fmt.Errorf("%w: sizes %d×%d×%d, strides A %d,%d B %d,%d, ldc %d", ErrGemmArgs, m, n, k, a.Row, a.Col, b.Row, b.Col, ldc)
		}
	}
	if m == 0 || n == 0 {
		return nil
	}
	if ldc < n || int64(len(c)) < extent(m, n, ldc, 1) {
		return fmt.Errorf("%w: C of %d elements, row stride %d, for %d×%d", ErrGemmArgs, len(c), ldc, m, n)
	}
	if k == 0 {
		return nil
	}
	if !viewFits(a, m, k) {
		return fmt.Errorf("%w: A view (%d elements, strides %d, %d) for %d×%d", ErrGemmArgs, len(a.Data), a.Row, a.Col, m, k)
	}
	if !viewFits(b, k, n) {
		return fmt.Errorf("%w: B view (%d elements, strides %d, %d) for %d×%d", ErrGemmArgs, len(b.Data), b.Row, b.Col, k, n)
	}
	return nil
}

// viewFits says whether every element of a rows×cols view (both
// positive, strides checked not negative) is inside its data.
func viewFits[T byte8](v Strided[T], rows, cols int) bool {
	return extent(rows, cols, v.Row, v.Col) <= int64(len(v.Data))
}

// extent is the elements a rows×cols view with these strides spans.
func extent(rows, cols, row, col int) int64 {
	return int64(rows-1)*int64(row) + int64(cols-1)*int64(col) + 1
}

// gemmS8 is gemmCore's loop nest for packed s16 operands and an s32 C.
func gemmS8[A byte8](m, n, k int, a Strided[A], b Strided[int8], c []int32, ldc int, accumulate bool, threads int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !accumulate {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	if useAsm && useAVX512 && useVNNI {
		gemmQuad(m, n, k, a, b, c, ldc, accumulate, threads)
		return
	}
	threads = max(1, min(threads, (m+s8MR-1)/s8MR))
	if 2*m*n*k < gemmParallelFlops {
		threads = 1
	}
	per := ((m+threads-1)/threads + s8MR - 1) / s8MR * s8MR
	nc := min(gemmNC, (n+s8NR-1)/s8NR*s8NR)
	bp := s16Pool.get(s8KC * nc)
	defer s16Pool.put(bp)
	aps := make([][]int16, threads)
	for t := range aps {
		aps[t] = s16Pool.get(gemmMC * s8KC)
		defer s16Pool.put(aps[t])
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		slivers := (nb + s8NR - 1) / s8NR
		for pc := 0; pc < k; pc += s8KC {
			kb := min(s8KC, k-pc)
			parallel(threads, func(t int) {
				packBS8(bp, b, pc, jc, kb, nb, t*slivers/threads, (t+1)*slivers/threads)
			})
			parallel(threads, func(t int) {
				lo, hi := t*per, min(m, (t+1)*per)
				mc := balancedBlock(hi-lo, gemmMC, s8MR)
				for ic := lo; ic < hi; ic += mc {
					mb := min(mc, hi-ic)
					packAS8(aps[t], a, ic, pc, mb, kb)
					macroKernelS8(aps[t], bp, c, ldc, ic, jc, mb, nb, (kb+1)/2, !accumulate && pc == 0)
				}
			})
		}
	}
}

// s16Pool holds the s16 path's packing buffers.
var s16Pool slicePool[int16]

// packAS8 packs A[ic:ic+mb, pc:pc+kb] into MR-row slivers of kp = ⌈kb/2⌉
// steps, each step MR pairs (a[i,2p], a[i,2p+1]) widened to s16; rows past
// mb and the half pair past an odd kb are zero.
func packAS8[A byte8](dst []int16, a Strided[A], ic, pc, mb, kb int) {
	kp := (kb + 1) / 2
	for s := 0; s < mb; s += s8MR {
		d := dst[s*2*kp : (s+s8MR)*2*kp]
		rows := min(s8MR, mb-s)
		if rows < s8MR {
			clear(d)
		}
		done := 0 // values of each row packed by the vector code
		if a8, ok := any(a).(Strided[int8]); ok && rows == s8MR && a.Col == 1 && packA6S8(kb/16, a8.Data[(ic+s)*a.Row+pc:], a.Row, d) {
			done = kb / 16 * 16 // (the vector code sign-extends: s8 only)
		}
		if done == kb {
			continue
		}
		for r := range rows {
			packRowPairs(d[done*s8MR+2*r:], a, ic+s+r, pc+done, kb-done, 2*s8MR)
		}
	}
}

// packRowPairs writes row i of v, columns [pc, pc+kb), as s16 pairs to
// dst[q*step], dst[q*step+1] for pair q, a zero after an odd last value.
func packRowPairs[T byte8](dst []int16, v Strided[T], i, pc, kb, step int) {
	kp := (kb + 1) / 2
	dst = dst[:(kp-1)*step+2]
	at := i*v.Row + pc*v.Col
	if v.Col == 1 {
		src := v.Data[at : at+kb]
		for q := range kb / 2 {
			d := dst[q*step : q*step+2 : q*step+2]
			d[0], d[1] = int16(src[2*q]), int16(src[2*q+1])
		}
	} else {
		for q := range kb / 2 {
			dst[q*step] = int16(v.Data[at+2*q*v.Col])
			dst[q*step+1] = int16(v.Data[at+(2*q+1)*v.Col])
		}
	}
	if kb%2 == 1 {
		dst[(kp-1)*step] = int16(v.Data[at+(kb-1)*v.Col])
		dst[(kp-1)*step+1] = 0
	}
}

// packBS8 packs B[pc:pc+kb, jc:jc+nb] into NR-column slivers of
// kp = ⌈kb/2⌉ steps, each step NR pairs (b[2p,j], b[2p+1,j]) widened to
// s16, zero past nb and past an odd kb. Only slivers [from, to) are
// packed, so threads can share the work.
func packBS8(dst []int16, b Strided[int8], pc, jc, kb, nb, from, to int) {
	kp := (kb + 1) / 2
	bt := Strided[int8]{Data: b.Data, Row: b.Col, Col: b.Row} // Bᵀ: a B column is a row of it
	for sl := from; sl < to; sl++ {
		d := dst[sl*2*s8NR*kp : (sl+1)*2*s8NR*kp]
		c0 := sl * s8NR
		cols := min(s8NR, nb-c0)
		if cols == s8NR && b.Col == 1 && packRows16S8(kb/2, b.Data[pc*b.Row+jc+c0:], b.Row, d) {
			if kb%2 == 1 { // the last row, paired with zeros
				last := b.Data[(pc+kb-1)*b.Row+jc+c0:][:s8NR]
				tail := d[(kp-1)*2*s8NR:]
				for j, x := range last {
					tail[2*j], tail[2*j+1] = int16(x), 0
				}
			}
			continue
		}
		if cols < s8NR {
			clear(d)
		}
		for j := range cols {
			packRowPairs(d[2*j:], bt, jc+c0+j, pc, kb, 2*s8NR)
		}
	}
}

// macroKernelS8 runs the micro-kernel over every MR×NR tile of a packed
// block of kp steps; tiles past the edge of C go through a scratch tile.
func macroKernelS8(ap, bp []int16, c []int32, ldc, ic, jc, mb, nb, kp int, overwrite bool) {
	var scratch [s8MR * s8NR]int32
	for j := 0; j < nb; j += s8NR {
		for i := 0; i < mb; i += s8MR {
			tileS8(ap, bp, c, scratch[:], ldc, ic, jc, i, j, mb, nb, kp, overwrite)
		}
	}
}

// tileS8 runs the AVX2 (or Go) micro-kernel on the tile at row i and
// column j of the block, through scratch where it crosses C's edge.
func tileS8(ap, bp []int16, c, scratch []int32, ldc, ic, jc, i, j, mb, nb, kp int, overwrite bool) {
	bs := bp[j*2*kp : (j+s8NR)*2*kp]
	as := ap[i*2*kp : (i+s8MR)*2*kp]
	rows, cols := min(s8MR, mb-i), min(s8NR, nb-j)
	off := (ic+i)*ldc + jc + j
	if rows == s8MR && cols == s8NR {
		kernelS8(kp, as, bs, c[off:], ldc, overwrite)
		return
	}
	kernelS8(kp, as, bs, scratch, s8NR, true)
	storeEdge(c[off:], ldc, scratch, s8NR, rows, cols, overwrite)
}

// storeEdge writes (or adds, unless overwrite) the first rows×cols of an
// edge tile computed into scratch (rows sld apart) into C (rows ldc
// apart): the part of a whole tile that lies inside C.
func storeEdge(c []int32, ldc int, scratch []int32, sld, rows, cols int, overwrite bool) {
	for r := range rows {
		row, t := c[r*ldc:r*ldc+cols], scratch[r*sld:r*sld+cols]
		if overwrite {
			copy(row, t)
			continue
		}
		for q := range row {
			row[q] += t[q]
		}
	}
}

// kernelS8Go is the portable micro-kernel: C[MR×NR] += A·B over kp packed
// steps, each a pair of products per element, wrapping as VPMADDWD +
// VPADDD do (a pair sum is exact in s32).
func kernelS8Go(kp int, a, b []int16, c []int32, ldc int, overwrite bool) {
	var acc [s8MR * s8NR]int32
	for q := range kp {
		ap := a[q*2*s8MR : (q+1)*2*s8MR : (q+1)*2*s8MR]
		bp := b[q*2*s8NR : (q+1)*2*s8NR : (q+1)*2*s8NR]
		for i := range s8MR {
			a0, a1 := int32(ap[2*i]), int32(ap[2*i+1])
			row := acc[i*s8NR : (i+1)*s8NR : (i+1)*s8NR]
			for j := range row {
				row[j] += a0*int32(bp[2*j]) + a1*int32(bp[2*j+1])
			}
		}
	}
	storeAcc(acc[:], c, s8MR, s8NR, ldc, overwrite)
}

// GemmBatchS8 runs GemmS8 for each of batch independent products: the
// b-th A, B and C start aStride, bStride and cStride elements after the
// previous ones (a dot's batch dimensions, flattened).
func GemmBatchS8(batch, m, n, k int, a Strided[int8], aStride int, b Strided[int8], bStride int,
	c []int32, ldc, cStride int, accumulate bool, threads int) error {
	return gemmBatch8(batch, m, n, k, a, aStride, b, bStride, c, ldc, cStride, accumulate, threads)
}

// GemmBatchU8S8 is GemmBatchS8 for a u8 A.
func GemmBatchU8S8(batch, m, n, k int, a Strided[uint8], aStride int, b Strided[int8], bStride int,
	c []int32, ldc, cStride int, accumulate bool, threads int) error {
	return gemmBatch8(batch, m, n, k, a, aStride, b, bStride, c, ldc, cStride, accumulate, threads)
}

func gemmBatch8[A byte8](batch, m, n, k int, a Strided[A], aStride int, b Strided[int8], bStride int,
	c []int32, ldc, cStride int, accumulate bool, threads int) error {
	if batch < 0 || aStride < 0 || bStride < 0 || cStride < 0 {
		return fmt.Errorf("%w: batch %d, strides %d, %d, %d", ErrGemmArgs, batch, aStride, bStride, cStride)
	}
	for i := range batch {
		ai, bi := a, b
		ai.Data, bi.Data = sliceFrom(a.Data, i*aStride), sliceFrom(b.Data, i*bStride)
		if err := gemm8(m, n, k, ai, bi, sliceFrom(c, i*cStride), ldc, accumulate, threads); err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
	}
	return nil
}

// sliceFrom is s[i:], or empty when i is past the end (GemmS8 then
// reports the short view instead of a slice bounds panic).
func sliceFrom[T any](s []T, i int) []T {
	if i > len(s) {
		return nil
	}
	return s[i:]
}
