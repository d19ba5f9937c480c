package cpu

import (
	"fmt"
	"sync"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// bindingModule has a pointwise convolution and a product, each finished
// by an epilogue with a bias and a residual read from the parameters,
// and their results consumed inside the module (so their outputs lie in
// the arena, which runs reuse).
const bindingModule = `HloModule bind
ENTRY e {
  x = f32[2,6,7,16] parameter(0)
  k = f32[1,1,16,8] parameter(1)
  b = f32[8] parameter(2)
  q = f32[2,6,7,8] parameter(3)
  c = f32[2,6,7,8] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
  bb = f32[2,6,7,8] broadcast(b), dimensions={3}
  s = f32[2,6,7,8] add(c, bb)
  t = f32[2,6,7,8] add(s, q)
  z = f32[] constant(0)
  zb = f32[2,6,7,8] broadcast(z), dimensions={}
  h = f32[2,6,7,8] maximum(t, zb)
  m = f32[84,8] reshape(h)
  w = f32[8,24] parameter(4)
  d = f32[84,24] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[84,24] parameter(5)
  e = f32[84,24] add(d, r)
  ROOT n = f32[84,24] negate(e)
}`

// An epilogue's binding is kept from run to run only while its operands
// lie in the same storage: runs on other arguments, on the first ones
// again, on the first ones with their values changed in place, and two
// goroutines running on different arguments at once, each match the
// evaluator.
func TestEpilogueBindingFollowsStorage(t *testing.T) {
	for threads := 1; threads <= 2; threads++ {
		t.Run(fmt.Sprint("threads=", threads), func(t *testing.T) {
			m, x := compileText(t, bindingModule, Options{Threads: threads, Poison: true})
			if x.Lowering["conv+epilogue"] != 1 || x.Lowering["gemm+epilogue"] != 1 {
				t.Fatalf("lowering %v, want a conv+epilogue and a gemm+epilogue", x.Lowering)
			}
			a, b := eval.RandomArguments(m, 21), eval.RandomArguments(m, 22)
			check := func(args []*hlo.Literal, what string) {
				t.Helper()
				want, err := eval.Run(m, args...)
				if err != nil {
					t.Fatal(err)
				}
				got, err := x.Execute(args...)
				if err != nil {
					t.Fatal(err)
				}
				if msg := closeEnough(got, want); msg != "" {
					t.Fatalf("%s: %s", what, msg)
				}
			}
			check(a, "first arguments")
			check(a, "first arguments again")
			check(b, "other arguments")
			check(a, "first arguments after the others")
			for _, l := range a {
				d := l.Data().([]float32)
				for i := range d {
					d[i] = -d[i] + 0.25
				}
			}
			check(a, "first arguments changed in place")
			var wg sync.WaitGroup
			errs := make(chan string, 2)
			for _, args := range [][]*hlo.Literal{a, b} {
				want, err := eval.Run(m, args...)
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 50 {
						got, err := x.Execute(args...)
						if err != nil {
							errs <- err.Error()
							return
						}
						if msg := closeEnough(got, want); msg != "" {
							errs <- "concurrent runs: " + msg
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
		})
	}
}
