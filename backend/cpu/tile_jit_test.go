package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// Loop fusions with generated code agree with the evaluator, give the
// tile program's bits exactly, and the same bits on any thread count.
// Fusions the generator does not take keep their tile program.
func TestJITFusions(t *testing.T) {
	if !jit.Available {
		t.Skip("no code generation on this platform")
	}
	cases := map[string]struct {
		text string
		jit  int // fusions expected to run generated code
	}{
		// chain10's ten ops, on a length with a vector tail.
		"chain": {`HloModule chain
ENTRY main {
  x = f32[37,111] parameter(0)
  c = f32[] constant(0.5)
  cb = f32[37,111] broadcast(c), dimensions={}
  a1 = f32[37,111] multiply(x, cb)
  a2 = f32[37,111] add(a1, x)
  a3 = f32[37,111] tanh(a2)
  a4 = f32[37,111] multiply(a3, a3)
  a5 = f32[37,111] subtract(a4, cb)
  a6 = f32[37,111] exponential(a5)
  a7 = f32[37,111] multiply(a6, a3)
  a8 = f32[37,111] abs(a7)
  a9 = f32[37,111] sqrt(a8)
  ROOT a10 = f32[37,111] subtract(a9, a1)
}`, 1},
		// A ReLU gradient: compare, select, a scalar parameter splatted.
		"relu grad": {`HloModule relugrad
ENTRY main {
  x = f32[1000] parameter(0)
  g = f32[1000] parameter(1)
  s = f32[] parameter(2)
  zero = f32[] constant(0)
  zb = f32[1000] broadcast(zero), dimensions={}
  p = pred[1000] compare(x, zb), direction=GT
  sb = f32[1000] broadcast(s), dimensions={}
  gs = f32[1000] multiply(g, sb)
  ROOT r = f32[1000] select(p, gs, zb)
}`, 1},
		// Clamp, logistic, maximum and minimum, negate and divide.
		"mix": {`HloModule mix
ENTRY main {
  x = f32[3,5,7] parameter(0)
  y = f32[3,5,7] parameter(1)
  lo = f32[] constant(-2)
  hi = f32[] constant(2)
  l = f32[3,5,7] broadcast(lo), dimensions={}
  h = f32[3,5,7] broadcast(hi), dimensions={}
  c = f32[3,5,7] clamp(l, x, h)
  s = f32[3,5,7] logistic(c)
  m = f32[3,5,7] maximum(s, y)
  n = f32[3,5,7] minimum(m, x)
  d = f32[3,5,7] divide(n, y)
  ROOT r = f32[3,5,7] negate(d)
}`, 1},
		// Operands read through index maps (a transpose, a bias row
		// broadcast over a batch, a column broadcast, a slice, a reverse)
		// are gathered chunk by chunk into buffers the code reads.
		"gathers": {gathersModule(30, 40), 1},
		// bf16 values round after every op: the tile program keeps them.
		"bf16": {`HloModule narrow
ENTRY main {
  x = bf16[300] parameter(0)
  e = bf16[300] exponential(x)
  ROOT r = bf16[300] multiply(e, x)
}`, 0},
	}
	// Big enough to split across workers, at ranges that are not whole
	// vectors apart.
	big := cases["chain"]
	big.text = strings.ReplaceAll(big.text, "37,111", "301,1001")
	cases["chain, split across workers"] = big
	cases["gathers, split across workers"] = struct {
		text string
		jit  int
	}{gathersModule(300, 401), 1}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m, ref := compileWithoutJIT(t, c.text)
			args := eval.RandomArguments(m, 11)
			tile, err := ref.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			for threads := 1; threads <= 3; threads++ {
				m, x := compileText(t, c.text, Options{Threads: threads, Poison: true})
				if x.Lowering["jit-fusion"] != c.jit {
					t.Fatalf("lowering %v, want %d jit fusions", x.Lowering, c.jit)
				}
				got, want := evalAndRun(t, m, x, args)
				if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-5, Atol: 1e-6}); err != nil {
					t.Fatalf("threads=%d against the evaluator: %v", threads, err)
				}
				if !got.Equal(tile) {
					t.Fatalf("threads=%d: other bits than the tile program", threads)
				}
			}
		})
	}
}

// compileWithoutJIT compiles text with tile programs only.
func compileWithoutJIT(t *testing.T, text string) (*hlo.Module, *Executable) {
	t.Helper()
	useJIT = false
	defer func() { useJIT = jit.Available }()
	m, x := compileText(t, text, Options{Threads: 1})
	if x.Lowering["jit-fusion"] != 0 {
		t.Fatalf("lowering %v with generated code off", x.Lowering)
	}
	return m, x
}

// gathersModule reads operands of an r×c fusion through index maps (a
// transpose, a bias row broadcast over a batch, a column broadcast, a
// slice, a reverse): they are gathered chunk by chunk into buffers the
// generated code reads.
func gathersModule(r, c int) string {
	return fmt.Sprintf(`HloModule gathers
ENTRY main {
  x = f32[%[1]d,%[2]d] parameter(0)
  y = f32[%[2]d,%[1]d] parameter(1)
  b = f32[%[2]d] parameter(2)
  c = f32[%[1]d] parameter(3)
  z = f32[%[3]d,%[4]d] parameter(4)
  yt = f32[%[1]d,%[2]d] transpose(y), dimensions={1,0}
  bb = f32[%[1]d,%[2]d] broadcast(b), dimensions={1}
  cb = f32[%[1]d,%[2]d] broadcast(c), dimensions={0}
  zs = f32[%[1]d,%[2]d] slice(z), slice={[1:%[5]d], [2:%[6]d]}
  zr = f32[%[1]d,%[2]d] reverse(zs), dimensions={1}
  e = f32[%[1]d,%[2]d] exponential(x)
  s1 = f32[%[1]d,%[2]d] add(e, yt)
  s2 = f32[%[1]d,%[2]d] multiply(s1, bb)
  s3 = f32[%[1]d,%[2]d] subtract(s2, cb)
  ROOT r = f32[%[1]d,%[2]d] maximum(s3, zr)
}`, r, c, r+2, c+4, r+1, c+2)
}

// loopFusions counts the single-output loop fusions of a lowering, run
// as tile programs or as generated code.
func loopFusions(lowering map[string]int) int {
	return lowering["tile-fusion"] + lowering["jit-fusion"]
}
