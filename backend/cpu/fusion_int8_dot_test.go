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
// extremes (255 or -128 times -128), every s8 GEMM case's shapes and a
// batch dimension in the middle, on 1 and 3 threads; a convert with
// another reader stays for it; contracting dimensions the GEMM cannot
// read as one keep the loop.
func TestInt8DotFusion(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 32))
	fills := map[string]func(t hlo.DType) int64{
		"random":  func(t hlo.DType) int64 { return int64(rng.IntN(256)) - map[hlo.DType]int64{hlo.U8: 0, hlo.S8: 128}[t] },
		"extreme": func(t hlo.DType) int64 { return map[hlo.DType]int64{hlo.U8: 255, hlo.S8: -128}[t] },
	}
	for _, lt := range []string{"u8", "s8"} {
		for i, c := range append(s8GemmCases, s8LoopCases[0]) { // (batch dimensions anywhere nest)
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
		c := s8LoopCases[1] // contracting dimensions that do not nest
		checkInt8Dot(t, int8DotModule(lt, c.params, c.root, false), fills["random"], 2, "fusion-body")
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

// zpCase is an integer dot with zero points as quantized models write it:
// dot(convert(a8) - broadcast(za), convert(b8) - broadcast(zb)).
type zpCase struct {
	a, b       string // the 8-bit operands' shapes
	za, zb     string // the zero points' shapes and broadcast dimensions ("" for none)
	dims, out  string
	constantB  bool
	wantFusion bool
}

// text is the case's module; b8 is a seeded constant when constantB.
func (c zpCase) text(t *testing.T, rng *rand.Rand) string {
	var b strings.Builder
	n := 0
	param := func(name, shape string) {
		fmt.Fprintf(&b, "  %s = %s parameter(%d)\n", name, shape, n)
		n++
	}
	b.WriteString("HloModule zp\nENTRY e {\n")
	param("a8", c.a)
	if c.constantB {
		s, err := hlotext.ParseShape(c.b)
		if err != nil {
			t.Fatal(err)
		}
		lit := hlo.NewLiteral(s)
		for i := range lit.Len() {
			lit.SetInt64(i, int64(rng.IntN(256))-map[hlo.DType]int64{hlo.U8: 0, hlo.S8: 128}[s.DType])
		}
		fmt.Fprintf(&b, "  b8 = %s constant(", c.b)
		lit.AppendPayload(&b)
		b.WriteString(")\n")
	} else {
		param("b8", c.b)
	}
	wide := func(name, x8, shape, zp string) {
		s32 := "s32" + shape[2:]
		if zp == "" {
			fmt.Fprintf(&b, "  %s = %s convert(%s)\n", name, s32, x8)
			return
		}
		zs := strings.Fields(zp)
		param(name+"z", zs[0])
		fmt.Fprintf(&b, "  %sw = %s convert(%s)\n", name, s32, x8)
		fmt.Fprintf(&b, "  %sb = %s broadcast(%sz), dimensions={%s}\n", name, s32, name, strings.Join(zs[1:], ","))
		fmt.Fprintf(&b, "  %s = %s subtract(%sw, %sb)\n", name, s32, name, name)
	}
	wide("a", "a8", c.a, c.za)
	wide("b", "b8", c.b, c.zb)
	fmt.Fprintf(&b, "  ROOT d = %s dot(a, b), %s\n}\n", c.out, c.dims)
	return b.String()
}

// Zero points subtracted from the widened operands fold into the 8-bit
// GEMM's fusion (per tensor, per row of A, per column of B, per batch,
// u8 or s8 on either side, B a constant or not, odd sizes, products cut
// by columns across threads), and the
// result equals the evaluator's bit for bit, on random values and zero
// points and on the extremes; a zero point that varies along the
// contracted dimension keeps the dot off the GEMM.
func TestInt8DotZeroPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const mk = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
	var cases []zpCase
	for _, at := range []string{"u8", "s8"} {
		for _, bt := range []string{"s8", "u8"} {
			for _, zp := range [][2]string{{"s32[] ", "s32[] "}, {"s32[37] 0", "s32[29] 1"}, {"", "s32[] "}, {"s32[] ", ""}, {"", ""}} {
				for _, cb := range []bool{false, true} {
					cases = append(cases, zpCase{a: at + "[37,67]", b: bt + "[67,29]", za: zp[0], zb: zp[1], dims: mk, out: "s32[37,29]",
						constantB: cb, wantFusion: true})
				}
			}
		}
	}
	cases = append(cases,
		zpCase{a: "u8[3,5,40]", b: "s8[3,40,7]", za: "s32[3,5] 0,1", zb: "s32[3,7] 0,2", out: "s32[3,5,7]", wantFusion: true,
			dims: "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"},
		zpCase{a: "u8[2,9,130]", b: "s8[11,130]", za: "s32[] ", zb: "s32[11] 0", out: "s32[2,9,11]", wantFusion: true, constantB: true,
			dims: "lhs_contracting_dims={2}, rhs_contracting_dims={1}"},
		zpCase{a: "u8[6,10]", b: "s8[10,4]", za: "s32[10] 1", zb: "s32[] ", out: "s32[6,4]", dims: mk},
		// Fewer rows than columns, on several threads: cut by columns.
		zpCase{a: "u8[40,300]", b: "s8[300,401]", za: "s32[] ", zb: "s32[401] 1", dims: mk, out: "s32[40,401]", wantFusion: true},
		zpCase{a: "s8[40,300]", b: "u8[300,401]", za: "s32[40] 0", dims: mk, out: "s32[40,401]", wantFusion: true, constantB: true},
	)
	for _, c := range cases {
		text := c.text(t, rng)
		for _, threads := range []int{1, 3} {
			m, x := compileText(t, text, Options{Threads: threads, Poison: true})
			if got := x.Lowering["gemm-int8"] == 1; got != c.wantFusion {
				t.Fatalf("lowered as %v, want gemm-int8 %v\n%s", x.Lowering, c.wantFusion, text)
			}
			for _, fill := range []func(hlo.DType) int64{
				func(t hlo.DType) int64 { return int64(rng.IntN(600)) - 300 },
				func(t hlo.DType) int64 { return map[hlo.DType]int64{hlo.U8: 255, hlo.S8: -128, hlo.S32: 1 << 30}[t] },
			} {
				args := eval.RandomArguments(m, 1)
				for _, a := range args {
					for i := range a.Len() {
						a.SetInt64(i, fill(a.Shape().DType)) // (u8 and s8 wrap)
					}
				}
				got, want := evalAndRun(t, m, x, args)
				if !got.Equal(want) {
					t.Fatalf("the 8-bit GEMM and the evaluator differ (%d threads)\n%s", threads, text)
				}
			}
		}
	}
}

// An s32 constant operand (small weights minus their zero points, folded
// by the standard passes) splits back into 8-bit values minus zero
// points per column, or per tensor, when each column spans at most 255
// values, and runs on the 8-bit GEMM with the evaluator's result; a
// column spanning more keeps the dot off it.
func TestInt8DotSplitsConstants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		name   string
		col    func(j int) (lo, span int)
		fusion bool
	}{
		{"per column", func(j int) (int, int) { return 1000*j - 100, 256 }, true},
		{"per tensor", func(int) (int, int) { return -300, 256 }, true},
		{"s8", func(int) (int, int) { return -128, 256 }, true},
		{"too wide", func(j int) (int, int) { return -150, 256 + j }, false},
	} {
		const k, n = 45, 13
		var b strings.Builder
		fmt.Fprintf(&b, "HloModule split\nENTRY e {\n  p0 = u8[9,%d] parameter(0)\n  a = s32[9,%d] convert(p0)\n  w = s32[%d,%d] constant({", k, k, k, n)
		for range k {
			b.WriteString("{")
			for j := range n {
				lo, span := c.col(j)
				fmt.Fprintf(&b, "%d,", lo+rng.IntN(span))
			}
			b.WriteString("},")
		}
		fmt.Fprintf(&b, "})\n  ROOT d = s32[9,%d] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n", n)
		text := strings.ReplaceAll(strings.ReplaceAll(b.String(), ",}", "}"), "},})", "}})")
		t.Run(c.name, func(t *testing.T) {
			want := "gemm-int8"
			if !c.fusion {
				want = "dot"
			}
			checkInt8Dot(t, text, func(hlo.DType) int64 { return int64(rng.IntN(256)) }, 2, want)
		})
	}
}
