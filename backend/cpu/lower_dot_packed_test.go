package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// A product whose weights are a constant packs them once and reads the
// packed panels after: on every call, from many goroutines at once, its
// bits are those of the same module with the weights passed as an
// argument (packed per call), and within the evaluator's tolerance. Plain
// products and products finished by an epilogue; weights [k, n] and
// transposed [n, k]; f32 and bf16; K past one block of the GEMM.
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
	} {
		name := fmt.Sprintf("%dx%dx%d transposed=%v %s epilogue=%v", c.m, c.n, c.k, c.transposed, c.dtype, c.epilogue)
		t.Run(name, func(t *testing.T) {
			wdims := [2]int{c.k, c.n}
			if c.transposed {
				wdims = [2]int{c.n, c.k}
			}
			vals := make([]string, wdims[0]*wdims[1])
			for i := range vals {
				vals[i] = fmt.Sprintf("%.3f", rng.Float64()*2-1)
			}
			lit := "{" + rowsText(vals, wdims[1]) + "}"
			constant := fmt.Sprintf("%s[%d,%d] constant(%s)", c.dtype, wdims[0], wdims[1], lit)
			param := fmt.Sprintf("%s[%d,%d] parameter(1)", c.dtype, wdims[0], wdims[1])
			withConst := dotModule(c.m, c.n, c.k, c.transposed, c.dtype, c.epilogue, constant)
			withParam := dotModule(c.m, c.n, c.k, c.transposed, c.dtype, c.epilogue, param)
			checkPackedDot(t, withConst, withParam)
		})
	}
}

func rowsText(vals []string, cols int) string {
	var rows []string
	for i := 0; i < len(vals); i += cols {
		rows = append(rows, "{"+strings.Join(vals[i:i+cols], ", ")+"}")
	}
	return strings.Join(rows, ", ")
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

func checkPackedDot(t *testing.T, withConst, withParam string) {
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
	if xc.Lowering["gemm"]+xc.Lowering["gemm+epilogue"] != 1 {
		t.Fatalf("not one product on the GEMM: %v", xc.Lowering)
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
				if !got.Equal(perCall) {
					errs <- fmt.Errorf("packed ahead %v, packed per call %v", got, perCall)
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
