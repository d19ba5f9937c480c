//go:build linux && amd64 && !purego

package jit

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Programs of more inputs than the seven array registers leave (the
// outputs take theirs first): the inputs past them are read through R13,
// reloaded before each read, and the loops keep their bound in the
// argument block. Each output is a running sum of the inputs in order
// (inputs 0..j for output j's prefix), checked bit for bit against the
// same f32 adds in Go: flat, over rows, and strided rows, with tails.
func TestManyInputs(t *testing.T) { bothWidths(t, testManyInputs) }

func testManyInputs(t *testing.T) {
	if !Available {
		t.Skip("no code generation on this platform")
	}
	rng := rand.New(rand.NewPCG(12, 12))
	for _, ins := range []int{6, 7, 9, MaxInputs} {
		for _, outs := range []int{1, 2, MaxOutputs} {
			for _, mode := range []string{"flat", "rows", "strided"} {
				t.Run(fmt.Sprintf("%d-inputs/%d-outputs/%s", ins, outs, mode), func(t *testing.T) {
					p := &Program{Inputs: ins}
					for k := range ins {
						p.Values = append(p.Values, Value{Op: Input, Arg: k})
					}
					sum := 0
					for k := 1; k < ins; k++ {
						p.Values = append(p.Values, Value{Op: Add, Args: [3]int{sum, k}})
						sum = len(p.Values) - 1
						if k >= ins-outs {
							p.Outputs = append(p.Outputs, sum)
						}
					}
					const rows, cols = 5, 37
					switch mode {
					case "rows":
						p.RowLen = cols
					case "strided":
						p.Strided = true
					}
					f, err := Compile(p)
					if err != nil {
						t.Fatal(err)
					}
					n := rows * cols
					in := make([][]float32, ins)
					for k := range in {
						in[k] = testInput(rng, n, 10)
					}
					want := make([][]float32, outs)
					for j := range want {
						want[j] = make([]float32, n)
						last := ins - outs + j // the input its sum ends with
						for i := range n {
							s := in[0][i]
							for k := 1; k <= last; k++ {
								s += in[k][i]
							}
							want[j][i] = s
						}
					}
					got := make([][]float32, outs)
					for j := range got {
						got[j] = make([]float32, n)
					}
					switch mode {
					case "flat":
						f.RunF32(got, in, nil)
					case "rows":
						f.RunRows(f32s(got...), f32s(in...), nil, nil, false)
					case "strided":
						st := func(k int) []int {
							s := make([]int, k)
							for i := range s {
								s[i] = cols
							}
							return s
						}
						f.RunStridedF32(got, in, nil, rows, cols, st(outs), st(ins))
					}
					for j := range got {
						sameBits(t, fmt.Sprintf("output %d", j), got[j], want[j])
					}
				})
			}
		}
	}
}
