package cpu

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/xlamath"
)

// Dots the f32 GEMM path (lowerDot) does not take: f64 on the f64 GEMM
// and s8×s8→s32 on the s8 GEMM when the dimension numbers fit them, and
// f64 otherwise or integers on a loop over offset tables, which takes any
// dimension numbers.
//
// The evaluator computes integer dots by widening the operands to 64 bits,
// wrapping products and sums there and truncating to the result width.
// Truncation commutes with wrapping + and ·, so converting the operands to
// the result type and computing there gives the same bits.

// dotTables are, per operand, the offset tables of its batch, free and
// contracting index spaces; the result is batch..., lhs free..., rhs free...
type dotTables struct {
	lb, lf, lc []int
	rb, rf, rc []int
	// rfStep is the stride of rf when it is an arithmetic progression
	// (0 when not), so the inner loop walks the right operand directly.
	rfStep int
	// wraps: integer results, whose sums may be reordered.
	wraps   bool
	threads int
}

// lowerDotGeneric compiles f64 and integer dots; false for f32/bf16/f16
// (lowerDot's), complex, pred and mixed float/integer dots.
func lowerDotGeneric(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpDot || len(in.Operands) != 2 || in.HasAttr("sparsity") || !plainArray(in.Shape) {
		return nil, false
	}
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	if !plainArray(l) || !plainArray(r) {
		return nil, false
	}
	t := in.Shape.DType
	if t == hlo.F64 {
		if l.DType != hlo.F64 || r.DType != hlo.F64 {
			return nil, false
		}
		if k, ok := gemmDotF64(in, threads); ok {
			return k, true
		}
	} else if t == hlo.F32 && l.DType == hlo.F32 && r.DType == hlo.F32 {
		return f32DotLoop(in, threads)
	} else if t.IsFloat() {
		if !l.DType.IsFloat() || !r.DType.IsFloat() {
			return nil, false
		}
		return floatDotLoop(in, threads)
	} else if !intDotType(t) || !intDotType(l.DType) || !intDotType(r.DType) {
		return nil, false
	} else if t == hlo.S32 && l.DType == hlo.S8 && r.DType == hlo.S8 {
		if k, ok := gemmDotS8(in, threads); ok {
			return k, true
		}
	}
	p, ok := newDotTables(in)
	if !ok {
		return nil, false
	}
	p.threads, p.wraps = threads, t != hlo.F64
	return numberMakers[*dotTables, kernelFunc]{f64: runDotLoop[float64],
		s8: runDotLoop[int8], s16: runDotLoop[int16], s32: runDotLoop[int32], s64: runDotLoop[int64],
		u8: runDotLoop[uint8], u16: runDotLoop[uint16], u32: runDotLoop[uint32], u64: runDotLoop[uint64]}.of(t, p)
}

func intDotType(t hlo.DType) bool {
	switch t {
	case hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U8, hlo.U16, hlo.U32, hlo.U64:
		return true
	}
	return false
}

// dotGemm is a dot as a batch of GEMMs: C_i (m×n, row-major) = A_i·B_i
// with A_i and B_i read through strides from the operands at offsets
// i·m·k and i·k·n.
type dotGemm struct {
	batch, m, n, k         int
	aRow, aCol, bRow, bCol int
}

// dotAsGemm maps a dot with leading batch dimensions, one contracting and
// at most one free dimension per operand onto a batched GEMM, reading
// either operand transposed through its strides (as lowerDot does for f32).
func dotAsGemm(in *hlo.Instruction) (dotGemm, bool) {
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	lb, rb := attrInts(in, "lhs_batch_dims"), attrInts(in, "rhs_batch_dims")
	lc, rc := attrInts(in, "lhs_contracting_dims"), attrInts(in, "rhs_contracting_dims")
	nb := len(lb)
	if len(lc) != 1 || len(rc) != 1 || !leading(lb) || !leading(rb) || l.Rank() > nb+2 || r.Rank() > nb+2 ||
		int(lc[0]) < nb || int(rc[0]) < nb || int(lc[0]) >= l.Rank() || int(rc[0]) >= r.Rank() {
		return dotGemm{}, false
	}
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	g := dotGemm{batch: 1, m: 1, n: 1, k: int(l.Dims[lc[0]]), aCol: ls[lc[0]], bRow: rs[rc[0]]}
	if l.Rank() == nb+2 {
		free := 2*nb + 1 - int(lc[0]) // the other of the last two
		g.m, g.aRow = int(l.Dims[free]), ls[free]
	}
	if r.Rank() == nb+2 {
		free := 2*nb + 1 - int(rc[0])
		g.n, g.bCol = int(r.Dims[free]), rs[free]
	}
	for _, d := range lb {
		g.batch *= int(l.Dims[d])
	}
	return g, true
}

// gemmDotF64 runs an f64 dot that dotAsGemm maps on GemmF64.
func gemmDotF64(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	g, ok := dotAsGemm(in)
	if !ok {
		return nil, false
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		x, y, c := ops[0].Data().([]float64), ops[1].Data().([]float64), out.Data().([]float64)
		runBatch(g.batch, g.m, g.n, g.k, threads, func(i, threads int) {
			a := kernels.Strided[float64]{Data: x[i*g.m*g.k:], Row: g.aRow, Col: g.aCol}
			b := kernels.Strided[float64]{Data: y[i*g.k*g.n:], Row: g.bRow, Col: g.bCol}
			kernels.GemmF64(g.m, g.n, g.k, a, b, c[i*g.m*g.n:], g.n, false, threads)
		})
		return nil
	}, true
}

// gemmDotS8 runs an s8×s8→s32 dot that dotAsGemm maps on GemmS8 (the
// quantized matmul): its s32 sums wrap as the evaluator's truncated
// 64-bit ones do, so the result is the same bits.
func gemmDotS8(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	g, ok := dotAsGemm(in)
	if !ok {
		return nil, false
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		return g.int8(ops[0], ops[1], out, threads)
	}, true
}

// int8 runs the product on the 8-bit GEMM: a is u8 or s8, b s8, out s32.
func (g dotGemm) int8(a, b, out *hlo.Literal, threads int) error {
	bs := kernels.Strided[int8]{Data: b.Data().([]int8), Row: g.bRow, Col: g.bCol}
	c := out.Data().([]int32)
	if x, ok := a.Data().([]uint8); ok {
		as := kernels.Strided[uint8]{Data: x, Row: g.aRow, Col: g.aCol}
		return kernels.GemmBatchU8S8(g.batch, g.m, g.n, g.k, as, g.m*g.k, bs, g.k*g.n, c, g.n, g.m*g.n, false, threads)
	}
	as := kernels.Strided[int8]{Data: a.Data().([]int8), Row: g.aRow, Col: g.aCol}
	return kernels.GemmBatchS8(g.batch, g.m, g.n, g.k, as, g.m*g.k, bs, g.k*g.n, c, g.n, g.m*g.n, false, threads)
}

// newDotTables resolves any dimension numbers into offset tables.
func newDotTables(in *hlo.Instruction) (*dotTables, bool) {
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	lbd, rbd := attrInts(in, "lhs_batch_dims"), attrInts(in, "rhs_batch_dims")
	lcd, rcd := attrInts(in, "lhs_contracting_dims"), attrInts(in, "rhs_contracting_dims")
	if len(lbd) != len(rbd) || len(lcd) != len(rcd) || !distinctIn(l.Rank(), lbd, lcd) || !distinctIn(r.Rank(), rbd, rcd) {
		return nil, false
	}
	for i := range lbd {
		if l.Dims[lbd[i]] != r.Dims[rbd[i]] {
			return nil, false
		}
	}
	for i := range lcd {
		if l.Dims[lcd[i]] != r.Dims[rcd[i]] {
			return nil, false
		}
	}
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	p := &dotTables{
		lb: offsetTable(lbd, l.Dims, ls), lc: offsetTable(lcd, l.Dims, ls),
		lf: offsetTable(otherDims(l.Rank(), lbd, lcd), l.Dims, ls),
		rb: offsetTable(rbd, r.Dims, rs), rc: offsetTable(rcd, r.Dims, rs),
		rf: offsetTable(otherDims(r.Rank(), rbd, rcd), r.Dims, rs),
	}
	if int64(len(p.lb)*len(p.lf)*len(p.rf)) != in.Shape.NumElements() {
		return nil, false
	}
	p.rfStep = progression(p.rf)
	return p, true
}

// progression returns s when v[j] = j·s for all j, else 0.
func progression(v []int) int {
	if len(v) < 2 {
		return 1
	}
	s := v[1]
	for j, x := range v {
		if x != j*s {
			return 0
		}
	}
	return s
}

// dotElem are the result types of the loop: integers wrap, f32 and f64
// fuse each product into a sum running in contraction order from +0, as
// the evaluator does, so both match it bit for bit.
type dotElem interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// runDotLoop computes one result row (a batch and lhs-free position) at a
// time in i-k-j order, so the right operand streams along its free
// dimension; rows are split across threads in fixed ranges.
func runDotLoop[T dotElem](p *dotTables) kernelFunc {
	nf, nr := len(p.lf), len(p.rf)
	rows := len(p.lb) * nf
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c := out.Data().([]T)
		if len(c) == 0 {
			return nil
		}
		x, y := asElems[T](ops[0]), asElems[T](ops[1])
		splitRange(rows, rows*nr*max(len(p.lc), 1)/4, p.threads, func(lo, hi int) {
			for row := lo; row < hi; row++ {
				b, i := row/nf, row%nf
				dotRow(p, c[row*nr:(row+1)*nr], x, y, p.lb[b]+p.lf[i], p.rb[b])
			}
		})
		return nil
	}
}

// dotRow sets acc[j] = Σ_k x[lo+lc[k]]·y[ro+rc[k]+rf[j]]. Float sums run
// over k in order from zero, each product fused into the sum, as in the
// evaluator; integer sums wrap, so their order is free and dotRow4 takes
// four steps per pass.
func dotRow[T dotElem](p *dotTables, acc, x, y []T, lo, ro int) {
	clear(acc)
	switch a := any(acc).(type) {
	case []float32:
		dotRowFused(p, a, any(x).([]float32), any(y).([]float32), lo, ro, xlamath.FMA32)
		return
	case []float64:
		dotRowFused(p, a, any(x).([]float64), any(y).([]float64), lo, ro, math.FMA)
		return
	}
	k0 := 0
	if p.wraps && p.rfStep == 1 {
		k0 = dotRow4(p, acc, x, y, lo, ro)
	}
	for k := k0; k < len(p.lc); k++ {
		a, r := x[lo+p.lc[k]], ro+p.rc[k]
		switch s := p.rfStep; {
		case s == 1:
			row := y[r:][:len(acc)]
			for j := range acc {
				acc[j] += a * row[j]
			}
		case s != 0:
			for j := range acc {
				acc[j] += a * y[r+j*s]
			}
		default:
			for j, f := range p.rf {
				acc[j] += a * y[r+f]
			}
		}
	}
}

// dotRowFused is dotRow's float loop: acc[j] = fma(a, y, acc[j]) per step.
func dotRowFused[T float32 | float64](p *dotTables, acc, x, y []T, lo, ro int, fma func(a, b, c T) T) {
	for k := range p.lc {
		a, r := x[lo+p.lc[k]], ro+p.rc[k]
		switch s := p.rfStep; {
		case s == 1:
			fusedAxpy(acc, y[r:][:len(acc)], a, fma)
		case s != 0:
			for j := range acc {
				acc[j] = fma(a, y[r+j*s], acc[j])
			}
		default:
			for j, f := range p.rf {
				acc[j] = fma(a, y[r+f], acc[j])
			}
		}
	}
}

// fusedAxpy sets acc[j] = fma(a, y[j], acc[j]), with math.FMA called
// directly (an intrinsic) for float64.
func fusedAxpy[T float32 | float64](acc, y []T, a T, fma func(a, b, c T) T) {
	if acc, ok := any(acc).([]float64); ok {
		y, a := any(y).([]float64), any(a).(float64)
		for j := range acc {
			acc[j] = math.FMA(a, y[j], acc[j])
		}
		return
	}
	for j := range acc {
		acc[j] = fma(a, y[j], acc[j])
	}
}

// dotRow4 adds contraction steps four at a time, one pass over acc each,
// with contiguous right-operand rows; it returns the first step left.
func dotRow4[T dotElem](p *dotTables, acc, x, y []T, lo, ro int) int {
	n, k := len(acc), 0
	for ; k+4 <= len(p.lc); k += 4 {
		a0, a1, a2, a3 := x[lo+p.lc[k]], x[lo+p.lc[k+1]], x[lo+p.lc[k+2]], x[lo+p.lc[k+3]]
		y0, y1 := y[ro+p.rc[k]:][:n], y[ro+p.rc[k+1]:][:n]
		y2, y3 := y[ro+p.rc[k+2]:][:n], y[ro+p.rc[k+3]:][:n]
		for j := range acc {
			acc[j] += a0*y0[j] + a1*y1[j] + a2*y2[j] + a3*y3[j]
		}
	}
	return k
}

// asElems is l's elements as T: the storage itself when l is of type T,
// else a converted copy (integers sign- or zero-extend by their own type,
// as the evaluator's widening does, then wrap to T).
func asElems[T dotElem](l *hlo.Literal) []T {
	if d, ok := l.Data().([]T); ok {
		return d
	}
	switch d := l.Data().(type) {
	case []float32:
		return convertElems[T](d)
	case []int8:
		return convertElems[T](d)
	case []int16:
		return convertElems[T](d)
	case []int32:
		return convertElems[T](d)
	case []int64:
		return convertElems[T](d)
	case []uint8:
		return convertElems[T](d)
	case []uint16:
		return convertElems[T](d)
	case []uint32:
		return convertElems[T](d)
	case []uint64:
		return convertElems[T](d)
	}
	return nil
}

func convertElems[T, S dotElem](s []S) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = T(v)
	}
	return out
}

// f32DotLoop is an f32 dot the GEMM declines (contracting dimensions
// that do not nest into one index): the table loop in float32, each
// product fused into the running sum, as the evaluator computes it — so
// the bits are its.
func f32DotLoop(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	p, ok := newDotTables(in)
	if !ok {
		return nil, false
	}
	p.threads = threads
	return runDotLoop[float32](p), true
}

// floatDotLoop is a dot of other float types (f8, f16, mixed widths) the
// GEMM declines: operands converted to the result type as the evaluator
// converts them (xlamath.AccumOperand), widened exactly to float32, the
// table loop in float32, and each sum rounded once into the result type
// by the literal library.
func floatDotLoop(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	p, ok := newDotTables(in)
	if !ok {
		return nil, false
	}
	p.threads = threads
	wide := func(s hlo.Shape) hlo.Shape {
		s = s.Clone()
		s.DType = hlo.F32
		return s
	}
	t := in.Shape.DType
	acc, ls, rs := wide(in.Shape), wide(in.Operands[0].Shape), wide(in.Operands[1].Shape)
	k := runDotLoop[float32](p)
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		if len(ops) != 2 || ops[0].Len() != int(ls.NumElements()) || ops[1].Len() != int(rs.NumElements()) {
			return fmt.Errorf("dot: operand storage does not match %s", in)
		}
		l, r, a := hlo.NewLiteral(ls), hlo.NewLiteral(rs), hlo.NewLiteral(acc)
		widenFloats(l, xlamath.AccumOperand(ops[0], t))
		widenFloats(r, xlamath.AccumOperand(ops[1], t))
		if err := k(a, []*hlo.Literal{l, r}); err != nil {
			return err
		}
		for i, v := range a.Data().([]float32) {
			out.SetFloat64(i, float64(v))
		}
		return nil
	}, true
}

// widenFloats sets the f32 literal dst to the values of src, which are
// of a float type at most f32 wide, so exactly.
func widenFloats(dst, src *hlo.Literal) {
	d := dst.Data().([]float32)
	for i := range d {
		d[i] = float32(src.GetFloat64(i))
	}
}
