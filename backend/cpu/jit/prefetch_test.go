//go:build linux && amd64 && !purego

package jit

import (
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// TestPrefetchAhead checks that a program asked to prefetch an input
// emits, in its main loop, one PREFETCHT0 per 64 bytes that loop's
// iteration reads, PrefetchAhead elements on (f32: 4 bytes each, bf16:
// 2), and computes the same bits as without; and that validate refuses
// prefetches of inputs it does not have.
func TestPrefetchAhead(t *testing.T) {
	// The table's counts are for 8-lane code (16-lane code reads twice the
	// bytes an iteration, and prefetches twice the lines).
	defer func(w bool) { wideCode = w }(wideCode)
	wideCode = false
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) not installed")
	}
	one := Value{Op: Const, Value: 1}
	for _, c := range []struct {
		name   string
		p      Program
		unroll int
		want   []string // the prefetches' memory operands, in order
	}{
		// Two inputs, the second prefetched; unroll 2: 64 bytes, one line.
		{"f32", Program{Inputs: 2, Values: []Value{{Op: Input}, {Op: Input, Arg: 1}, {Op: Add, Args: [3]int{0, 1}}},
			PrefetchInputs: []int{1}, PrefetchAhead: 4096}, 2, []string{"+rsi*4+0x4000]"}},
		// Two exponentials: unroll 3, 96 bytes, two lines.
		{"unroll3", Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: Exp, Args: [3]int{0}}, one,
			{Op: Sub, Args: [3]int{1, 2}}, {Op: Exp, Args: [3]int{3}}}, PrefetchInputs: []int{0}, PrefetchAhead: 1024},
			3, []string{"+rsi*4+0x1000]", "+rsi*4+0x1040]"}},
		// A bf16 input: 2 bytes an element, 32 bytes an iteration.
		{"bf16", Program{Inputs: 1, InputTypes: []Type{BF16}, Values: []Value{{Op: Input}, one, {Op: Add, Args: [3]int{0, 1}}},
			PrefetchInputs: []int{0}, PrefetchAhead: 512}, 2, []string{"+rsi*2+0x400]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if u := unrollFor(&c.p); u != c.unroll {
				t.Fatalf("unroll %d, the test expects %d", u, c.unroll)
			}
			code, _, _, err := generate(&c.p, false, targetOf(&c.p))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ins := range disassemble(t, objdump, code) {
				if strings.HasPrefix(ins, "prefetch") {
					got = append(got, ins)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("prefetches %q, want %d", got, len(c.want))
			}
			for i, g := range got {
				if !strings.HasPrefix(g, "prefetcht0 BYTE PTR [") || !strings.HasSuffix(g, c.want[i]) {
					t.Errorf("prefetch %d: %q, want prefetcht0 of [...%s", i, g, c.want[i])
				}
			}
			// The same results as the program without prefetches.
			plain := c.p
			plain.PrefetchInputs, plain.PrefetchAhead = nil, 0
			fa, err := Compile(&c.p)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := Compile(&plain)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			n := 1000
			ins := make([]Array, c.p.Inputs)
			for k := range ins {
				x := testInput(rng, n, 5)
				if c.p.inputType(k) == BF16 {
					ins[k].BF16 = make([]uint16, n)
					for i, v := range x {
						ins[k].BF16[i] = uint16(math.Float32bits(v) >> 16)
					}
				} else {
					ins[k].F32 = x
				}
			}
			a, b := make([]float32, n), make([]float32, n)
			fa.Run(f32s(a), ins, nil, false)
			fb.Run(f32s(b), ins, nil, false)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("element %d: %v with prefetches, %v without", i, a[i], b[i])
				}
			}
		})
	}
	for _, p := range []Program{
		{Inputs: 1, Values: []Value{{Op: Input}}, PrefetchInputs: []int{1}},
		{Inputs: 1, Values: []Value{{Op: Input}}, PrefetchInputs: []int{-1}},
		{Inputs: 1, Values: []Value{{Op: Input}}, PrefetchInputs: []int{0}, PrefetchAhead: -8},
		{Inputs: 1, Values: []Value{{Op: Input}}, PrefetchInputs: []int{0}, PrefetchAhead: maxPrefetchAhead + 1},
	} {
		if err := p.validate(); err == nil || !strings.Contains(err.Error(), "prefetch") {
			t.Errorf("%+v: validate gave %v, want a prefetch error", p, err)
		}
	}
}
