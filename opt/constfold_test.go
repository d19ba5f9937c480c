package opt_test

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/xb"
)

// Folding runs in instruction order, so a chain of constant arithmetic
// becomes one constant in one run; the value is the evaluator's.
func TestConstantFoldingChain(t *testing.T) {
	checkPass(t, opt.ConstantFolding, hloModule(`
ENTRY e {
  p = s32[2] parameter(0)
  a = s32[2] constant({1, 2})
  b = s32[2] constant({10, 20})
  s = s32[2] add(a, b)
  m = s32[2] multiply(s, b)
  ROOT r = s32[2] add(p, m)
}`), hloModule(`
ENTRY e {
  p = s32[2] parameter(0)
  m = s32[2] constant({110, 440})
  ROOT r = s32[2] add(p, m)
}`))
}

// Must not fire: a broadcast of a constant (folding would only
// materialize it), an iota, rng (side effect), and a parameter operand.
func TestConstantFoldingLeavesBroadcastIotaRng(t *testing.T) {
	checkPass(t, opt.ConstantFolding, hloModule(`
ENTRY e {
  p = f32[8] parameter(0)
  c = f32[] constant(1)
  b = f32[8] broadcast(c), dimensions={}
  i = f32[8] iota(), iota_dimension=0
  r = f32[8] rng(c, c), distribution=rng_uniform
  s = f32[8] add(p, b)
  ROOT t = (f32[8], f32[8], f32[8]) tuple(s, i, r)
}`), "")
}

// A broadcast scalar next to a constant of the result's size folds (a
// batch norm's 1/√(var+ε)); broadcasts alone, or with a constant smaller
// than the result, stay.
func TestConstantFoldingThroughBroadcast(t *testing.T) {
	checkPass(t, opt.ConstantFolding, hloModule(`
ENTRY e {
  p = f32[2] parameter(0)
  v = f32[2] constant({3, 8})
  e = f32[] constant(1)
  b = f32[2] broadcast(e), dimensions={}
  a = f32[2] add(v, b)
  s = f32[2] sqrt(a)
  d = f32[2] divide(b, s)
  c = f32[] constant(2)
  w = f32[4,2] broadcast(v), dimensions={1}
  x = f32[4,2] broadcast(c), dimensions={}
  y = f32[4,2] multiply(w, x)
  q = f32[] constant(5)
  z = f32[4,2] multiply(x, y)
  ROOT r = (f32[2], f32[4,2]) tuple(multiply(p, d), z)
}`), hloModule(`
ENTRY e {
  p = f32[2] parameter(0)
  d = f32[2] constant({0.5, 0.333333343})
  v = f32[2] constant({3, 8})
  c = f32[] constant(2)
  w = f32[4,2] broadcast(v), dimensions={1}
  x = f32[4,2] broadcast(c), dimensions={}
  y = f32[4,2] multiply(w, x)
  z = f32[4,2] multiply(x, y)
  ROOT r = (f32[2], f32[4,2]) tuple(multiply(p, d), z)
}`))
}

// Operands smaller than the result (no broadcast among them) still fold.
func TestConstantFoldingConcatenate(t *testing.T) {
	checkPass(t, opt.ConstantFolding, hloModule(`
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[2] constant({1, 2})
  b = f32[2] constant({3, 4})
  c = f32[4] concatenate(a, b), dimensions={0}
  ROOT r = f32[4] add(p, c)
}`), hloModule(`
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  ROOT r = f32[4] add(p, c)
}`))
}

// A convert widening a constant folds past FoldLimitBytes (an fp16
// model's weights, computed in f32 by its convolutions: 1.28 MB of f16
// here, 2.56 MB as f32), to the evaluator's values; a constant the
// convert would more than double (s8 to f32) and an add of the same
// size stay over the limit.
func TestConstantFoldingWidensLargeConstant(t *testing.T) {
	const n = 800
	build := func(from hlo.DType, op hlo.Opcode) (*hlo.Module, *hlo.Literal) {
		lit := hlo.NewLiteral(hlo.ArrayShape(from, n, n))
		for i := range lit.Len() {
			lit.SetFloat64(i, float64(i%97)-48.5)
		}
		b := xb.New("widen")
		c := b.Constant(lit)
		var r *xb.Op
		if op == hlo.OpConvert {
			r = xb.Convert(c, hlo.F32)
		} else {
			r = xb.Add(c, c)
		}
		m, err := b.Build(xb.Add(r, b.Parameter("p", r.Shape())))
		if err != nil {
			t.Fatal(err)
		}
		return m, lit
	}
	m, lit := build(hlo.F16, hlo.OpConvert)
	if changed, err := opt.ConstantFolding.Run(m); err != nil || !changed {
		t.Fatalf("the f16 → f32 convert did not fold (%v)", err)
	}
	root := m.Entry.Root
	folded := root.Operands[0]
	if folded.Opcode != hlo.OpConstant || folded.Shape.DType != hlo.F32 {
		t.Fatalf("the add reads %s, not an f32 constant", folded)
	}
	want, _ := lit.Convert(hlo.F32)
	for _, i := range []int{0, 1, 4096, n*n - 1} {
		if folded.Literal.GetFloat64(i) != want.GetFloat64(i) {
			t.Fatalf("element %d: %v, want %v", i, folded.Literal.GetFloat64(i), want.GetFloat64(i))
		}
	}
	for _, c := range []struct {
		from hlo.DType
		op   hlo.Opcode
	}{{hlo.S8, hlo.OpConvert}, {hlo.F32, hlo.OpAdd}} {
		m, _ := build(c.from, c.op)
		if changed, _ := opt.ConstantFolding.Run(m); changed {
			t.Errorf("%s of a %s constant past the limit folded", c.op, c.from)
		}
	}
}

// A reverse or transpose of a constant folds past FoldLimitBytes too (a
// ConvTranspose's flipped weights: 2.56 MB here), each element where the
// evaluator puts it; a broadcast that would grow it stays.
func TestConstantFoldingMovesLargeConstant(t *testing.T) {
	const n = 800
	lit := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, n, n))
	for i := range lit.Len() {
		lit.SetFloat64(i, float64(i))
	}
	for _, c := range []struct {
		name string
		op   func(*xb.Op) *xb.Op
		at   func(i, j int) int // the source element of result (i, j)
	}{
		{"reverse", func(x *xb.Op) *xb.Op { return xb.Reverse(x, 1) }, func(i, j int) int { return i*n + n - 1 - j }},
		{"transpose", func(x *xb.Op) *xb.Op { return xb.Transpose(x, 1, 0) }, func(i, j int) int { return j*n + i }},
	} {
		b := xb.New(c.name)
		r := c.op(b.Constant(lit))
		m, err := b.Build(xb.Add(r, b.Parameter("p", r.Shape())))
		if err != nil {
			t.Fatal(err)
		}
		if changed, err := opt.ConstantFolding.Run(m); err != nil || !changed {
			t.Fatalf("%s did not fold (%v)", c.name, err)
		}
		folded := m.Entry.Root.Operands[0]
		if folded.Opcode != hlo.OpConstant {
			t.Fatalf("%s: the add reads %s, not a constant", c.name, folded)
		}
		for _, ij := range [][2]int{{0, 0}, {0, 1}, {3, 7}, {n - 1, n - 2}} {
			if got, want := folded.Literal.GetFloat64(ij[0]*n+ij[1]), float64(c.at(ij[0], ij[1])); got != want {
				t.Fatalf("%s: element %v = %v, want %v", c.name, ij, got, want)
			}
		}
	}
	b := xb.New("grow")
	r := xb.BroadcastInDim(b.Constant(lit), []int64{2, n, n}, 1, 2)
	m, err := b.Build(xb.Add(r, b.Parameter("p", r.Shape())))
	if err != nil {
		t.Fatal(err)
	}
	if changed, _ := opt.ConstantFolding.Run(m); changed {
		t.Errorf("a broadcast doubling a constant past the limit folded")
	}
}
