//go:build linux && amd64 && !purego

package jit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// FuzzPrograms generates random programs (every op, f32, bf16 and f16 arrays,
// splats and constants, up to four outputs, and often more live values
// than registers, so the allocator spills) and compares the generated
// code bit for bit with the kernels applied one op at a time over whole
// arrays, which is what the tile programs do.
func FuzzPrograms(f *testing.F) {
	if !Available {
		f.Skip("no code generation here")
	}
	// 206 spilled a dying operand's slot to make room for the result
	// before the instruction read the operand there.
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 7, 8, 40, 77, 206} {
		f.Add(seed)
	}
	for seed := uint64(1000); seed < 1100; seed++ { // lengths and widths enough to meet every loop
		f.Add(seed)
	}
	wide := wideCode
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 0xf00d))
		p := randomProgram(rng)
		if seed%2 == 1 {
			// From a stream of its own: the even seeds' programs (206's)
			// stay what they were.
			withF16(rand.New(rand.NewPCG(seed, 0xf16)), p)
		}
		// Where the code can be 16-lane, a third of the programs are
		// 8-lane, a third 16-lane, and a third as the machine decides.
		switch rng.IntN(3) {
		case 0:
			wideCode = false
		case 1:
			wideAlways = true
		}
		defer func() { wideCode, wideAlways = wide, false }()
		fn, err := Compile(p)
		if err != nil {
			if err == errSpill {
				return // more live values than registers and slots: refused
			}
			t.Fatalf("seed %d: %v", seed, err)
		}
		n := 1 + rng.IntN(200)
		var rowVals [][]float32
		if p.RowLen > 0 {
			n = p.RowLen * (1 + rng.IntN(5))
			for range p.RowScalars {
				rowVals = append(rowVals, testInput(rng, n/p.RowLen, 3))
			}
		}
		ins, scalars := randomArguments(rng, p, n)
		var lay *blockLayout
		if p.RowLen == 0 && rng.IntN(2) == 0 {
			lay = newBlockLayout(rng, p, n, ins)
		}
		want := reference(p, ins, scalars, rowVals, n)
		outs := make([]Array, len(p.outputs()))
		bufs := make([][]float32, len(outs)) // each f32 output and its guard
		for k := range outs {
			if t := p.outputType(k); t != F32 {
				outs[k] = newArray(t, n)
			} else {
				// At a 64-byte boundary or 4 bytes past one: streaming
				// stores take the first, and the second has a head.
				buf := aligned64(n + 1 + guard)[rng.IntN(2):]
				for i := n; i < n+guard; i++ {
					buf[i] = math.Float32frombits(guardBits)
				}
				outs[k].F32, bufs[k] = buf[:n], buf
			}
		}
		if p.RowLen > 0 {
			fn.RunRows(outs, ins, scalars, rowVals, rng.IntN(2) == 0)
		} else {
			fn.Run(outs, ins, scalars, rng.IntN(2) == 0)
		}
		for k := range outs {
			if x := bufs[k]; x != nil {
				for i, v := range x[n : n+guard] {
					if math.Float32bits(v) != guardBits {
						t.Fatalf("seed %d: output %d written %d past its end", seed, k, i)
					}
				}
			}
			for i := range n {
				g, w := arrayBits(outs[k], i), arrayBits(want[k], i)
				if g != w {
					t.Fatalf("seed %d: output %d (value %d, %s), element %d of %d: got %#x, want %#x\nprogram: %+v",
						seed, k, p.outputs()[k], p.Values[p.outputs()[k]].Op, i, n, g, w, p)
				}
			}
		}
		if lay != nil {
			lay.check(t, seed, p, ins, scalars, want)
		}
	})
}

// blockLayout lays a program's n-element arrays out as rows of a block
// for RunStrided: each array with a stride of its own, gaps between an
// output's rows holding guardBits, and some inputs read with stride 0
// (their rows made equal beforehand).
type blockLayout struct {
	rows, cols          int
	inStride, outStride []int
}

func newBlockLayout(rng *rand.Rand, p *Program, n int, ins []Array) *blockLayout {
	rows := 1 + rng.IntN(4)
	if n%rows != 0 {
		rows = 1
	}
	l := &blockLayout{rows: rows, cols: n / rows}
	for k := range ins {
		stride := l.cols + rng.IntN(9)
		if rng.IntN(4) == 0 { // every row reads row 0
			stride = 0
			for i := 1; i < rows; i++ {
				copyArray(ins[k].Slice(i*l.cols, (i+1)*l.cols), ins[k].Slice(0, l.cols))
			}
		}
		l.inStride = append(l.inStride, stride)
	}
	for range p.outputs() {
		l.outStride = append(l.outStride, l.cols+rng.IntN(9))
	}
	return l
}

// check runs p's strided form on the layout and compares every row with
// want, the flat run's results, bit for bit, and the gaps with guardBits.
func (l *blockLayout) check(t *testing.T, seed uint64, p *Program, ins []Array, scalars []float32, want []Array) {
	sp := *p
	sp.Strided = true
	fn, err := Compile(&sp)
	if err != nil {
		t.Fatalf("seed %d: strided: %v", seed, err)
	}
	// spread lays x's rows out stride apart in a new array of type t,
	// its gaps holding guardBits where fill.
	spread := func(x Array, t Type, stride int, fill bool) Array {
		size := (l.rows-1)*stride + l.cols
		y := newArray(t, size)
		if fill {
			for i := range size {
				setArrayBits(y, i, guardBits)
			}
		}
		if x.Len() > 0 {
			for i := range l.rows {
				copyArray(y.Slice(i*stride, i*stride+l.cols), x.Slice(i*l.cols, (i+1)*l.cols))
			}
		}
		return y
	}
	sins := make([]Array, len(ins))
	for k, x := range ins {
		sins[k] = spread(x, p.inputType(k), l.inStride[k], false)
	}
	outs := make([]Array, len(want))
	for k := range want {
		outs[k] = spread(Array{}, p.outputType(k), l.outStride[k], true)
	}
	r := fn.Runner(scalars)
	r.RunStrided(outs, sins, l.rows, l.cols, l.outStride, l.inStride)
	r.Close()
	for k, o := range outs {
		for i := range o.Len() {
			row, col := i/max(l.outStride[k], 1), i%max(l.outStride[k], 1)
			if row < l.rows && col < l.cols {
				if g, w := arrayBits(o, i), arrayBits(want[k], row*l.cols+col); g != w {
					t.Fatalf("seed %d: strided (%d rows of %d, strides in %v out %v): output %d, row %d, column %d: got %#x, want %#x\nprogram: %+v",
						seed, l.rows, l.cols, l.inStride, l.outStride, k, row, col, g, w, p)
				}
			} else if g := arrayBits(o, i); g != guardBits && g != guardBits&0xffff {
				t.Fatalf("seed %d: strided: output %d written at %d, in a gap", seed, k, i)
			}
		}
	}
}

// newArray is an array of n elements of type t (f32 ones at a 64-byte
// boundary, where streaming stores go).
func newArray(t Type, n int) Array {
	switch t {
	case BF16:
		return Array{BF16: make([]uint16, n)}
	case F16:
		return Array{F16: make([]uint16, n)}
	}
	return Array{F32: aligned64(n)}
}

// copyArray copies src into dst, of the same type.
func copyArray(dst, src Array) {
	copy(dst.F32, src.F32)
	copy(dst.BF16, src.BF16)
	copy(dst.F16, src.F16)
}

func arrayBits(a Array, i int) uint32 {
	switch {
	case a.F32 != nil:
		return math.Float32bits(a.F32[i])
	case a.F16 != nil:
		return uint32(a.F16[i])
	}
	return uint32(a.BF16[i])
}

// setArrayBits sets element i of a to bits (their low half, narrow).
func setArrayBits(a Array, i int, bits uint32) {
	switch {
	case a.F32 != nil:
		a.F32[i] = math.Float32frombits(bits)
	case a.F16 != nil:
		a.F16[i] = uint16(bits)
	default:
		a.BF16[i] = uint16(bits)
	}
}

// randomProgram makes a well-formed program: selects read masks (compare
// results), everything else reads any earlier value.
func randomProgram(rng *rand.Rand) *Program {
	p := &Program{Inputs: 1 + rng.IntN(MaxInputs-1), Scalars: rng.IntN(3)}
	for k := range p.Inputs {
		p.InputTypes = append(p.InputTypes, Type(rng.IntN(2)))
		p.Values = append(p.Values, Value{Op: Input, Arg: k})
	}
	for k := range p.Scalars {
		p.Values = append(p.Values, Value{Op: Splat, Arg: k})
	}
	p.Values = append(p.Values, Value{Op: Const, Value: float32(rng.IntN(9)-4) / 2})
	var masks []int
	pick := func() int { // recent values more often: longer chains
		n := len(p.Values)
		return n - 1 - min(rng.IntN(n)*rng.IntN(2), n-1)
	}
	ops := []Op{Add, Sub, Mul, Div, Max, Min, Neg, Abs, Sqrt, Exp, Tanh, Logistic, Erf, Clamp, And, Or, Xor,
		CmpEQ, CmpNE, CmpLT, CmpLE, CmpGT, CmpGE, RoundBF16, Select, RoundEven}
	for range 4 + rng.IntN(40) {
		op := ops[rng.IntN(len(ops))]
		v := Value{Op: op}
		for k := range op.arity() {
			v.Args[k] = pick()
		}
		if op == Select {
			if len(masks) == 0 {
				continue
			}
			v.Args[0] = masks[rng.IntN(len(masks))]
		}
		if op >= CmpEQ && op <= CmpGE {
			masks = append(masks, len(p.Values))
		}
		p.Values = append(p.Values, v)
	}
	if p.Scalars > 0 && rng.IntN(3) == 0 { // rows, some scalars per row
		p.RowLen = 8 * (1 + rng.IntN(4))
		for k := range p.Scalars {
			if rng.IntN(2) == 0 {
				p.RowScalars = append(p.RowScalars, k)
			}
		}
	}
	nOut := 1 + rng.IntN(min(MaxOutputs, MaxArrays-p.Inputs))
	for range nOut {
		p.Outputs = append(p.Outputs, p.Inputs+rng.IntN(len(p.Values)-p.Inputs))
		p.OutputTypes = append(p.OutputTypes, Type(rng.IntN(2)))
	}
	// Rows of any length where every array is f32: the code computes
	// each row's last partial vector through masks.
	if p.RowLen > 0 && p.allF32() && rng.IntN(2) == 0 {
		p.RowLen = 1 + rng.IntN(40)
	}
	return p
}

// withF16 makes about half of p's bf16 arrays and roundings f16 ones.
func withF16(rng *rand.Rand, p *Program) {
	for _, ts := range [][]Type{p.InputTypes, p.OutputTypes} {
		for k, t := range ts {
			if t == BF16 && rng.IntN(2) == 0 {
				ts[k] = F16
			}
		}
	}
	for i, v := range p.Values {
		if v.Op == RoundBF16 && rng.IntN(2) == 0 {
			p.Values[i].Op = RoundF16
		}
	}
}

func randomArguments(rng *rand.Rand, p *Program, n int) ([]Array, []float32) {
	ins := make([]Array, p.Inputs)
	// Half the time no special values, so that blocks take the shortcuts
	// (exp, logistic) that any NaN or infinity sends down the full path.
	clean := rng.IntN(2) == 0
	for k := range ins {
		x := testInput(rng, n, 4)
		if clean {
			for i := range x {
				x[i] = (rng.Float32()*2 - 1) * 4
			}
		}
		switch p.inputType(k) {
		case BF16:
			ins[k].BF16 = make([]uint16, n)
			minifloat.BF16.EncodeFloat32(ins[k].BF16, x)
		case F16:
			ins[k].F16 = make([]uint16, n)
			minifloat.F16.EncodeFloat32(ins[k].F16, x)
		default:
			ins[k].F32 = x
		}
	}
	scalars := testInput(rng, p.Scalars, 2)
	return ins, scalars
}

// reference computes p's outputs with the kernels, one op over the whole
// arrays at a time; bf16 rounding as the tile programs' roundBF16 (a NaN
// quieted, its other bits kept) and bf16 storage through minifloat; a row
// scalar spread over its rows.
func reference(p *Program, ins []Array, scalars []float32, rowVals [][]float32, n int) []Array {
	vals := make([][]float32, len(p.Values))
	splat := func(c float32) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = c
		}
		return s
	}
	for i, v := range p.Values {
		d := make([]float32, n)
		a := func(k int) []float32 { return vals[v.Args[k]] }
		switch v.Op {
		case Input:
			switch x := ins[v.Arg]; {
			case x.F32 != nil:
				copy(d, x.F32)
			case x.F16 != nil:
				minifloat.F16.DecodeFloat32(d, x.F16)
			default:
				minifloat.BF16.DecodeFloat32(d, x.BF16)
			}
		case Splat:
			d = splat(scalars[v.Arg])
			if j := slices.Index(p.RowScalars, v.Arg); j >= 0 {
				for e := range d {
					d[e] = rowVals[j][e/p.RowLen]
				}
			}
		case Const:
			d = splat(v.Value)
		case Add:
			kernels.AddF32(d, a(0), a(1))
		case Sub:
			kernels.SubF32(d, a(0), a(1))
		case Mul:
			kernels.MulF32(d, a(0), a(1))
		case Div:
			kernels.DivF32(d, a(0), a(1))
		case Max:
			kernels.MaximumF32(d, a(0), a(1))
		case Min:
			kernels.MinimumF32(d, a(0), a(1))
		case Neg, Abs, Sqrt, Exp, Tanh, Logistic, Erf, RoundEven:
			unaryRefs[v.Op](d, a(0))
		case Clamp:
			kernels.ClampF32(d, a(0), a(1), a(2))
		case And:
			kernels.AndF32(d, a(0), a(1))
		case Or:
			kernels.OrF32(d, a(0), a(1))
		case Xor:
			kernels.XorF32(d, a(0), a(1))
		case CmpEQ, CmpNE, CmpLT, CmpLE, CmpGT, CmpGE:
			kernels.CompareF32(int(v.Op-CmpEQ), d, a(0), a(1))
		case Select:
			kernels.SelectF32(d, a(0), a(1), a(2))
		case RoundBF16:
			for j, x := range a(0) {
				d[j] = roundBF16Ref(x)
			}
		case RoundF16:
			for j, x := range a(0) {
				d[j] = roundF16Ref(x)
			}
		}
		vals[i] = d
	}
	outs := make([]Array, len(p.outputs()))
	for k, o := range p.outputs() {
		switch p.outputType(k) {
		case BF16:
			outs[k].BF16 = make([]uint16, n)
			minifloat.BF16.EncodeFloat32(outs[k].BF16, vals[o])
		case F16:
			outs[k].F16 = make([]uint16, n)
			minifloat.F16.EncodeFloat32(outs[k].F16, vals[o])
		default:
			outs[k].F32 = vals[o]
		}
	}
	return outs
}

// unaryRefs are the unary ops' references: the kernels tile programs
// call.
var unaryRefs = map[Op]func(dst, a []float32){Neg: kernels.NegF32, Abs: kernels.AbsF32, Sqrt: kernels.SqrtF32,
	Exp: kernels.ExpF32, Tanh: kernels.TanhF32, Logistic: kernels.LogisticF32, Erf: kernels.ErfF32, RoundEven: roundEvenRef}

// roundBF16Ref is x rounded to bf16 precision, as an f32.
func roundBF16Ref(x float32) float32 {
	if x != x {
		return math.Float32frombits(math.Float32bits(x) | 0x400000)
	}
	var h [1]uint16
	var r [1]float32
	minifloat.BF16.EncodeFloat32(h[:], []float32{x})
	minifloat.BF16.DecodeFloat32(r[:], h[:])
	return r[0]
}
