package cpu

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

const mlp = `HloModule mlp
ENTRY e {
  x = f32[64,32] parameter(0)
  w = f32[32,48] parameter(1)
  b = f32[48] parameter(2)
  d = f32[64,48] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,48] broadcast(b), dimensions={1}
  s = f32[64,48] add(d, bb)
  z = f32[] constant(0)
  zb = f32[64,48] broadcast(z), dimensions={}
  r = f32[64,48] maximum(s, zb)
  ROOT t = f32[64,48] tanh(r)
}`

// One executable, many goroutines executing it at once (run with -race):
// every result equals the evaluator's.
func TestConcurrentExecute(t *testing.T) {
	m, err := hlotext.Parse(mlp, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lowering["gemm+epilogue"] != 1 || len(x.Lowering) != 2 {
		t.Fatalf("lowering %v, want the dot on the GEMM with its epilogue", x.Lowering)
	}
	args := eval.RandomArguments(m, 3)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	executeConcurrently(t, x, args, func(got *hlo.Literal) string { return closeEnough(got, want) })
}

// TestConcurrentExecuteBlocks is TestConcurrentExecute on a product large
// enough for the threads to split C's columns, so that its epilogue runs
// blocks of part rows through the strided code, made on first use while
// other calls run; with the GEMM flushing subnormals, so its blocks lock
// their threads and set MXCSR concurrently too. (A tanh after the ReLU
// keeps the epilogue from the kernels, which finish a bias and a ReLU
// themselves: TestConcurrentExecuteTileOps.)
func TestConcurrentExecuteBlocks(t *testing.T) {
	text := strings.Replace(fmt.Sprintf(mlpLayer, 128, 256, 200), "ROOT h = f32[128,256] maximum(s, zb)",
		"h = f32[128,256] maximum(s, zb)\n  ROOT t = f32[128,256] tanh(h)", 1)
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	was := kernels.SetFlushDenormals(true)
	defer kernels.SetFlushDenormals(was)
	x, err := Compile(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 4)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	before := tile.StridedBlockRuns()
	executeConcurrently(t, x, args, func(got *hlo.Literal) string { return closeEnough(got, want) })
	if tile.GeneratedCode() && tile.StridedBlockRuns() == before {
		t.Error("the epilogue never ran the strided code")
	}
}

// TestConcurrentExecuteTileOps is TestConcurrentExecute on an MLP layer
// whose bias and ReLU the GEMM's kernels apply as they store its tiles.
func TestConcurrentExecuteTileOps(t *testing.T) {
	m, err := hlotext.Parse(fmt.Sprintf(mlpLayer, 128, 256, 200), hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 5)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	executeConcurrently(t, x, args, func(got *hlo.Literal) string { return closeEnough(got, want) })
}

// executeConcurrently runs x on args from 16 goroutines, 5 calls each,
// and fails with the first message check returns for a result.
func executeConcurrently(t *testing.T, x *Executable, args []*hlo.Literal, check func(*hlo.Literal) string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				got, err := x.Execute(args...)
				if err != nil {
					errs <- err.Error()
					return
				}
				if msg := check(got); msg != "" {
					errs <- msg
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// bf16 dots and convolutions widen their operands into pooled scratch
// and round their results from it: many goroutines at once must each
// get the bits a lone call gets (run with -race).
func TestConcurrentExecuteBF16(t *testing.T) {
	m, err := hlotext.Parse(`HloModule bf16
ENTRY main {
  x = bf16[2,9,9,8] parameter(0)
  w = bf16[3,3,8,16] parameter(1)
  v = bf16[16,24] parameter(2)
  c = bf16[2,9,9,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  r = bf16[162,16] reshape(c)
  ROOT d = bf16[162,24] dot(r, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lowering["conv"]+x.Lowering["conv-bf16"] != 1 || x.Lowering["gemm"]+x.Lowering["gemm-bf16"] != 1 {
		t.Fatalf("lowering %v, want the convolution and the dot on the kernels", x.Lowering)
	}
	args := eval.RandomArguments(m, 4)
	want, err := x.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if msg := closeEnough(want, ref); msg != "" {
		t.Fatalf("a lone call against the evaluator: %s", msg)
	}
	executeConcurrently(t, x, args, func(got *hlo.Literal) string {
		if !got.Equal(want) {
			return "a concurrent call's result differs from a lone call's"
		}
		return ""
	})
}

// Wrong arguments are errors naming the parameter.
func TestExecuteChecksArguments(t *testing.T) {
	m, _ := hlotext.Parse(mlp, hlotext.Options{})
	x, err := Compile(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 3)
	if _, err := x.Execute(args[:2]...); err == nil {
		t.Fatal("two arguments accepted for three parameters")
	}
	args[1], args[2] = args[2], args[1]
	if _, err := x.Execute(args...); err == nil || !strings.Contains(err.Error(), "parameter w") {
		t.Fatalf("err = %v", err)
	}
}

// With Profile, every executed instruction is timed under its name.
func TestProfile(t *testing.T) {
	m, _ := hlotext.Parse(mlp, hlotext.Options{})
	x, err := Compile(m, Options{Profile: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Execute(eval.RandomArguments(m, 1)...); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, k := range x.Profile() {
		if k.Calls != 1 {
			t.Errorf("%s ran %d times", k.Instruction, k.Calls)
		}
		kinds[k.Lowering]++
	}
	if kinds["gemm+epilogue"] != 1 || len(kinds) != 1 {
		t.Fatalf("profile %v", x.Profile())
	}
	if !strings.Contains(x.ProfileTable(5), "gemm") {
		t.Fatal(x.ProfileTable(5))
	}
}
