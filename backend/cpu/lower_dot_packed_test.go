package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// A product whose weights are a constant lays them out once and reads
// that copy after: on every call, from many goroutines at once, its
// result is within the evaluator's tolerance and the same every time; on
// the blocked GEMM (two rows or more) its bits are those of the same
// module with the weights passed as an argument (packed per call). The
// small-M kernels (one row; a few rows of transposed weights) sum in
// another order than the paths the argument takes. Plain products and
// products finished by an epilogue; weights [k, n] and transposed [n, k];
// f32, bf16 (on the bf16 GEMM where it runs, its weights packed ahead
// too) and f16 (widened once); K past one block of the GEMM.
func TestDotConstantWeightsPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		m, n, k    int
		transposed bool
		dtype      string
		epilogue   bool
	}{
		{40, 50, 30, false, "f32", false},
		{40, 50, 30, true, "f32", true},
		{13, 70, 300, false, "f32", true},
		{64, 33, 260, true, "f32", false},
		{24, 40, 20, false, "bf16", true},
		{1, 1000, 1024, true, "f32", true}, // a classifier: one row, columns split, B in strips
		{1, 700, 400, true, "f32", false},  // strips, the last 60 wide
		{3, 300, 1000, true, "f32", true},  // three rows over strips
		{2, 70, 30, true, "f32", false},    // a recurrence step
		// weights row-major already, in strips where the kernels read
		// them faster (AVX2): a BiLSTM's and a GRU's steps, four rows
		// over a last strip of 6
		{2, 512, 128, false, "f32", true},
		{1, 288, 96, false, "f32", false},
		{4, 70, 30, false, "f32", true},
		{1, 40, 50, true, "bf16", false},
		{40, 70, 2100, true, "bf16", false}, // K past a slice of the bf16 GEMM (packed ahead where it runs)
		// f16 weights widened once (packedWeights.values), then packed or
		// turned row-major from that copy
		{40, 50, 30, false, "f16", true},
		{64, 33, 260, true, "f16", false},
		{1, 700, 400, true, "f16", true},
		{3, 300, 1000, true, "f16", false},
	} {
		name := fmt.Sprintf("%dx%dx%d transposed=%v %s epilogue=%v", c.m, c.n, c.k, c.transposed, c.dtype, c.epilogue)
		t.Run(name, func(t *testing.T) {
			wdims := [2]int{c.k, c.n}
			if c.transposed {
				wdims = [2]int{c.n, c.k}
			}
			lit := "{" + randomRows(rng, wdims[0], wdims[1]) + "}"
			constant := fmt.Sprintf("%s[%d,%d] constant(%s)", c.dtype, wdims[0], wdims[1], lit)
			param := fmt.Sprintf("%s[%d,%d] parameter(1)", c.dtype, wdims[0], wdims[1])
			withConst := dotModule(c.m, c.n, c.k, c.transposed, c.dtype, c.epilogue, constant)
			withParam := dotModule(c.m, c.n, c.k, c.transposed, c.dtype, c.epilogue, param)
			checkPackedDot(t, withConst, withParam, c.m > 8)
		})
	}
}

// A batch of small products with constant weights stored transposed (an
// LSTM's two directions, [dirs, 4h, h]) reads them turned row-major once;
// weights row-major already ([dirs, h, 4h], 40 columns: a strip of 32 and
// one of 8 on AVX2) in the kernels' strips where those are faster.
func TestDotConstantWeightsBatchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	lit := "{" + randomRows(rng, 24, 16) + "}, {" + randomRows(rng, 24, 16) + "}"
	const text = "HloModule r\nENTRY e {\n  h = f32[2,2,16] parameter(0)\n  w = %s\n" +
		"  ROOT d = f32[2,2,24] dot(h, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}\n}\n"
	checkPackedDot(t, fmt.Sprintf(text, "f32[2,24,16] constant({"+lit+"})"), fmt.Sprintf(text, "f32[2,24,16] parameter(1)"), false)
	lit = "{" + randomRows(rng, 16, 40) + "}, {" + randomRows(rng, 16, 40) + "}"
	const rowMajor = "HloModule r\nENTRY e {\n  h = f32[2,2,16] parameter(0)\n  w = %s\n" +
		"  ROOT d = f32[2,2,40] dot(h, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}\n"
	checkPackedDot(t, fmt.Sprintf(rowMajor, "f32[2,16,40] constant({"+lit+"})"), fmt.Sprintf(rowMajor, "f32[2,16,40] parameter(1)"), false)
}

// randomRows is the text of a rows×cols literal's rows of values in
// [-1, 1), three decimals each.
func randomRows(rng *rand.Rand, rows, cols int) string {
	text := make([]string, rows)
	for r := range text {
		vals := make([]string, cols)
		for i := range vals {
			vals[i] = fmt.Sprintf("%.3f", rng.Float64()*2-1)
		}
		text[r] = "{" + strings.Join(vals, ", ") + "}"
	}
	return strings.Join(text, ", ")
}

func dotModule(m, n, k int, transposed bool, dtype string, epilogue bool, weights string) string {
	rc := 0
	if transposed {
		rc = 1
	}
	out := fmt.Sprintf("%s[%d,%d]", dtype, m, n)
	root := fmt.Sprintf("  ROOT d = %s dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={%d}\n", out, rc)
	if epilogue {
		root = fmt.Sprintf("  d = %s dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={%d}\n", out, rc) +
			fmt.Sprintf("  z = %s[] constant(0)\n  zb = %s broadcast(z), dimensions={}\n  ROOT r = %s maximum(d, zb)\n", dtype, out, out)
	}
	return fmt.Sprintf("HloModule p\nENTRY e {\n  a = %s[%d,%d] parameter(0)\n  w = %s\n%s}\n", dtype, m, k, weights, root)
}

func checkPackedDot(t *testing.T, withConst, withParam string, sameBits bool) {
	t.Helper()
	checkPackedWeights(t, withConst, withParam, sameBits, "gemm", "gemm+epilogue", "gemm-bf16")
}

// checkPackedWeights compiles withConst, a module whose second
// instruction is a constant right operand, and withParam, the same with
// that operand a parameter, checks that withConst lowered its product as
// one of lowerings (once), and compares: both within the evaluator's
// tolerance, the constant's results the parameter's bits where sameBits,
// and the same on every call and from several goroutines at once.
func checkPackedWeights(t *testing.T, withConst, withParam string, sameBits bool, lowerings ...string) {
	t.Helper()
	mc, err := hlotext.Parse(withConst, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mp, err := hlotext.Parse(withParam, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	xc, err := Compile(mc, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	xp, err := Compile(mp, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range lowerings {
		n += xc.Lowering[l]
	}
	if n != 1 {
		t.Fatalf("lowered as %v, not one product as %v", xc.Lowering, lowerings)
	}
	w := mc.Entry.Instructions[1].Literal
	args := eval.RandomArguments(mc, 9)
	want, err := eval.Run(mc, args...)
	if err != nil {
		t.Fatal(err)
	}
	perCall, err := xp.Execute(args[0], w)
	if err != nil {
		t.Fatal(err)
	}
	if msg := closeEnough(perCall, want); msg != "" {
		t.Fatal(msg)
	}
	first, err := xc.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	if msg := closeEnough(first, want); msg != "" {
		t.Fatal(msg)
	}
	if sameBits && !first.Equal(perCall) {
		t.Fatalf("packed ahead %v, packed per call %v", first, perCall)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() {
			for range 3 {
				got, err := xc.Execute(args...)
				if err != nil {
					errs <- err
					return
				}
				if !got.Equal(first) {
					errs <- fmt.Errorf("a later call gave %v, the first %v", got, first)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// Products with their weights a constant (laid out once) against the same
// products with the weights an argument (laid out on every call):
// ResNet's classifier, a recurrence step, a transformer's up-projection.
func BenchmarkDotConstantWeights(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name       string
		m, n, k    int
		transposed bool
	}{
		{"classifier_1x1024x1000", 1, 1000, 1024, true},
		{"step_2x128x512", 2, 512, 128, true},
		{"mlp_128x384x1536", 128, 1536, 384, false},
		{"lstm_step_2x128x512", 2, 512, 128, false},
		{"gru_step_1x96x288", 1, 288, 96, false},
	} {
		wdims := [2]int{c.k, c.n}
		if c.transposed {
			wdims = [2]int{c.n, c.k}
		}
		constant := fmt.Sprintf("f32[%d,%d] constant({%s})", wdims[0], wdims[1], randomRows(rng, wdims[0], wdims[1]))
		param := fmt.Sprintf("f32[%d,%d] parameter(1)", wdims[0], wdims[1])
		for _, form := range []struct{ name, weights string }{{"argument", param}, {"constant", constant}} {
			m, err := hlotext.Parse(dotModule(c.m, c.n, c.k, c.transposed, "f32", true, form.weights), hlotext.Options{})
			if err != nil {
				b.Fatal(err)
			}
			x, err := Compile(m, Options{Threads: 2})
			if err != nil {
				b.Fatal(err)
			}
			args := eval.RandomArguments(m, 3)
			b.Run(c.name+"/"+form.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := x.Execute(args...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(c.m*c.n*c.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// A transposed B is copied in column strips (of the AVX-512 kernels'
// 128 columns and the AVX2 ones' 32): each strip's rows contiguous, the
// last strip narrower, and the small-M products over it (whole, and split
// at columns that cut strips) give what a plain row-major B gives.
func TestStripedB(t *testing.T) {
	for _, strip := range []int{128, 32} {
		t.Run(fmt.Sprint(strip), func(t *testing.T) { testStripedB(t, strip) })
	}
}

func testStripedB(t *testing.T, strip int) {
	rng := rand.New(rand.NewPCG(7, 8))
	const m, n, k = 2, 300, 1000 // strips of 128, 128, 44 or nine of 32 and one of 12
	w := make([]float32, n*k)    // [n, k]: B transposed
	for i := range w {
		w[i] = float32(rng.IntN(17) - 8)
	}
	g := gemmPlan{batch: 1, m: m, n: n, k: k, b: kernels.Strided[float32]{Row: 1, Col: k}}
	rg, rows := rowMajorB(&g, w, strip)
	if rg.strip != strip {
		t.Fatalf("strip %d, want %d", rg.strip, strip)
	}
	for _, at := range [][2]int{{0, 0}, {5, 127}, {999, 128}, {3, 255}, {999, 256}, {17, 299}, {4, 31}, {998, 32}, {6, 288}} {
		p, j := at[0], at[1]
		s := j / strip * strip
		width := min(strip, n-s)
		if got, want := rows[s*k+p*width+j-s], w[j*k+p]; got != want {
			t.Errorf("B[%d][%d] in the strips: %v, want %v", p, j, got, want)
		}
	}
	a := make([]float32, m*k)
	for i := range a {
		a[i] = float32(rng.IntN(5) - 2)
	}
	want := make([]float32, m*n) // small integers: exact in any order
	for i := range m {
		for j := range n {
			for p := range k {
				want[i*n+j] += a[i*k+p] * w[j*k+p]
			}
		}
	}
	rg.a = kernels.Strided[float32]{Row: k, Col: 1}
	for _, threads := range []int{1, 2} {
		c := make([]float32, m*n)
		if !gemvDot(&rg, a, rows, c, threads) {
			t.Skip("no small-M kernels on this CPU")
		}
		for i := range c {
			if c[i] != want[i] {
				t.Fatalf("threads %d: C[%d] = %v, want %v", threads, i, c[i], want[i])
			}
		}
		c = make([]float32, m*n)
		if !gemvRange(&rg, a, rows, c, k, 0, 100, 260) {
			t.Fatal("gemvRange declined")
		}
		for j := range n {
			if in := j >= 100 && j < 260; in && c[j] != want[j] || !in && c[j] != 0 {
				t.Fatalf("columns [100, 260): C[0][%d] = %v, want %v", j, c[j], want[j])
			}
		}
	}
}

// Products reading one constant share its layout where their plans are
// equal and keep their own where not: two steps of a recurrence (the
// same plan), three rows over the same weights, and the weights read
// transposed; every result as the evaluator's, run after run.
func TestDotConstantWeightsShared(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	text := fmt.Sprintf(`HloModule s
ENTRY e {
  h1 = f32[2,16] parameter(0)
  h2 = f32[2,16] parameter(1)
  h3 = f32[3,16] parameter(2)
  h4 = f32[2,40] parameter(3)
  w = f32[16,40] constant({%s})
  d1 = f32[2,40] dot(h1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[2,40] dot(h2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[3,40] dot(h3, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d4 = f32[2,16] dot(h4, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[2,40], f32[2,40], f32[3,40], f32[2,16]) tuple(d1, d2, d3, d4)
}
`, randomRows(rng, 16, 40))
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 3)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	for run := range 3 {
		got, err := x.Execute(args...)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want.Elements() {
			if msg := closeEnough(got.Elements()[i], w); msg != "" {
				t.Fatalf("run %d: d%d: %s", run, i+1, msg)
			}
		}
	}
}
