package opt_test

import (
	"slices"

	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

// sinkModule is a channels-last conv net's shape of HLO: each block's
// result transposed NHWC -> NCHW, then per-channel scale and shift
// (broadcast vectors), hard-swish (a diamond: x * clamp(x+3)/6), a
// squeeze-excitation scale (global average pool -> broadcast back), a
// residual add, pad, concatenation, max pool, slice, and the transpose
// back to NHWC at the end.
const sinkModule = `HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[2,5,6,3] parameter(0)
  y = f32[2,5,6,3] parameter(1)
  sc = f32[3] parameter(2)
  sh = f32[3] parameter(3)
  tx = f32[2,3,5,6] transpose(x), dimensions={0,3,1,2}
  ty = f32[2,3,5,6] transpose(y), dimensions={0,3,1,2}
  bsc = f32[2,3,5,6] broadcast(sc), dimensions={1}
  bsh = f32[2,3,5,6] broadcast(sh), dimensions={1}
  m = f32[2,3,5,6] multiply(tx, bsc)
  a = f32[2,3,5,6] add(m, bsh)
  three = f32[] constant(3)
  b3 = f32[2,3,5,6] broadcast(three), dimensions={}
  zero = f32[] constant(0)
  six = f32[] constant(6)
  a3 = f32[2,3,5,6] add(a, b3)
  cl = f32[2,3,5,6] clamp(zero, a3, six)
  hs = f32[2,3,5,6] multiply(a, cl)
  r = f32[2,3] reduce(hs, zero), dimensions={2,3}, to_apply=add_f32
  br = f32[2,3,5,6] broadcast(r), dimensions={0,1}
  se = f32[2,3,5,6] multiply(hs, br)
  res = f32[2,3,5,6] add(se, ty)
  p = f32[2,3,7,8] pad(res, zero), padding=0_0x0_0x1_1x1_1
  c = f32[2,6,7,8] concatenate(p, p), dimensions={1}
  ninf = f32[] constant(-inf)
  mp = f32[2,6,3,3] reduce-window(c, ninf), window={size=1x1x3x3 stride=1x1x2x2}, to_apply=max_f32
  s = f32[2,4,3,3] slice(mp), slice={[0:2], [1:5], [0:3], [0:3]}
  out = f32[2,3,3,4] transpose(s), dimensions={0,2,3,1}
  ROOT t = (f32[2,3,3,4], f32[2,3]) tuple(out, r)
}`

func countOp(m *hlo.Module, op hlo.Opcode) int {
	n := 0
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == op {
				n++
			}
		}
	}
	return n
}

// The whole region runs channels-last: no transpose is left, and the
// module computes what it did (the evaluator on the original).
func TestReshapeMoverSinksTransposesThroughRegion(t *testing.T) {
	orig, err := hlotext.Parse(sinkModule, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := hlotext.Parse(sinkModule, hlotext.Options{File: t.Name()})
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{opt.ReshapeMover}}
	if _, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	if n := countOp(m, hlo.OpTranspose); n != 0 {
		t.Errorf("%d transposes left, want 0", n)
	}
	args := eval.RandomArguments(orig, 7)
	want, err := eval.Run(orig, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-5, Rtol: 1e-5}); err != nil {
		t.Error(err)
	}
	// A second run finds nothing to do.
	if changed, err := pl.RunWith(m, pass.Options{Verify: true}); err != nil || changed {
		t.Errorf("second run: changed %v, err %v", changed, err)
	}
}

// Reducing dimensions that leave the kept ones out of order transposes
// the (smaller) result; a region whose exits would transpose more than
// its transposes did stays as it is.
func TestReshapeMoverTransposeCosts(t *testing.T) {
	checkPass(t, opt.ReshapeMover, hloModule(`
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,3,4] parameter(0)
  tx = f32[4,3,2] transpose(x), dimensions={2,1,0}
  zero = f32[] constant(0)
  ROOT r = f32[4,2] reduce(tx, zero), dimensions={1}, to_apply=add_f32
}`), hloModule(`
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,3,4] parameter(0)
  zero = f32[] constant(0)
  r = f32[2,4] reduce(x, zero), dimensions={1}, to_apply=add_f32
  ROOT t = f32[4,2] transpose(r), dimensions={1,0}
}`))
	checkPass(t, opt.ReshapeMover, hloModule(`
ENTRY e {
  x = f32[2,3] parameter(0)
  tx = f32[3,2] transpose(x), dimensions={1,0}
  a = f32[3,2] exponential(tx)
  b = f32[3,2] log(tx)
  ROOT t = (f32[3,2], f32[3,2]) tuple(a, b)
}`), "")
}

// Nearest-neighbour upsampling lowered as broadcast + reshape (a new
// dimension next to each spatial one, then merged into it) keeps the
// channels-last frame, and so does a flattening reshape whose merged
// dimensions stay in order; none of the transposes is left.
func TestReshapeMoverSinksTransposesThroughUpsample(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[1,3,3,4] parameter(0)
  y = f32[1,6,6,4] parameter(1)
  tx = f32[1,4,3,3] transpose(x), dimensions={0,3,1,2}
  b1 = f32[1,4,3,2,3] broadcast(tx), dimensions={0,1,2,4}
  r1 = f32[1,4,6,3] reshape(b1)
  b2 = f32[1,4,6,3,2] broadcast(r1), dimensions={0,1,2,3}
  r2 = f32[1,4,6,6] reshape(b2)
  ty = f32[1,4,6,6] transpose(y), dimensions={0,3,1,2}
  s = f32[1,4,6,6] add(r2, ty)
  out = f32[1,6,6,4] transpose(s), dimensions={0,2,3,1}
  one = f32[1,4,1,1] slice(ty), slice={[0:1], [0:4], [0:1], [0:1]}
  flat = f32[1,4] reshape(one)
  ROOT t = (f32[1,6,6,4], f32[1,4]) tuple(out, flat)
}`
	orig, err := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{opt.ReshapeMover}}
	if _, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	if n := countOp(m, hlo.OpTranspose); n != 0 {
		t.Errorf("%d transposes left, want 0", n)
	}
	args := eval.RandomArguments(orig, 3)
	want, err := eval.Run(orig, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Compare(got, want, conformance.Tolerance{}); err != nil {
		t.Error(err)
	}
}

// A reshape merging the channel dimension with a spatial one does not
// commute with the channels-last transpose: the values must not change.
func TestReshapeMoverKeepsNonCommutingReshape(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  y = f32[1,3,3,4] parameter(0)
  ty = f32[1,4,3,3] transpose(y), dimensions={0,3,1,2}
  e = f32[1,4,3,3] exponential(ty)
  ROOT cm = f32[1,12,3] reshape(e)
}`
	orig, err := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{opt.ReshapeMover}}
	if _, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(orig, 5)
	want, err := eval.Run(orig, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Compare(got, want, conformance.Tolerance{}); err != nil {
		t.Error(err)
	}
}

// ConvTranspose as tiles: a matrix product's result laid out NHW C kh kw,
// interleaved into NCHW by one transpose and a reshape, then batch-norm
// and a flattening reshape into the next matrix product. The transpose is
// rebuilt channels-last (kh, kw interleaved with H and W, C innermost),
// the rest follows in that frame, and the last transpose folds into the
// dot: one transpose stays, moving C innermost.
func TestReshapeMoverReframesTileInterleave(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[1,3,3,4,2,2] parameter(0)
  sc = f32[4] parameter(1)
  w = f32[4,5] parameter(2)
  tx = f32[1,4,3,2,3,2] transpose(x), dimensions={0,3,1,4,2,5}
  r = f32[1,4,6,6] reshape(tx)
  bsc = f32[1,4,6,6] broadcast(sc), dimensions={1}
  m = f32[1,4,6,6] multiply(r, bsc)
  f = f32[1,4,36] reshape(m)
  ROOT d = f32[1,36,5] dot(f, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`
	orig, err := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{opt.ReshapeMover, opt.TransposeFolding, opt.DCE}}
	if _, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	var ts []*hlo.Instruction
	for _, in := range m.Entry.Instructions {
		if in.Opcode == hlo.OpTranspose {
			ts = append(ts, in)
		}
	}
	if len(ts) != 1 || !slices.Equal(ts[0].Dimensions(), []int64{0, 1, 4, 2, 5, 3}) {
		t.Errorf("transposes %v, want one with dimensions={0,1,4,2,5,3}", ts)
	}
	args := eval.RandomArguments(orig, 11)
	want, err := eval.Run(orig, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-5, Rtol: 1e-5}); err != nil {
		t.Error(err)
	}
	// A second run of the mover finds nothing to do.
	if changed, err := (&pass.Pipeline{Label: "again", Passes: []pass.Pass{opt.ReshapeMover}}).RunWith(m, pass.Options{Verify: true}); err != nil || changed {
		t.Errorf("second run: changed %v, err %v", changed, err)
	}
}
