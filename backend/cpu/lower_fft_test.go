package cpu

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// The fft kernel against the evaluator: every fft of the shared cases,
// random shapes, types, lengths (radix 2/3/4, direct primes, Bluestein,
// 0 and 1) and operand layouts, batches big enough to run on several
// workers, and the shapes it must refuse.

// closeFFT compares an fft result with the evaluator's. The evaluator
// sums a direct DFT in complex128; the kernel runs an FFT in the element
// type's precision, whose error grows like log2(N)·eps of the largest
// magnitude (N the product of the transform lengths), so each element
// may differ by 4·(log2(N)+2)·eps·max|want| (eps 2^-24 for c64/f32,
// 2^-53 for c128/f64). Measured errors stay below a fifth of that.
func closeFFT(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	if msg := fftMismatch(in, got, want); msg != "" {
		t.Fatal(msg)
	}
}

func fftMismatch(in *hlo.Instruction, got, want *hlo.Literal) string {
	if got.Len() != want.Len() {
		return fmt.Sprintf("%s: %d elements, want %d", in, got.Len(), want.Len())
	}
	lens, _ := in.Ints("fft_length")
	n := 1.0
	for _, l := range lens {
		n *= float64(l)
	}
	eps := 0x1p-53
	if d := in.Shape.DType; d == hlo.C64 || d == hlo.F32 {
		eps = 0x1p-24
	}
	scale := 0.0
	for i := range want.Len() {
		scale = math.Max(scale, cmplx.Abs(want.GetComplex128(i)))
	}
	tol := 4 * (math.Log2(math.Max(n, 2)) + 2) * eps * scale
	for i := range got.Len() {
		x, y := got.GetComplex128(i), want.GetComplex128(i)
		if d := cmplx.Abs(x - y); !(d <= tol) {
			return fmt.Sprintf("%s: element %d is %v, want %v (error %.3g, tolerance %.3g)", in, i, x, y, d, tol)
		}
	}
	return ""
}

// TestFFTConformance runs every fft of the shared cases' entry
// computations through the kernel, with operands from the evaluator, and
// requires all of them to compile.
func TestFFTConformance(t *testing.T) {
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	lowered := 0
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil || !strings.Contains(c.HLO, " fft(") {
			continue
		}
		lowered += fftConformanceCase(t, c)
	}
	if lowered < 18 {
		t.Errorf("%d fft instructions compiled, want all 18", lowered)
	}
	t.Logf("%d fft instructions compiled", lowered)
}

func fftConformanceCase(t *testing.T, c *conformance.Case) (lowered int) {
	t.Helper()
	err := evalCaseSteps(c, func(in *hlo.Instruction, ops []*hlo.Literal, want *hlo.Literal) {
		if in.Opcode != hlo.OpFft {
			return
		}
		for _, threads := range []int{1, 2} {
			k, ok := lowerFFT(in, threads)
			if !ok {
				t.Fatalf("%s: declined %s", filepath.Base(c.Path), in)
			}
			got := poisoned(in.Shape)
			if err := k(got, ops); err != nil {
				t.Fatalf("%s: %s: %v", c.Path, in, err)
			}
			closeFFT(t, in, got, want)
		}
		lowered++
	})
	if err != nil {
		t.Fatalf("%s: %v", c.Path, err)
	}
	return lowered
}

// fftCase draws one fft instruction of type typ over complex type ct: a
// few leading (batch) dimensions, 1-3 transformed ones, and sometimes a
// permuted operand layout (literals are row-major whatever the layout).
func fftCase(rng *rand.Rand, typ string, ct hlo.DType) (params []string, root string) {
	r := 1 + rng.IntN(3)
	lead := randDims(rng, rng.IntN(3))
	lengths := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 16, 17, 24, 32, 67}
	lens := make([]int64, r)
	for i := range lens {
		lens[i] = lengths[1+rng.IntN(len(lengths)-1)]
		if rng.IntN(25) == 0 {
			lens[i] = 0
		}
	}
	inDims := append(append([]int64(nil), lead...), lens...)
	outDims := append([]int64(nil), inDims...)
	inT, outT := ct, ct
	last, l := len(inDims)-1, lens[r-1]
	half := int64(0)
	if l != 0 {
		half = l/2 + 1
	}
	switch typ {
	case "RFFT":
		inT = ct.ComplexComponent()
		outDims[last] = half
	case "IRFFT":
		outT = ct.ComplexComponent()
		inDims[last] = half
	}
	p, o := shapeText(inT, inDims), shapeText(outT, outDims)
	if rng.IntN(2) == 0 {
		p += intsText(permutation(rng, len(inDims)))
	}
	if rng.IntN(4) == 0 {
		o += intsText(permutation(rng, len(outDims)))
	}
	return []string{p}, fmt.Sprintf("%s fft(p0), fft_type=%s, fft_length=%s", o, typ, intsText(lens))
}

func permutation(rng *rand.Rand, n int) []int64 {
	p := make([]int64, n)
	for i, j := range rng.Perm(n) {
		p[i] = int64(j)
	}
	return p
}

// TestFFTRandom checks random instructions of every fft_type and element
// type, on one worker and two.
func TestFFTRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, typ := range []string{"FFT", "IFFT", "RFFT", "IRFFT"} {
		for _, ct := range []hlo.DType{hlo.C64, hlo.C128} {
			for range 25 {
				params, root := fftCase(rng, typ, ct)
				in := parseRoot(t, module(params, root))
				ops := randomOperands(in, rng)
				got, want := runKernel(t, lowerFFT, in, ops, 1+rng.IntN(2))
				closeFFT(t, in, got, want)
			}
		}
	}
}

// TestFFTHandWorked: x = (1, 2, 3, 4) has the spectrum (10, -2+2i, -2,
// -2-2i); IRFFT ignores the imaginary parts of X_0 and X_2 (they multiply
// sin 0 and sin πj), and IFFT divides by 4.
func TestFFTHandWorked(t *testing.T) {
	for _, c := range []struct {
		param, root string
		in          any
		want        []complex128
	}{
		{"f32[4]", "c64[3] fft(p0), fft_type=RFFT, fft_length={4}", []float32{1, 2, 3, 4}, []complex128{10, -2 + 2i, -2}},
		{"f64[4]", "c128[3] fft(p0), fft_type=RFFT, fft_length={4}", []float64{1, 2, 3, 4}, []complex128{10, -2 + 2i, -2}},
		{"c64[3]", "f32[4] fft(p0), fft_type=IRFFT, fft_length={4}", []complex64{10 + 5i, -2 + 2i, -2 + 7i}, []complex128{1, 2, 3, 4}},
		{"c128[4]", "c128[4] fft(p0), fft_type=FFT, fft_length={4}", []complex128{1, 2, 3, 4}, []complex128{10, -2 + 2i, -2, -2 - 2i}},
		{"c64[4]", "c64[4] fft(p0), fft_type=IFFT, fft_length={4}", []complex64{10, -2 + 2i, -2, -2 - 2i}, []complex128{1, 2, 3, 4}},
	} {
		in := parseRoot(t, module([]string{c.param}, c.root))
		x := hlo.NewLiteral(in.Operands[0].Shape)
		switch v := c.in.(type) {
		case []float32:
			copy(x.Data().([]float32), v)
		case []float64:
			copy(x.Data().([]float64), v)
		case []complex64:
			copy(x.Data().([]complex64), v)
		case []complex128:
			copy(x.Data().([]complex128), v)
		}
		got, _ := runKernel(t, lowerFFT, in, []*hlo.Literal{x}, 1)
		for i, w := range c.want {
			if g := got.GetComplex128(i); cmplx.Abs(g-w) > 1e-6 {
				t.Errorf("%s: element %d is %v, want %v", in, i, g, w)
			}
		}
	}
}

// TestFFTLarge runs batches big enough to be split across workers, and
// long rows of lengths that need Bluestein and mixed radices.
func TestFFTLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for _, text := range []string{
		module([]string{"c64[64,256]"}, "c64[64,256] fft(p0), fft_type=FFT, fft_length={256}"),
		module([]string{"c128[96,96]{0,1}"}, "c128[96,96] fft(p0), fft_type=IFFT, fft_length={96,96}"),
		module([]string{"c64[8,1009]"}, "c64[8,1009] fft(p0), fft_type=FFT, fft_length={1009}"),
		module([]string{"f32[16,1000]"}, "c64[16,501] fft(p0), fft_type=RFFT, fft_length={1000}"),
		module([]string{"f64[6,999]"}, "c128[6,500] fft(p0), fft_type=RFFT, fft_length={999}"),
		module([]string{"c128[6,500]"}, "f64[6,999] fft(p0), fft_type=IRFFT, fft_length={999}"),
		module([]string{"c64[4,64,65]"}, "f32[4,64,128] fft(p0), fft_type=IRFFT, fft_length={64,128}"),
		module([]string{"c128[3,30,21,10]"}, "c128[3,30,21,10] fft(p0), fft_type=FFT, fft_length={30,21,10}"),
	} {
		in := parseRoot(t, text)
		ops := randomOperands(in, rng)
		for _, threads := range []int{1, 2, 3} {
			got, want := runKernel(t, lowerFFT, in, ops, threads)
			closeFFT(t, in, got, want)
		}
	}
}

// TestFFTExecuteConcurrently compiles a module whose fft runs on the
// workers and needs a temporary (a 2-D IRFFT), and executes it from many
// goroutines at once (run with -race): scratch is per call.
func TestFFTExecuteConcurrently(t *testing.T) {
	m, x := compileText(t, module([]string{"c64[8,32,33]"},
		"f32[8,32,64] fft(p0), fft_type=IRFFT, fft_length={32,64}"), Options{Threads: 2})
	if x.Lowering["fft"] != 1 {
		t.Fatalf("lowering %v, want the fft compiled", x.Lowering)
	}
	args := eval.RandomArguments(m, 5)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	executeConcurrently(t, x, args, func(got *hlo.Literal) string { return fftMismatch(m.Entry.Root, got, want) })
}

// TestFFTDeclines: shapes that do not fit the attributes, and types the
// transform does not take, are left to the evaluator's error.
func TestFFTDeclines(t *testing.T) {
	for _, c := range []struct{ param, root string }{
		{"f32[8]", "c64[4] fft(p0), fft_type=RFFT, fft_length={8}"},
		{"f32[6]", "c64[5] fft(p0), fft_type=RFFT, fft_length={8}"},
		{"c64[5]", "f32[9] fft(p0), fft_type=IRFFT, fft_length={8}"},
		{"c64[8]", "c128[8] fft(p0), fft_type=FFT, fft_length={8}"},
		{"f32[8]", "f32[8] fft(p0), fft_type=FFT, fft_length={8}"},
		{"c64[2,2,2,2]", "c64[2,2,2,2] fft(p0), fft_type=FFT, fft_length={2,2,2,2}"},
	} {
		in := parseRoot(t, module([]string{c.param}, c.root))
		if _, ok := lowerFFT(in, 1); ok {
			t.Errorf("%s: compiled, want declined", in)
		}
	}
}

// TestFFTRunErrors: an operand that is not the compiled one is an error.
func TestFFTRunErrors(t *testing.T) {
	in := parseRoot(t, module([]string{"c64[8]"}, "c64[8] fft(p0), fft_type=FFT, fft_length={8}"))
	k, ok := lowerFFT(in, 1)
	if !ok {
		t.Fatal("no kernel")
	}
	for _, s := range []string{"c128[8]", "c64[4]", "f32[16]"} {
		sh, err := hlotext.ParseShape(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := k(hlo.NewLiteral(in.Shape), []*hlo.Literal{hlo.NewLiteral(sh)}); err == nil {
			t.Errorf("operand %s: no error", s)
		}
	}
}

// BenchmarkFFT: batched 1-D rows and a 2-D transform, c64, against the
// evaluator's direct DFT.
func BenchmarkFFT(b *testing.B) {
	for _, text := range []string{
		module([]string{"c64[64,1024]"}, "c64[64,1024] fft(p0), fft_type=FFT, fft_length={1024}"),
		module([]string{"c64[256,256]"}, "c64[256,256] fft(p0), fft_type=FFT, fft_length={256,256}"),
	} {
		in := parseRootB(b, text)
		b.Run(in.Shape.String(), func(b *testing.B) { benchKernel(b, lowerFFT, in, int64(16*in.Shape.NumElements())) })
	}
}
