package cpu

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// twoChains is a module of two recurrences of steps small steps each from
// a shared x (the shape of a bidirectional RNN unrolled one direction after
// the other): h = tanh(h·w + x) per step, w a parameter per chain, joined
// by a concatenate of the chains' last states; with tail, the join has a
// third, cheap operand (a negate of x) that depends on neither chain.
func twoChains(dtype string, steps int, tail bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HloModule chains\nENTRY e {\n  x = %s[2,128] parameter(0)\n  wa = %s[128,128] parameter(1)\n  wb = %s[128,128] parameter(2)\n", dtype, dtype, dtype)
	step := func(c string, i int, prev, w string) string {
		name := fmt.Sprintf("%s%d", c, i)
		fmt.Fprintf(&b, "  %sd = %s[2,128] dot(%s, %s), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", name, dtype, prev, w)
		fmt.Fprintf(&b, "  %sa = %s[2,128] add(%sd, x)\n", name, dtype, name)
		if dtype == "f32" {
			fmt.Fprintf(&b, "  %s = %s[2,128] tanh(%sa)\n", name, dtype, name)
		} else {
			fmt.Fprintf(&b, "  %s = %s[2,128] shift-right-arithmetic(%sa, x)\n", name, dtype, name)
		}
		return name
	}
	ha, hb := "x", "x"
	for i := range steps {
		ha = step("a", i, ha, "wa")
		hb = step("b", i, hb, "wb")
	}
	if tail {
		fmt.Fprintf(&b, "  n = %s[2,128] negate(x)\n", dtype)
		fmt.Fprintf(&b, "  ROOT j = %s[6,128] concatenate(%s, n, %s), dimensions={0}\n}\n", dtype, ha, hb)
	} else {
		fmt.Fprintf(&b, "  ROOT j = %s[4,128] concatenate(%s, %s), dimensions={0}\n}\n", dtype, ha, hb)
	}
	return b.String()
}

// The two chains become one section ending at the join whose branches
// are exactly the chains' steps (and their weights); every step of its
// span runs once, the join's third operand after the branches (it feeds
// neither); one thread finds no section.
func TestSectionsOfTwoChains(t *testing.T) {
	_, x := compileText(t, twoChains("s32", 24, true), Options{NoOptimize: true, Threads: 2})
	if len(x.sections) != 1 {
		t.Fatalf("%d sections, want 1", len(x.sections))
	}
	s := x.sections[0]
	if name := x.steps[s.to].in.Name; name != "j" {
		t.Errorf("section ends at %s, want the join j", name)
	}
	for k, br := range s.branch {
		chain := ""
		for _, i := range br {
			name := x.steps[i].in.Name
			if x.steps[i].in.Opcode == hlo.OpParameter {
				continue // a chain's weights go with it
			}
			if chain == "" {
				chain = name[:1]
			}
			if name[:1] != chain {
				t.Errorf("branch %d has %s and a step of chain %s", k, name, chain)
			}
		}
		if n := len(br); n < 3*24 {
			t.Errorf("branch %d has %d steps, want the chain's %d and its weights", k, n, 3*24)
		}
	}
	seen := map[int]int{}
	for _, part := range [][]int{s.pre, s.branch[0], s.branch[1], s.post} {
		for _, i := range part {
			seen[i]++
		}
	}
	for i := s.from; i < s.to; i++ {
		if seen[i] != 1 {
			t.Errorf("step %s runs %d times in the section", x.steps[i].in.Name, seen[i])
		}
		if name := x.steps[i].in.Name; name == "n" && !slices.Contains(s.post, i) {
			t.Errorf("n is not among the steps after the branches")
		}
	}
	_, one := compileText(t, twoChains("s32", 24, true), Options{NoOptimize: true, Threads: 1})
	if len(one.sections) != 0 {
		t.Errorf("one thread: %d sections", len(one.sections))
	}
}

// A section's values never share memory, whatever order its branches'
// steps run in; the results are the evaluator's.
func TestSectionBuffersDisjoint(t *testing.T) {
	m, x := compileText(t, twoChains("s32", 24, true), Options{NoOptimize: true, Threads: 2, Poison: true})
	if len(x.sections) == 0 {
		t.Fatal("no section")
	}
	for _, s := range x.sections {
		touched := map[int]bool{}
		for i := s.from; i < s.to; i++ {
			touched[x.asg.bufOf[i]] = true
			for _, o := range x.steps[i].ops {
				touched[x.asg.bufOf[o]] = true
			}
		}
		var arena []buffer
		for b := range touched {
			if buf := x.asg.bufs[b]; buf.kind == bufArena {
				arena = append(arena, buf)
			}
		}
		for i, p := range arena {
			for _, q := range arena[i+1:] {
				if p.offset < q.offset+q.bytes && q.offset < p.offset+p.bytes {
					t.Fatalf("buffers at %d (%d B) and %d (%d B) overlap in a section", p.offset, p.bytes, q.offset, q.bytes)
				}
			}
		}
	}
	checkAgainstEvaluator(t, m, x, 3)
}

// Float chains, fused and lowered as the pipeline does: two threads (a
// section) give the bits one thread gives, from many goroutines at once.
// (Against the evaluator see TestSectionBuffersDisjoint: 32 steps of a
// random recurrence amplify rounding differences past any tolerance.)
func TestSectionsSameBits(t *testing.T) {
	text := twoChains("f32", 32, false)
	m, x2 := compileText(t, text, Options{Threads: 2})
	if len(x2.sections) == 0 {
		t.Fatal("no section in the fused module")
	}
	_, x1 := compileText(t, text, Options{Threads: 1})
	args := eval.RandomArguments(m, 3)
	want, err := x1.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for run := range 20 {
				got, err := x2.Execute(args...)
				if err != nil {
					t.Error(err)
					return
				}
				if !got.Equal(want) {
					t.Errorf("goroutine %d run %d: two threads differ from one", g, run)
					return
				}
				x2.Recycle(got)
			}
		})
	}
	wg.Wait()
}

// A branch with an effect (rng) makes no section, with or without the
// pipeline (safeInSection also looks inside fusions, which the pipeline
// keeps rng out of).
func TestSectionsSkipEffects(t *testing.T) {
	text := strings.Replace(twoChains("f32", 32, false), "  a0d = ", "  lo = f32[] constant(0)\n  hi = f32[] constant(1)\n  u = f32[2,128] rng(lo, hi), distribution=rng_uniform\n  a0d = ", 1)
	text = strings.Replace(text, "a0a = f32[2,128] add(a0d, x)", "a0a = f32[2,128] add(a0d, u)", 1)
	var hasRng func(in *hlo.Instruction) bool
	hasRng = func(in *hlo.Instruction) bool {
		if in.Opcode == hlo.OpRng {
			return true
		}
		for _, c := range in.CalledComputations() {
			if slices.ContainsFunc(c.Instructions, hasRng) {
				return true
			}
		}
		return false
	}
	for _, noOpt := range []bool{true, false} {
		_, x := compileText(t, text, Options{NoOptimize: noOpt, Threads: 2})
		for _, s := range x.sections {
			for i := s.from; i < s.to; i++ {
				if hasRng(x.steps[i].in) {
					t.Fatalf("NoOptimize %v: rng in section step %s", noOpt, x.steps[i].in.Name)
				}
			}
		}
	}
}

// An execution that hands the pool no work marks its executable serial
// (its next executions keep no worker polling); one with a section does
// not.
func TestSerialExecutions(t *testing.T) {
	m, par := compileText(t, twoChains("s32", 24, false), Options{NoOptimize: true, Threads: 2})
	checkAgainstEvaluator(t, m, par, 2)
	if par.serial.Load() {
		t.Error("an executable running a section is marked serial")
	}
	const small = `HloModule s
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] add(x, x)
}`
	m, ser := compileText(t, small, Options{Threads: 2})
	checkAgainstEvaluator(t, m, ser, 2)
	if !ser.serial.Load() {
		t.Error("an executable of one small add is not marked serial")
	}
}
