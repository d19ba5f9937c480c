package tile

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// gruGates is one step of a GRU layer's gate fusion (torch_gru_seq's):
// the step's input projection and the hidden state's projection, each
// read as three displaced slices, a bias broadcast along the row, and the
// previous hidden state.
const gruGates = `HloModule gru_gates
fused {
  one = f32[] constant(1)
  ones = f32[1,96] broadcast(one), dimensions={}
  bias = f32[96] parameter(0)
  bb = f32[1,96] broadcast(bias), dimensions={1}
  xs = f32[100,1,288] parameter(1)
  xt = f32[1,1,288] slice(xs), slice={[35:36], [0:1], [0:288]}
  x = f32[1,288] reshape(xt)
  xz = f32[1,96] slice(x), slice={[0:1], [0:96]}
  h = f32[1,288] parameter(2)
  hz = f32[1,96] slice(h), slice={[0:1], [0:96]}
  az = f32[1,96] add(xz, hz)
  z = f32[1,96] logistic(az)
  xr = f32[1,96] slice(x), slice={[0:1], [96:192]}
  hr = f32[1,96] slice(h), slice={[0:1], [96:192]}
  ar = f32[1,96] add(xr, hr)
  r = f32[1,96] logistic(ar)
  hn = f32[1,96] slice(h), slice={[0:1], [192:288]}
  hb = f32[1,96] add(hn, bb)
  xn = f32[1,96] slice(x), slice={[0:1], [192:288]}
  rh = f32[1,96] multiply(r, hb)
  an = f32[1,96] add(xn, rh)
  n = f32[1,96] tanh(an)
  zc = f32[1,96] subtract(ones, z)
  zn = f32[1,96] multiply(zc, n)
  prev = f32[1,96] parameter(3)
  zh = f32[1,96] multiply(z, prev)
  ROOT out = f32[1,96] add(zn, zh)
}
ENTRY e {
  b = f32[96] parameter(0)
  xs = f32[100,1,288] parameter(1)
  h = f32[1,288] parameter(2)
  prev = f32[1,96] parameter(3)
  ROOT f = f32[1,96] fusion(b, xs, h, prev), kind=kLoop, calls=fused
}`

// smallFusions are fusions of a few hundred elements or fewer, with
// whether Run calls their code directly (tile_direct.go): the GRU step,
// a length with a partial last vector and a scalar operand, slices at
// odd offsets of a row, and ones that take the general path (a bf16
// operand, a gathered transpose, fewer elements than a vector).
var smallFusions = []struct {
	name, text string
	// direct: run flat with one call (jitProg.direct); rows: by rows
	// (jitProg.rowsFor), directly unless taken the general way.
	direct, rows bool
}{
	{"gru", gruGates, true, false},
	{"lstm", lstmCell, false, true},
	{"tail-and-scalar", `HloModule tail
fused {
  x = f32[101] parameter(0)
  c = f32[] parameter(1)
  cb = f32[101] broadcast(c), dimensions={}
  y = f32[101] multiply(x, cb)
  t = f32[101] tanh(y)
  ROOT r = f32[101] add(t, x)
}
ENTRY e {
  a = f32[101] parameter(0)
  c = f32[] parameter(1)
  ROOT f = f32[101] fusion(a, c), kind=kLoop, calls=fused
}`, true, false},
	{"odd-slices", `HloModule odd
fused {
  x = f32[3,77] parameter(0)
  a = f32[1,37] slice(x), slice={[1:2], [3:40]}
  b = f32[1,37] slice(x), slice={[2:3], [40:77]}
  y = f32[1,37] parameter(1)
  l = f32[1,37] logistic(a)
  m = f32[1,37] multiply(l, b)
  ROOT r = f32[1,37] subtract(m, y)
}
ENTRY e {
  x = f32[3,77] parameter(0)
  y = f32[1,37] parameter(1)
  ROOT f = f32[1,37] fusion(x, y), kind=kLoop, calls=fused
}`, true, false},
	{"bf16-operand", `HloModule bf16
fused {
  x = bf16[40] parameter(0)
  y = f32[40] parameter(1)
  c = f32[40] convert(x)
  ROOT r = f32[40] add(c, y)
}
ENTRY e {
  x = bf16[40] parameter(0)
  y = f32[40] parameter(1)
  ROOT f = f32[40] fusion(x, y), kind=kLoop, calls=fused
}`, false, false},
	{"transpose", `HloModule transpose
fused {
  x = f32[6,9] parameter(0)
  t = f32[9,6] transpose(x), dimensions={1,0}
  y = f32[9,6] parameter(1)
  ROOT r = f32[9,6] multiply(t, y)
}
ENTRY e {
  x = f32[6,9] parameter(0)
  y = f32[9,6] parameter(1)
  ROOT f = f32[9,6] fusion(x, y), kind=kLoop, calls=fused
}`, false, false},
	{"below-a-vector", `HloModule tiny
fused {
  x = f32[5] parameter(0)
  y = f32[5] parameter(1)
  e = f32[5] exponential(x)
  ROOT r = f32[5] add(e, y)
}
ENTRY e {
  x = f32[5] parameter(0)
  y = f32[5] parameter(1)
  ROOT f = f32[5] fusion(x, y), kind=kLoop, calls=fused
}`, false, false},
}

// tileOnly compiles fusion root as a tile program without generated
// code: the definition the code's bits must match.
func tileOnly(t testing.TB, root *hlo.Instruction) *Prog {
	t.Helper()
	useJIT = false
	defer func() { useJIT = jit.Available }()
	p, err := compileFusion(root)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// compileFusion compiles a loop fusion as the lowering does: Multi for
// a tuple, else Loop.
func compileFusion(root *hlo.Instruction) (*Prog, error) {
	if root.Shape.IsTuple() {
		return Multi(root)
	}
	return Loop(root)
}

// runFusionInto runs p into new outputs of root's shape.
func runFusionInto(t *testing.T, p *Prog, root *hlo.Instruction, args []*hlo.Literal, threads int) []*hlo.Literal {
	t.Helper()
	if !root.Shape.IsTuple() {
		out := hlo.NewLiteral(root.Shape)
		if err := p.Run(args, out, threads); err != nil {
			t.Fatal(err)
		}
		return []*hlo.Literal{out}
	}
	var outs []*hlo.Literal
	for _, s := range root.Shape.Tuple {
		outs = append(outs, hlo.NewLiteral(s))
	}
	if err := p.RunMulti(args, outs, threads); err != nil {
		t.Fatal(err)
	}
	return outs
}

// sameLiterals checks outputs bit for bit.
func sameLiterals(t *testing.T, what string, got, want []*hlo.Literal) {
	t.Helper()
	for k := range want {
		if !got[k].Equal(want[k]) {
			t.Errorf("%s: output %d %v, want %v", what, k, got[k], want[k])
		}
	}
}

// TestSmallFusionsRunDirect runs each small fusion as the lowering does
// (Loop or Multi, then Run or RunMulti on one and two threads) and
// checks its bits against the tile program's and against its own code
// run the general way (chunks of Arrays), and that the direct flat call
// is taken where it should be. The evaluator checks the tile program.
func TestSmallFusionsRunDirect(t *testing.T) {
	for _, c := range smallFusions {
		m, err := hlotext.Parse(c.text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		root := m.Entry.Root
		args := eval.RandomArguments(m, 11)
		p, err := compileFusion(root)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.jit != nil && p.jit.direct && p.RunsJIT(); got != (c.direct && jit.Available) {
			t.Errorf("%s: runs directly %v, want %v", c.name, got, c.direct)
		}
		want := runFusionInto(t, tileOnly(t, root), root, args, 1)
		ref, err := eval.Run(m, args...)
		if err != nil {
			t.Fatal(err)
		}
		refs := []*hlo.Literal{ref}
		if root.Shape.IsTuple() {
			refs = ref.Elements()
		}
		for k := range refs {
			if !closeF32(want[k].Data().([]float32), refs[k].Data().([]float32), 1e-5) {
				t.Fatalf("%s: tile program %v, the evaluator %v", c.name, want[k], refs[k])
			}
		}
		rows := rowRuns.Load()
		for _, threads := range []int{1, 2} {
			sameLiterals(t, fmt.Sprintf("%s on %d threads", c.name, threads), runFusionInto(t, p, root, args, threads), want)
		}
		if c.rows && jit.Available && (rowRuns.Load() == rows || !p.jit.allF32) {
			t.Errorf("%s: not by rows from f32 slices", c.name)
		}
		if p.jit != nil {
			p.jit.direct, p.jit.allF32 = false, false // the general path, same code
			rows := rowRuns.Load()
			sameLiterals(t, c.name+" the general way", runFusionInto(t, p, root, args, 1), want)
			if c.rows && rowRuns.Load() == rows {
				t.Errorf("%s: not by rows the general way", c.name)
			}
		}
	}
}

// closeF32 reports whether got and want agree within a relative
// tolerance (the evaluator computes transcendental functions in float64).
func closeF32(got, want []float32, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		d, w := float64(got[i]-want[i]), float64(want[i])
		if d < 0 {
			d = -d
		}
		if w < 0 {
			w = -w
		}
		if d > tol*max(1, w) {
			return false
		}
	}
	return true
}

// BenchmarkSmallFusion times one call of a GRU step's gate fusion (96
// elements): the fixed cost of running a compiled fusion.
func BenchmarkSmallFusion(b *testing.B) {
	m, err := hlotext.Parse(gruGates, hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := Loop(m.Entry.Root)
	if err != nil {
		b.Fatal(err)
	}
	args := eval.RandomArguments(m, 3)
	out := hlo.NewLiteral(m.Entry.Root.Shape)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Run(args, out, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// lstmCell is one step of an LSTM layer (torch_bilstm_tagger's, both
// directions): its four gates are quarters of each row of the step's
// projections, and it returns the cell and the hidden state.
const lstmCell = `HloModule lstm_cell
fused {
  x = f32[2,2,512] parameter(0)
  i = f32[2,2,128] slice(x), slice={[0:2], [0:2], [0:128]}
  si = f32[2,2,128] logistic(i)
  f = f32[2,2,128] slice(x), slice={[0:2], [0:2], [256:384]}
  sf = f32[2,2,128] logistic(f)
  g = f32[2,2,128] slice(x), slice={[0:2], [0:2], [384:512]}
  tg = f32[2,2,128] tanh(g)
  c = f32[2,2,128] parameter(1)
  fc = f32[2,2,128] multiply(sf, c)
  ig = f32[2,2,128] multiply(si, tg)
  c2 = f32[2,2,128] add(fc, ig)
  o = f32[2,2,128] slice(x), slice={[0:2], [0:2], [128:256]}
  so = f32[2,2,128] logistic(o)
  tc = f32[2,2,128] tanh(c2)
  h = f32[2,2,128] multiply(so, tc)
  ROOT t = (f32[2,2,128], f32[2,2,128]) tuple(c2, h)
}
ENTRY e {
  x = f32[2,2,512] parameter(0)
  c = f32[2,2,128] parameter(1)
  ROOT f = (f32[2,2,128], f32[2,2,128]) fusion(x, c), kind=kLoop, calls=fused
}`

// BenchmarkSmallMulti times one call of an LSTM step's cell fusion (512
// elements, two outputs, its gates read by rows).
func BenchmarkSmallMulti(b *testing.B) {
	m, err := hlotext.Parse(lstmCell, hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	root := m.Entry.Root
	p, err := Multi(root)
	if err != nil {
		b.Fatal(err)
	}
	args := eval.RandomArguments(m, 3)
	outs := []*hlo.Literal{hlo.NewLiteral(root.Shape.Tuple[0]), hlo.NewLiteral(root.Shape.Tuple[1])}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.RunMulti(args, outs, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// lstmProjection is an LSTM step's recurrent projection finished by an
// epilogue (torch_bilstm_tagger's): the product plus the step's slice of
// the input projections of all steps, read in place at its displacement.
const lstmProjection = `HloModule lstm_projection
fused {
  xs = f32[32,2,2,512] parameter(2)
  s = f32[1,2,2,512] slice(xs), slice={[2:3], [0:2], [0:2], [0:512]}
  x = f32[2,2,512] reshape(s)
  h = f32[2,2,128] parameter(0)
  w = f32[2,128,512] parameter(1)
  d = f32[2,2,512] dot(h, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT r = f32[2,2,512] add(x, d)
}
ENTRY e {
  h = f32[2,2,128] parameter(0)
  w = f32[2,128,512] parameter(1)
  xs = f32[32,2,2,512] parameter(2)
  ROOT f = f32[2,2,512] fusion(h, w, xs), kind=kOutput, calls=fused
}`

// BenchmarkSmallEpilogue times binding an LSTM step's projection
// epilogue to a call's operands and running it over each product of the
// batch (2 × 2 rows of 512): what the GEMM kernel's epilogue costs a
// call besides the product.
func BenchmarkSmallEpilogue(b *testing.B) {
	m, err := hlotext.Parse(lstmProjection, hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	root := m.Entry.Root
	fc := root.Computation("calls")
	var d *hlo.Instruction
	for _, x := range fc.Instructions {
		if x.Opcode == hlo.OpDot {
			d = x
		}
	}
	e, err := NewEpilogue(root, fc, d)
	if err != nil {
		b.Fatal(err)
	}
	args := eval.RandomArguments(m, 3)
	c := make([]float32, 2*2*512)
	b.ReportAllocs()
	for b.Loop() {
		epi, err := e.Bind(args, c, 512)
		if err != nil {
			b.Fatal(err)
		}
		epi(0, 0, 2, 512)
		epi(2, 0, 2, 512)
	}
}

// epilogueOf compiles the epilogue of output fusion root (its product
// is its dot).
func epilogueOf(t testing.TB, root *hlo.Instruction) *Epilogue {
	t.Helper()
	fc := root.Computation("calls")
	for _, x := range fc.Instructions {
		if x.Opcode == hlo.OpDot {
			e, err := NewEpilogue(root, fc, x)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
	}
	t.Fatal("no dot")
	return nil
}

// TestSmallEpiloguesBindDirect finishes C block by block, as product
// kernels do (whole rows, and blocks of part rows at every column
// offset), with an epilogue bound directly (its closure holding the f32
// operands) and checks the bits against the tile program's epilogue:
// the LSTM projection's, one with a scalar operand over rows of 37 with
// a staged tail, and one with a bias along the rows, not direct (whole
// rows by the block code, the bias read in place).
func TestSmallEpiloguesBindDirect(t *testing.T) {
	scaled := `HloModule scaled
fused {
  a = f32[6,20] parameter(0)
  b = f32[20,37] parameter(1)
  d = f32[6,37] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k = f32[] parameter(2)
  kb = f32[6,37] broadcast(k), dimensions={}
  y = f32[6,37] parameter(3)
  m = f32[6,37] multiply(d, kb)
  l = f32[6,37] logistic(m)
  ROOT r = f32[6,37] add(l, y)
}
ENTRY e {
  a = f32[6,20] parameter(0)
  b = f32[20,37] parameter(1)
  k = f32[] parameter(2)
  y = f32[6,37] parameter(3)
  ROOT f = f32[6,37] fusion(a, b, k, y), kind=kOutput, calls=fused
}`
	bias := `HloModule bias
fused {
  b = f32[24] parameter(2)
  bb = f32[50,24] broadcast(b), dimensions={1}
  x = f32[50,10] parameter(0)
  w = f32[10,24] parameter(1)
  d = f32[50,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[50,24] add(bb, d)
  ROOT l = f32[50,24] logistic(a)
}
ENTRY e {
  x = f32[50,10] parameter(0)
  w = f32[10,24] parameter(1)
  b = f32[24] parameter(2)
  ROOT f = f32[50,24] fusion(x, w, b), kind=kOutput, calls=fused
}`
	for _, text := range []string{lstmProjection, scaled, bias} {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		root := m.Entry.Root
		dims := root.Shape.Dims
		ldc := int(dims[len(dims)-1])
		rows := int(root.Shape.NumElements()) / ldc
		args := eval.RandomArguments(m, 5)
		c0 := eval.RandomArguments(m, 6)[len(args)-1].Data().([]float32) // any values as the product
		c0 = c0[:min(len(c0), rows*ldc)]
		if len(c0) < rows*ldc {
			c0 = append(c0, make([]float32, rows*ldc-len(c0))...)
		}
		e := epilogueOf(t, root)
		useJIT = false
		ref := epilogueOf(t, root)
		useJIT = jit.Available
		// The bias is gathered: not direct, whole rows by the block code.
		if direct := text != bias; jit.Available && (e.prog.jit == nil || e.prog.jit.direct != direct) {
			t.Fatalf("%s: the epilogue's code is not direct %v", root.Name, direct)
		}
		blocks := stridedBlocks.Load()
		for _, cols := range []int{ldc, 1, 5, 16, ldc - 3} {
			got, want := slices.Clone(c0), slices.Clone(c0)
			epi, err := e.Bind(args, got, ldc)
			if err != nil {
				t.Fatal(err)
			}
			refEpi, err := ref.Bind(args, want, ldc)
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j < ldc; j += cols {
				w := min(cols, ldc-j)
				for i := 0; i < rows; i += 2 {
					epi(i, j, min(2, rows-i), w)
					refEpi(i, j, min(2, rows-i), w)
				}
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("blocks %d wide: element %d: %v, the tile program %v", cols, i, got[i], want[i])
				}
			}
		}
		if text == bias && jit.Available && stridedBlocks.Load() == blocks {
			t.Errorf("the bias epilogue ran no block code")
		}
	}
}
