package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// int8DotModule is dot(convert(p0), convert(p1)) to s32, as ONNX's
// MatMulInteger lowers: p0 of type lt, the shapes and dimensions of an s8
// GEMM case; extra adds a reader of p1's convert outside the dot.
func int8DotModule(lt, params, root string, extra bool) string {
	ps := strings.Fields(params)
	l, r := strings.Replace(ps[0], "s8", lt, 1), ps[1]
	l32, r32 := strings.Replace(ps[0], "s8", "s32", 1), strings.Replace(ps[1], "s8", "s32", 1)
	dot := strings.SplitN(root, " ", 2)
	body := fmt.Sprintf("  p0 = %s parameter(0)\n  p1 = %s parameter(1)\n  a = %s convert(p0)\n  b = %s convert(p1)\n", l, r, l32, r32)
	dotLine := strings.Replace(dot[1], "dot(p0, p1)", "dot(a, b)", 1)
	if !extra {
		return fmt.Sprintf("HloModule int8\nENTRY e {\n%s  ROOT d = %s %s\n}", body, dot[0], dotLine)
	}
	return fmt.Sprintf("HloModule int8\nENTRY e {\n%s  d = %s %s\n  n = %s negate(b)\n  ROOT t = (%s, %s) tuple(d, n)\n}",
		body, dot[0], dotLine, r32, dot[0], r32)
}

// Integer dots of widened u8/s8 × s8 operands run on the 8-bit GEMM as
// one kCustom fusion and equal the evaluator: random operands and the
// extremes (255 or -128 times -128), every s8 GEMM case's shapes, on 1 and
// 3 threads; a convert with another reader stays for it; the shapes the
// GEMM cannot map keep the loop.
func TestInt8DotFusion(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 32))
	fills := map[string]func(t hlo.DType) int64{
		"random":  func(t hlo.DType) int64 { return int64(rng.IntN(256)) - map[hlo.DType]int64{hlo.U8: 0, hlo.S8: 128}[t] },
		"extreme": func(t hlo.DType) int64 { return map[hlo.DType]int64{hlo.U8: 255, hlo.S8: -128}[t] },
	}
	for _, lt := range []string{"u8", "s8"} {
		for i, c := range s8GemmCases {
			if strings.Contains(c.params, ",0]") { // (an empty product folds to a constant)
				continue
			}
			for name, fill := range fills {
				for _, threads := range []int{1, 3} {
					extra := i%2 == 1
					t.Run(fmt.Sprintf("%s/%s/%s/%d", lt, c.params, name, threads), func(t *testing.T) {
						checkInt8Dot(t, int8DotModule(lt, c.params, c.root, extra), fill, threads, "gemm-int8")
					})
				}
			}
		}
		for _, c := range s8LoopCases {
			checkInt8Dot(t, int8DotModule(lt, c.params, c.root, false), fills["random"], 2, "fusion-body")
		}
	}
}

func checkInt8Dot(t *testing.T, text string, fill func(hlo.DType) int64, threads int, want string) {
	t.Helper()
	m, x := compileText(t, text, Options{Threads: threads, Poison: true})
	if x.Lowering[want] != 1 {
		t.Fatalf("lowered as %v, want one %s\n%s", x.Lowering, want, text)
	}
	args := eval.RandomArguments(m, 1)
	for _, a := range args {
		dt := a.Shape().DType
		for i := range a.Len() {
			a.SetInt64(i, fill(dt))
		}
	}
	got, want2 := evalAndRun(t, m, x, args)
	if !got.Equal(want2) {
		t.Fatalf("the 8-bit GEMM and the evaluator differ\n%s", text)
	}
}
