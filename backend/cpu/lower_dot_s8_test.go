package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// s8GemmCases are s8×s8→s32 dots the s8 GEMM takes: plain, transposed
// either side, batched, vector, several k blocks; s8LoopCases are ones
// only the loop takes.
var (
	s8GemmCases = []struct{ params, root string }{
		{"s8[4,16] s8[16,3]", "s32[4,3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
		{"s8[33,17] s8[21,33]", "s32[17,21] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
		{"s8[3,7,1025] s8[3,1025,19]", "s32[3,7,19] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"},
		{"s8[2,3,9,40] s8[2,3,35,9]", "s32[2,3,40,35] dot(p0, p1), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}"},
		{"s8[77] s8[77,50]", "s32[50] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
		{"s8[40,77] s8[77]", "s32[40] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
		{"s8[130,300] s8[300,70]", "s32[130,70] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
		{"s8[4,0] s8[0,6]", "s32[4,6] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
	}
	s8LoopCases = []struct{ params, root string }{
		{"s8[7,3,5] s8[5,9,3]", "s32[3,7,9] dot(p0, p1), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}"},
		{"s8[4,3,5] s8[5,6,3]", "s32[4,6] dot(p0, p1), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,0}"},
	}
)

// fillS8 sets every element of l from pick.
func fillS8(l *hlo.Literal, pick func() int64) *hlo.Literal {
	for i := range l.Len() {
		l.SetInt64(i, pick())
	}
	return l
}

// The s8 dots run on GemmS8 (the others decline it and keep the loop)
// and equal the evaluator on random, all -128 and ±extreme operands.
func TestLowerDotS8Gemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	fills := map[string]func() int64{
		"random": func() int64 { return int64(rng.IntN(256) - 128) },
		"-128":   func() int64 { return -128 },
		"±":      func() int64 { return [2]int64{-128, 127}[rng.IntN(2)] },
	}
	for _, c := range s8GemmCases {
		in := parseRoot(t, module(strings.Fields(c.params), c.root))
		if _, ok := gemmDotS8(in, 1); !ok {
			t.Errorf("%s: not on the s8 GEMM", in)
		}
		for name, fill := range fills {
			ops := func(in *hlo.Instruction) []*hlo.Literal {
				return []*hlo.Literal{fillS8(hlo.NewLiteral(in.Operands[0].Shape), fill), fillS8(hlo.NewLiteral(in.Operands[1].Shape), fill)}
			}
			for threads := 1; threads <= 3; threads++ {
				t.Run(fmt.Sprintf("%s/%s/%d", c.params, name, threads), func(t *testing.T) {
					runBoth(t, lowerDotGeneric, strings.Fields(c.params), c.root, nil, ops, threads)
				})
			}
		}
	}
	for _, c := range s8LoopCases {
		in := parseRoot(t, module(strings.Fields(c.params), c.root))
		if _, ok := gemmDotS8(in, 1); ok {
			t.Errorf("%s: taken by the s8 GEMM", in)
		}
		runBoth(t, lowerDotGeneric, strings.Fields(c.params), c.root, nil,
			func(in *hlo.Instruction) []*hlo.Literal { return randomOperands(in, rng) }, 2)
	}
}

// BenchmarkDotS8 runs a 256×256×256 s8×s8→s32 dot on the s8 GEMM and on
// the loop (the s8 operands converted to s32, its previous path).
func BenchmarkDotS8(b *testing.B) {
	text := module([]string{"s8[256,256]", "s8[256,256]"},
		"s32[256,256] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}")
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	in := m.Entry.Root
	ops := randomOperands(in, rand.New(rand.NewPCG(1, 1)))
	p, ok := newDotTables(in)
	if !ok {
		b.Fatal("no tables")
	}
	p.threads, p.wraps = 1, true
	for name, k := range map[string]kernelFunc{"gemm": must(gemmDotS8(in, 1)), "loop": runDotLoop[int32](p)} {
		b.Run(name, func(b *testing.B) {
			out := hlo.NewLiteral(in.Shape)
			for b.Loop() {
				if err := k(out, ops); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*256*256*256*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		})
	}
	b.Run("evaluator", func(b *testing.B) {
		var ev eval.Evaluator
		for b.Loop() {
			if _, err := ev.Instruction(in, ops); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func must(k kernelFunc, ok bool) kernelFunc {
	if !ok {
		panic("no kernel")
	}
	return k
}
