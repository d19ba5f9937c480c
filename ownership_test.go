package axle_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
)

// rootConstant's result is a module constant: on the evaluator it is the
// module's own literal unless the runtime copies it.
const rootConstant = `HloModule k
ENTRY main {
  p = f32[4] parameter(0)
  ROOT k = f32[4] constant({1, 2, 3, 4})
}`

// rootElement's result is an element of the tuple argument.
const rootElement = `HloModule gte
ENTRY main {
  p = (f32[4], f32[4]) parameter(0)
  ROOT g = f32[4] get-tuple-element(p), index=0
}`

// negateDonor overwrites its donated argument in place on the cpu
// backend (compiled): a result that aliased something else would show it.
const negateDonor = `HloModule neg
ENTRY main {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}`

func compileRuns(t *testing.T, c *axle.Client, text string, runs int) *axle.Executable {
	t.Helper()
	x, err := c.CompileText(text, axle.CompileOptions{ExpectedRuns: runs})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func vec(t *testing.T, vals ...float32) *hlo.Literal {
	t.Helper()
	l, err := hlo.LiteralFromSlice(vals)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestResultsOwnNoConstant: mutating a ROOT constant's result, as a
// literal or by donating its buffer to an execution that writes in
// place, leaves later results of the executable (and of a recompile of
// the same text) at the constant's value.
func TestResultsOwnNoConstant(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			c := newClient(t, e.backend)
			x := compileRuns(t, c, rootConstant, e.runs)
			outs, err := x.ExecuteLiterals(vec(t, 0, 0, 0, 0))
			if err != nil {
				t.Fatal(err)
			}
			outs[0].SetFloat64(0, 99)
			bufs, err := x.Execute(buffer(t, c, []float32{0, 0, 0, 0}))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(floats(t, bufs[0])); got != "[1 2 3 4]" {
				t.Fatalf("after mutating a result literal, the constant reads %s", got)
			}
			neg := compileRuns(t, c, negateDonor, 0)
			if _, err := neg.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, bufs[0]); err != nil {
				t.Fatal(err)
			}
			again := compileRuns(t, c, rootConstant, e.runs)
			bufs, err = again.Execute(buffer(t, c, []float32{0, 0, 0, 0}))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(floats(t, bufs[0])); got != "[1 2 3 4]" {
				t.Fatalf("after donating a result to an in-place execution, the constant reads %s", got)
			}
		})
	}
}

// TestResultsOwnNoArgument: a ROOT get-tuple-element of a tuple parameter
// is a copy: mutating it, releasing it (its storage then serves later
// outputs) or donating it leaves the argument as it was.
func TestResultsOwnNoArgument(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			c := newClient(t, e.backend)
			x := compileRuns(t, c, rootElement, e.runs)
			arg := hlo.MakeTupleLiteral(vec(t, 1, 2, 3, 4), vec(t, 5, 6, 7, 8))
			outs, err := x.ExecuteLiterals(arg)
			if err != nil {
				t.Fatal(err)
			}
			outs[0].SetFloat64(0, 99)
			if got, _ := hlo.LiteralToSlice[float32](arg.Elements()[0]); fmt.Sprint(got) != "[1 2 3 4]" {
				t.Fatalf("mutating the result literal changed the argument to %v", got)
			}
			in, err := c.BufferFromLiteral(arg)
			if err != nil {
				t.Fatal(err)
			}
			bufs, err := x.Execute(in)
			if err != nil {
				t.Fatal(err)
			}
			neg := compileRuns(t, c, negateDonor, 0)
			if _, err := neg.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, bufs[0]); err != nil {
				t.Fatal(err)
			}
			for range 3 { // released outputs serve the next ones
				bufs, err := x.Execute(in)
				if err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprint(floats(t, bufs[0])); got != "[1 2 3 4]" {
					t.Fatalf("the argument's element reads %s", got)
				}
				bufs[0].Release()
			}
		})
	}
}

// TestRejectedDonationTakesNothing: a call rejected because a later
// argument is bad leaves the donated buffer as it was, and a call that
// names one buffer both donated and kept is rejected as in use.
func TestRejectedDonationTakesNothing(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	a := buffer(t, c, []float32{1, 2})
	released := buffer(t, c, []float32{1, 2})
	released.Release()
	if _, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, a, released); !errors.Is(err, axle.ErrReleased) {
		t.Fatalf("released second argument: %v", err)
	}
	if _, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, a, a); !errors.Is(err, axle.ErrInUse) ||
		!strings.Contains(err.Error(), "argument 0 (parameter x)") {
		t.Fatalf("donating a buffer also passed kept: %v", err)
	}
	if a.IsReleased() || fmt.Sprint(floats(t, a)) != "[1 2]" {
		t.Fatal("a rejected donation changed the buffer")
	}
	a.Release()
	if _, err := axle.ToSlice[float32](a); !errors.Is(err, axle.ErrReleased) {
		t.Fatalf("release after a rejected donation: %v", err)
	}
}
