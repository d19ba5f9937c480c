package cpu

import (
	"errors"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Lowering of the integer dot fusion (fusion_int8_dot.go): the 8-bit GEMM
// on the operands as they are, and the zero points folded in by
//
//	Σ(a-za)(b-zb) = Σab - zb·Σa - za·(Σb - K·zb)
//
// (sums over the K contracted values; za one per row of A, zb one per
// column of B): C starts as minus the two correction terms and the GEMM
// adds A·B to it. Every step wraps in s32 as the evaluator's sums do
// (they wrap in 64 bits and truncate, which commutes with + and ·), so the
// result is the evaluator's bit for bit. A u8 B is read as the s8 b-128
// the GEMM takes, its zero points shifted by 128 with it. B's column sums
// and s8 form are made once when B is a constant (a layer's weights).

// int8Dot is a kCustom integer dot fusion as its kernel runs it.
type int8Dot struct {
	g       gemmPlan // the dimensions; the views' Data are unset
	pa, pb  int      // the fusion parameters holding the 8-bit operands
	za, zb  *zeroPoints
	shiftB  bool          // B is u8: the GEMM reads b-128
	constB  *int8Operands // B as the GEMM reads it, when it is a constant
	threads int
}

// zeroPoints reads one operand's zero points: fusion parameter param,
// broadcast to the operand, whose element at an operand's row-major
// offset is at(offset).
type zeroPoints struct {
	param int
	at    func(off int) int
}

// int8Operands is B as the GEMM reads it (s8, laid out as B is) and its
// sums over K per column of each product (nil until wanted).
type int8Operands struct {
	s8   []int8
	sums []int32
}

// lowerInt8DotFusion compiles a kCustom fusion of fuseInt8Dots.
func lowerInt8DotFusion(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	fc := in.Computation("calls")
	if kind, _ := in.EnumAttr("kind"); kind != kCustom || fc == nil || fc.Root == nil {
		return nil, false
	}
	d := fc.Root
	a, b, ok := int8DotOperands(d)
	if !ok || a.x == nil || b.x == nil || a.x.Opcode != hlo.OpParameter || b.x.Opcode != hlo.OpParameter || !plainArray(d.Shape) {
		return nil, false
	}
	g, ok := planProduct(d)
	if !ok {
		return nil, false
	}
	p := &int8Dot{g: g, pa: int(a.x.ParamNumber), pb: int(b.x.ParamNumber), shiftB: b.x.Shape.DType == hlo.U8, threads: threads}
	if p.za, ok = zeroPointsOf(a); !ok {
		return nil, false
	}
	if p.zb, ok = zeroPointsOf(b); !ok {
		return nil, false
	}
	if w := in.Operands[p.pb]; w.Opcode == hlo.OpConstant && w.Literal != nil && !w.Literal.IsElided() {
		p.constB = p.operandB(w.Literal, p.za != nil)
	}
	return p.run, true
}

// zeroPointsOf returns how o's zero points are read (nil: it has none).
func zeroPointsOf(o int8Operand) (*zeroPoints, bool) {
	if o.zp == nil {
		return nil, true
	}
	z := o.zp.Operands[0]
	if z.Opcode != hlo.OpParameter || z.Shape.DType != hlo.S32 || !plainArray(z.Shape) {
		return nil, false
	}
	s, dims := o.sub.Shape, o.zp.Dimensions()
	ss, zs := hlo.RowMajorStrides(s.Dims), hlo.RowMajorStrides(z.Shape.Dims)
	return &zeroPoints{param: int(z.ParamNumber), at: func(off int) int {
		zi := 0
		for t, d := range dims {
			zi += off / ss[d] % int(s.Dims[d]) * zs[t]
		}
		return zi
	}}, true
}

func (p *int8Dot) run(out *hlo.Literal, ops []*hlo.Literal) error {
	c := out.Data().([]int32)
	if len(c) == 0 {
		return nil
	}
	b := p.constB
	if b == nil {
		b = p.operandB(ops[p.pb], p.za != nil)
	}
	za, zb := p.zeroRows(ops), p.zeroCols(ops)
	corrected := za != nil || zb != nil
	if corrected {
		p.startC(c, ops[p.pa], b, za, zb)
	}
	return p.gemm(ops[p.pa], b.s8, c, corrected)
}

// operandB makes B's s8 form and, if sums, its column sums.
func (p *int8Dot) operandB(l *hlo.Literal, sums bool) *int8Operands {
	o := &int8Operands{}
	if x, ok := l.Data().([]uint8); ok {
		o.s8 = make([]int8, len(x))
		splitRange(len(x), len(x), p.threads, func(lo, hi int) {
			for i, v := range x[lo:hi] {
				o.s8[lo+i] = int8(v ^ 0x80) // v - 128
			}
		})
	} else {
		o.s8 = l.Data().([]int8)
	}
	if !sums {
		return o
	}
	g := &p.g
	o.sums = make([]int32, g.batch*g.n)
	// Columns in parts across the threads, each part's sums kept while
	// B's rows stream past (a weight matrix given at run time).
	splitRange(g.batch*g.n, g.batch*g.n*g.k, p.threads, func(lo, hi int) {
		for c := lo; c < hi; {
			i, j := c/g.n, c%g.n
			s := o.sums[c : c+min(hi-c, g.n-j)]
			_, bo := g.offsets(i)
			for k := range g.k {
				row := bo + k*g.b.Row + j*g.b.Col
				if g.b.Col == 1 { // B's rows contiguous
					for jj, v := range o.s8[row : row+len(s)] {
						s[jj] += int32(v)
					}
					continue
				}
				for jj := range s {
					s[jj] += int32(o.s8[row+jj*g.b.Col])
				}
			}
			c += len(s)
		}
	})
	return o
}

// zeroRows is A's zero point for each row of each product (nil: none).
func (p *int8Dot) zeroRows(ops []*hlo.Literal) []int32 {
	if p.za == nil {
		return nil
	}
	g, z := &p.g, ops[p.za.param].Data().([]int32)
	rows := make([]int32, g.batch*g.m)
	for i := range g.batch {
		ao, _ := g.offsets(i)
		for r := range g.m {
			rows[i*g.m+r] = z[p.za.at(ao+r*g.a.Row)]
		}
	}
	return rows
}

// zeroCols is B's zero point for each column of each product, as the
// GEMM reads B (shifted by 128 from a u8 B's), or nil for none.
func (p *int8Dot) zeroCols(ops []*hlo.Literal) []int32 {
	if p.zb == nil && !p.shiftB {
		return nil
	}
	g := &p.g
	cols := make([]int32, g.batch*g.n)
	if p.zb != nil {
		z := ops[p.zb.param].Data().([]int32)
		for i := range g.batch {
			_, bo := g.offsets(i)
			for j := range g.n {
				cols[i*g.n+j] = z[p.zb.at(bo+j*g.b.Col)]
			}
		}
	}
	if p.shiftB {
		for j := range cols {
			cols[j] -= 128
		}
	}
	return cols
}

// startC sets C to -(zb·Σa + za·(Σb - K·zb)) per element, the sums of
// A's rows taken only when there are zb.
func (p *int8Dot) startC(c []int32, a *hlo.Literal, b *int8Operands, za, zb []int32) {
	g := &p.g
	var rowSums, q []int32
	if zb != nil {
		rowSums = p.rowSums(a)
	}
	if za != nil {
		q = make([]int32, g.batch*g.n)
		for j := range q {
			q[j] = b.sums[j]
			if zb != nil {
				q[j] -= int32(g.k) * zb[j]
			}
		}
	}
	rows := g.batch * g.m
	splitRange(rows, rows*g.n, p.threads, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			cr, col := c[r*g.n:(r+1)*g.n], r/g.m*g.n
			switch {
			case zb != nil && za != nil:
				sa, z, zc, qc := rowSums[r], za[r], zb[col:col+g.n], q[col:col+g.n]
				for j := range cr {
					cr[j] = -(zc[j]*sa + z*qc[j])
				}
			case zb != nil:
				sa, zc := rowSums[r], zb[col:col+g.n]
				for j := range cr {
					cr[j] = -zc[j] * sa
				}
			case r > lo && r%g.m != 0 && za[r] == za[r-1]:
				copy(cr, c[(r-1)*g.n:r*g.n]) // a zero point per tensor: the same row
			default:
				z, qc := za[r], q[col:col+g.n]
				for j := range cr {
					cr[j] = -z * qc[j]
				}
			}
		}
	})
}

// rowSums is Σa over K for each row of each product.
func (p *int8Dot) rowSums(a *hlo.Literal) []int32 {
	g := &p.g
	sums := make([]int32, g.batch*g.m)
	splitRange(len(sums), len(sums)*g.k, p.threads, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ao, _ := g.offsets(r / g.m)
			at := ao + r%g.m*g.a.Row
			switch x := a.Data().(type) {
			case []uint8:
				sums[r] = sumStrided(x, at, g.a.Col, g.k)
			case []int8:
				sums[r] = sumStrided(x, at, g.a.Col, g.k)
			}
		}
	})
	return sums
}

func sumStrided[T uint8 | int8](x []T, at, step, n int) int32 {
	var s int32
	if step == 1 { // a row of A as it lies: no bounds checks
		for _, v := range x[at : at+n] {
			s += int32(v)
		}
		return s
	}
	for k := range n {
		s += int32(x[at+k*step])
	}
	return s
}

// gemm runs C = A·B (or C += A·B) on the 8-bit GEMM, per product.
func (p *int8Dot) gemm(a *hlo.Literal, b []int8, c []int32, accumulate bool) error {
	g := &p.g
	errs := make([][]error, g.batch)
	runBatch(g.batch, g.m, g.n, g.k, p.threads, func(i, threads int) {
		ao, bo := g.offsets(i)
		ci := c[i*g.m*g.n:]
		parts := columnParts(g.m, g.n, g.k, threads)
		errs[i] = make([]error, parts)
		product := func(t int) {
			j0, j1 := g.n*t/parts/int8Cols*int8Cols, g.n*(t+1)/parts/int8Cols*int8Cols
			if t == parts-1 {
				j1 = g.n
			}
			bs := kernels.Strided[int8]{Data: b[bo+j0*g.b.Col:], Row: g.b.Row, Col: g.b.Col}
			errs[i][t] = gemm8(a, ao, g, bs, ci[j0:], j1-j0, accumulate, threads/parts)
		}
		if parts == 1 {
			product(0)
			return
		}
		kernels.Parallel(parts, product)
	})
	return errors.Join(slices.Concat(errs...)...)
}

// int8Cols aligns the column parts: the 8-bit micro-kernels' widest
// tile is 32 columns.
const int8Cols = 32

// columnParts is how many column parts a product is cut into, each run
// on a thread of its own: a product with fewer rows than columns (a
// layer over 128 tokens of 3072 features) on several threads, whose GEMM
// splits rows, would pack all of B on every thread; cut by columns, each
// packs its part of B and all of the smaller A.
func columnParts(m, n, k, threads int) int {
	if threads <= 1 || m >= n || n < threads*int8Cols || kernels.GemmRunsInline(m, n, k, false) {
		return 1
	}
	return threads
}

// gemm8 runs the 8-bit GEMM of A (u8 or s8, from ao) by b into cols
// columns of c.
func gemm8(a *hlo.Literal, ao int, g *gemmPlan, b kernels.Strided[int8], c []int32, cols int, accumulate bool, threads int) error {
	switch x := a.Data().(type) {
	case []uint8:
		as := kernels.Strided[uint8]{Data: x[ao:], Row: g.a.Row, Col: g.a.Col}
		return kernels.GemmU8S8(g.m, cols, g.k, as, b, c, g.n, accumulate, max(threads, 1))
	case []int8:
		as := kernels.Strided[int8]{Data: x[ao:], Row: g.a.Row, Col: g.a.Col}
		return kernels.GemmS8(g.m, cols, g.k, as, b, c, g.n, accumulate, max(threads, 1))
	}
	return nil
}
