package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Gather, scatter and the generic dot against the evaluator: the shared
// conformance cases' instructions, then random cases aimed at clamping,
// duplicates, out-of-bounds windows, batching dimensions and in-place runs.

// combiner is a scalar to_apply computation named op_t (root op of the
// parameters, or the update parameter for "overwrite").
func combiner(op string, t hlo.DType) string {
	root := fmt.Sprintf("%s[] %s(a, b)", t, op)
	if op == "overwrite" {
		root = fmt.Sprintf("%s[] parameter(1)", t)
		return fmt.Sprintf("%s_%s {\n  a = %s[] parameter(0)\n  ROOT b = %s\n}", op, t, t, root)
	}
	return fmt.Sprintf("%s_%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s\n}", op, t, t, t, root)
}

// setIndices fills an indices literal with values in [lo, hi).
func setIndices(l *hlo.Literal, rng *rand.Rand, lo, hi int) {
	for i := range l.Len() {
		l.SetInt64(i, int64(lo+rng.IntN(hi-lo)))
	}
}

// closeDot compares f64 dot results within 1e-12 relative to the
// largest result (GEMM sums in another order, and an element that
// cancels to near zero has no relative accuracy); others exactly.
func closeDot(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	if in.Opcode != hlo.OpDot || in.Shape.DType != hlo.F64 {
		checkExact(t, in, got, want)
		return
	}
	scale := 0.0
	for i := range want.Len() {
		scale = math.Max(scale, math.Abs(want.GetFloat64(i)))
	}
	for i := range got.Len() {
		x, y := got.GetFloat64(i), want.GetFloat64(i)
		if x != y && !(x != x && y != y) && !(math.Abs(x-y) <= 1e-12*scale) {
			t.Fatalf("%s: element %d is %v, want %v", in, i, x, y)
		}
	}
}

// conformanceLowerers are the kernels under test, by opcode.
var conformanceLowerers = map[hlo.Opcode]lowerFunc{
	hlo.OpGather: lowerGather, hlo.OpScatter: lowerScatter, hlo.OpDot: lowerDotGeneric,
}

// TestGatherScatterDotGenericConformance runs every gather, scatter and
// dot of the shared cases' entry computations through its kernel (where
// it lowers), with operand values from the evaluator.
func TestGatherScatterDotGenericConformance(t *testing.T) {
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	lowered, declined := map[hlo.Opcode]int{}, map[hlo.Opcode]int{}
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil || !(strings.Contains(c.HLO, "gather(") || strings.Contains(c.HLO, "scatter(") ||
			strings.Contains(c.HLO, " dot(")) {
			continue
		}
		conformanceCase(t, c, lowered, declined)
	}
	for op := range conformanceLowerers {
		t.Logf("%s: %d instructions compiled, %d declined", op, lowered[op], declined[op])
	}
}

func conformanceCase(t *testing.T, c *conformance.Case, lowered, declined map[hlo.Opcode]int) {
	t.Helper()
	evalCaseSteps(c, func(in *hlo.Instruction, ops []*hlo.Literal, want *hlo.Literal) {
		lower := conformanceLowerers[in.Opcode]
		if lower == nil {
			return
		}
		k, ok := lower(in, 2)
		if !ok {
			declined[in.Opcode]++
			t.Logf("declined %s: %s %s", filepath.Base(c.Path), in.Opcode, in.Shape)
			return
		}
		lowered[in.Opcode]++
		got := poisoned(in.Shape)
		if err := k(got, ops); err != nil {
			t.Fatalf("%s: %s: %v", c.Path, in, err)
		}
		closeDot(t, in, got, want)
	})
}

// runBoth runs root (over parameters of the given shapes) on the kernel
// and the evaluator with the given operands.
func runBoth(t *testing.T, lower lowerFunc, params []string, root string, comps []string, ops func(in *hlo.Instruction) []*hlo.Literal, threads int) {
	t.Helper()
	in := parseRoot(t, module(params, root, comps...))
	got, want := runKernel(t, lower, in, ops(in), threads)
	closeDot(t, in, got, want)
}

func TestLowerGatherEmbedding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, it := range []hlo.DType{hlo.S32, hlo.S64, hlo.U32, hlo.U8} {
		for threads := 1; threads <= 3; threads++ {
			runBoth(t, lowerGather, []string{"f32[1000,64]", fmt.Sprintf("%s[300]", it)},
				"f32[300,64] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}",
				nil, func(in *hlo.Instruction) []*hlo.Literal {
					ops := randomOperands(in, rng)
					lo, hi := -50, 1100
					if it.IsUnsigned() {
						lo = 0
					}
					if it == hlo.U8 {
						hi = 256
					}
					setIndices(ops[1], rng, lo, hi)
					return ops
				}, threads)
		}
	}
}

// gatherCases cover index_vector_dim positions, partial slices, batching
// dimensions and every storage width.
var gatherCases = []struct{ params, root string }{
	{"%[1]s[2,5,3] s32[2,4,1]", "%[1]s[2,4,3] gather(p0, p1), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}"},
	{"%[1]s[3,4,5] s32[4,3,1]", "%[1]s[4,3,3] gather(p0, p1), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={1}, index_vector_dim=2, slice_sizes={1,1,3}"},
	{"%[1]s[6,7,5] s32[2,9]", "%[1]s[9,3,4] gather(p0, p1), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,2}, index_vector_dim=0, slice_sizes={1,3,4}"},
	{"%[1]s[6,7] s64[5,2]", "%[1]s[5] gather(p0, p1), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}"},
	{"%[1]s[6,7] s32[4]", "%[1]s[2,4,7] gather(p0, p1), offset_dims={0,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,7}"},
	{"%[1]s[8,9] u32[3,2]", "%[1]s[3,3,9] gather(p0, p1), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={3,9}"},
}

func TestLowerGatherRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range gatherCases {
		for _, dt := range moveTypes {
			for range 5 {
				params := strings.Fields(fmt.Sprintf(c.params, dt))
				runBoth(t, lowerGather, params, fmt.Sprintf(c.root, dt), nil, func(in *hlo.Instruction) []*hlo.Literal {
					ops := randomOperands(in, rng)
					setIndices(ops[1], rng, 0, 12) // unsigned types too: clamping at the top
					if !in.Operands[1].Shape.DType.IsUnsigned() {
						setIndices(ops[1], rng, -3, 12)
					}
					return ops
				}, 1+rng.IntN(3))
			}
		}
	}
}

// scatterCases: duplicate rows, windows partly out of bounds (skipped),
// batching dimensions, scalar updates.
var scatterCases = []struct{ params, root string }{
	{"%[1]s[10,8] s32[50,1] %[1]s[50,8]", "%[1]s[10,8] scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%[2]s"},
	{"%[1]s[6,6] s32[7,2] %[1]s[7,3,3]", "%[1]s[6,6] scatter(p0, p1, p2), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=%[2]s"},
	{"%[1]s[5,6] s64[2,9] %[1]s[9]", "%[1]s[5,6] scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=0, to_apply=%[2]s"},
	{"%[1]s[2,5,3] s32[2,4] %[1]s[2,4,3]", "%[1]s[2,5,3] scatter(p0, p1, p2), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=%[2]s"},
}

func TestLowerScatterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	types := []hlo.DType{hlo.F32, hlo.F64, hlo.S32, hlo.S64, hlo.U8, hlo.BF16, hlo.Pred, hlo.C128}
	for _, c := range scatterCases {
		for _, dt := range types {
			for _, op := range []string{"overwrite", "add", "multiply", "maximum", "minimum"} {
				arithmetic := op != "overwrite"
				if arithmetic && (dt == hlo.BF16 || dt == hlo.Pred || dt == hlo.C128) {
					continue
				}
				name := op + "_" + dt.String()
				params := strings.Fields(fmt.Sprintf(c.params, dt))
				for range 4 {
					runBoth(t, lowerScatter, params, fmt.Sprintf(c.root, dt, name), []string{combiner(op, dt)},
						func(in *hlo.Instruction) []*hlo.Literal {
							ops := randomOperands(in, rng)
							setIndices(ops[1], rng, -2, 8)
							return ops
						}, 1)
				}
			}
		}
	}
}

func TestLowerScatterDeclines(t *testing.T) {
	for _, op := range []string{"add", "multiply"} {
		in := parseRoot(t, module([]string{"bf16[4]", "s32[3,1]", "bf16[3]"},
			"bf16[4] scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply="+op+"_bf16",
			combiner(op, hlo.BF16)))
		if _, ok := lowerScatter(in, 1); ok {
			t.Errorf("bf16 %s scatter lowered; its rounding is the evaluator's", op)
		}
	}
}

// TestLowerScatterInPlace runs with out being operand 0's literal.
func TestLowerScatterInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, op := range []string{"overwrite", "add"} {
		in := parseRoot(t, module([]string{"f32[10,8]", "s32[50,1]", "f32[50,8]"},
			fmt.Sprintf(scatterCases[0].root, hlo.F32, op+"_f32"), combiner(op, hlo.F32)))
		ops := randomOperands(in, rng)
		setIndices(ops[1], rng, -1, 11)
		var ev eval.Evaluator
		want, err := ev.Instruction(in, ops)
		if err != nil {
			t.Fatal(err)
		}
		k, ok := lowerScatter(in, 2)
		if !ok || scatterInPlace(in)[0] != 0 {
			t.Fatalf("%s: no in-place kernel", in)
		}
		if err := k(ops[0], ops); err != nil {
			t.Fatal(err)
		}
		checkExact(t, in, ops[0], want)
	}
}

// dotCases: GEMM shapes (transposed, batched, vector), and shapes only
// the loop takes (batch dims not leading, several contracting dims).
var dotCases = []struct{ params, root string }{
	{"%[1]s[7,5] %[1]s[5,9]", "%[2]s[7,9] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
	{"%[1]s[5,7] %[1]s[9,5]", "%[2]s[7,9] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
	{"%[1]s[3,7,5] %[1]s[3,5,9]", "%[2]s[3,7,9] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"},
	{"%[1]s[5] %[1]s[5,9]", "%[2]s[9] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
	{"%[1]s[7,3,5] %[1]s[5,9,3]", "%[2]s[3,7,9] dot(p0, p1), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}"},
	{"%[1]s[4,3,5] %[1]s[5,6,3]", "%[2]s[4,6] dot(p0, p1), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,0}"},
	{"%[1]s[4,0] %[1]s[0,6]", "%[2]s[4,6] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
	{"%[1]s[70,130] %[1]s[130,90]", "%[2]s[70,90] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
}

func TestLowerDotGenericRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pairs := [][2]hlo.DType{{hlo.F64, hlo.F64}, {hlo.S32, hlo.S32}, {hlo.S8, hlo.S32}, {hlo.U8, hlo.U32},
		{hlo.S64, hlo.S64}, {hlo.S16, hlo.S16}, {hlo.U8, hlo.S8}, {hlo.F32, hlo.F32}, {hlo.BF16, hlo.BF16}, {hlo.F16, hlo.F32}}
	for _, c := range dotCases {
		for _, p := range pairs {
			params := strings.Fields(fmt.Sprintf(c.params, p[0]))
			runBoth(t, lowerDotGeneric, params, fmt.Sprintf(c.root, p[0], p[1]), nil,
				func(in *hlo.Instruction) []*hlo.Literal { return randomOperands(in, rng) }, 1+rng.IntN(3))
		}
	}
	for _, dt := range []hlo.DType{hlo.C64} { // complex dots are lowerDotComplex's
		in := parseRoot(t, module(strings.Fields(fmt.Sprintf(dotCases[0].params, dt)), fmt.Sprintf(dotCases[0].root, dt, dt)))
		if _, ok := lowerDotGeneric(in, 1); ok {
			t.Errorf("%s dot lowered by the generic kernel", dt)
		}
	}
}

// BenchmarkGatherEmbedding gathers 4096 rows of a f32[50000,128] table.
func BenchmarkGatherEmbedding(b *testing.B) {
	text := module([]string{"f32[50000,128]", "s32[4096]"},
		"f32[4096,128] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}")
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	in := m.Entry.Root
	rng := rand.New(rand.NewPCG(1, 1))
	ops := randomOperands(in, rng)
	setIndices(ops[1], rng, 0, 50000)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("kernel-threads=%d", threads), func(b *testing.B) {
			k, ok := lowerGather(in, threads)
			if !ok {
				b.Fatal("no kernel")
			}
			out := hlo.NewLiteral(in.Shape)
			b.SetBytes(int64(len(bytesOf(out))))
			for b.Loop() {
				if err := k(out, ops); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("evaluator", func(b *testing.B) {
		var ev eval.Evaluator
		b.SetBytes(4096 * 128 * 4)
		for b.Loop() {
			if _, err := ev.Instruction(in, ops); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDotGeneric multiplies 256×256 matrices on the f64 GEMM and the
// s32 loop.
func BenchmarkDotGeneric(b *testing.B) {
	for _, dt := range []hlo.DType{hlo.F64, hlo.S32} {
		text := module([]string{dt.String() + "[256,256]", dt.String() + "[256,256]"},
			dt.String()+"[256,256] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}")
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			b.Fatal(err)
		}
		in := m.Entry.Root
		ops := randomOperands(in, rand.New(rand.NewPCG(1, 1)))
		b.Run(dt.String()+"/kernel", func(b *testing.B) {
			k, ok := lowerDotGeneric(in, 1)
			if !ok {
				b.Fatal("no kernel")
			}
			out := hlo.NewLiteral(in.Shape)
			for b.Loop() {
				if err := k(out, ops); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(dt.String()+"/evaluator", func(b *testing.B) {
			var ev eval.Evaluator
			for b.Loop() {
				if _, err := ev.Instruction(in, ops); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
