package axle_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
)

// GPU library calls (cuBLAS, cuDNN custom calls) run on both backends as
// the HLO they stand for (opt.GPULibraryCalls, run by every compile).

// runGPU compiles text on backend and runs it on args.
func runGPU(t *testing.T, backend, text string, args []*hlo.Literal) []*hlo.Literal {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{File: "gpu.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	return runModule(t, backend, m, args)
}

func runModule(t *testing.T, backend string, m *hlo.Module, args []*hlo.Literal) []*hlo.Literal {
	t.Helper()
	c := newClient(t, backend)
	x, err := c.Compile(m, axle.CompileOptions{})
	if err != nil {
		t.Fatalf("%s: %v", backend, err)
	}
	out, err := x.ExecuteLiterals(args...)
	if err != nil {
		t.Fatalf("%s: %v", backend, err)
	}
	return out
}

// lit makes an array literal of shape s (HLO text) from values.
func lit(t *testing.T, s string, v ...float64) *hlo.Literal {
	t.Helper()
	sh, err := hlotext.ParseShape(s)
	if err != nil {
		t.Fatal(err)
	}
	l := hlo.NewLiteral(sh)
	if int(sh.NumElements()) != len(v) {
		t.Fatalf("%s takes %d values, got %d", s, sh.NumElements(), len(v))
	}
	for i, x := range v {
		l.SetFloat64(i, x)
	}
	return l
}

func wantValues(t *testing.T, what string, got *hlo.Literal, want []float64, tol float64) {
	t.Helper()
	if got.Shape().NumElements() != int64(len(want)) {
		t.Fatalf("%s: %s, want %d values", what, got.Shape().HumanString(), len(want))
	}
	for i, w := range want {
		if g := got.GetFloat64(i); math.Abs(g-w) > tol*(1+math.Abs(w)) {
			t.Errorf("%s: element %d = %v, want %v", what, i, g, w)
		}
	}
}

// geluTanh is the definition of the tanh-approximated GELU.
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func gemmText(target, shape, operands, config string) string {
	return fmt.Sprintf(`HloModule g
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  c = f32[2,2] parameter(2)
  bias = f32[2] parameter(3)
  ROOT g = %s custom-call(%s), custom_call_target="%s", backend_config={"gemm_backend_config":{"alpha_real":%s,"alpha_imag":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"precision_config":{"operand_precision":["DEFAULT","DEFAULT"]}}}
}
`, shape, operands, target, config)
}

// TestGemmEpilogues: hand-worked 2×2 GEMMs, A=[[1,2],[3,4]],
// B=[[1,-1],[2,0]], AB=[[5,-1],[11,-3]], C=[[2,4],[6,8]], bias=[1,-2],
// through every epilogue and alpha/beta, on both backends.
func TestGemmEpilogues(t *testing.T) {
	ab := []float64{5, -1, 11, -3}
	biased := []float64{6, -3, 12, -5}
	relu := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = max(x, 0)
		}
		return out
	}
	gelu := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = geluTanh(x)
		}
		return out
	}
	cases := []struct {
		name, target, shape, operands, config string
		want                                  [][]float64 // per tuple element (nil: zeros)
	}{
		{"alpha", "__cublas$gemm", "f32[2,2]", "a, b", `2,"beta":0,"epilogue":"DEFAULT"`, [][]float64{{10, -2, 22, -6}}},
		{"beta", "__cublas$gemm", "f32[2,2]", "a, b, c", `1,"beta":0.5,"epilogue":"DEFAULT"`, [][]float64{{6, 1, 14, 1}}},
		{"alpha beta", "__cublas$lt$matmul", "f32[2,2]", "a, b, c", `-1,"beta":2,"epilogue":"DEFAULT"`, [][]float64{{-1, 9, 1, 19}}},
		{"workspace", "__cublas$gemm", "(f32[2,2], s8[64])", "a, b", `1,"beta":0,"epilogue":"DEFAULT"`, [][]float64{ab, nil}},
		{"bias", "__cublas$lt$matmul", "(f32[2,2], s8[8])", "a, b, bias", `1,"beta":0,"epilogue":"BIAS"`, [][]float64{biased, nil}},
		{"relu", "__cublas$lt$matmul", "f32[2,2]", "a, b", `1,"beta":0,"epilogue":"RELU"`, [][]float64{relu(ab)}},
		{"bias relu", "__cublas$lt$matmul", "f32[2,2]", "a, b, bias", `1,"beta":0,"epilogue":"BIAS_RELU"`, [][]float64{relu(biased)}},
		{"gelu", "__cublas$lt$matmul", "f32[2,2]", "a, b", `1,"beta":0,"epilogue":"GELU"`, [][]float64{gelu(ab)}},
		{"bias gelu", "__cublas$lt$matmul", "f32[2,2]", "a, b, bias", `1,"beta":0,"epilogue":"BIAS_GELU"`, [][]float64{gelu(biased)}},
		{"gelu aux", "__cublas$lt$matmul", "(f32[2,2], f32[2,2], s8[4])", "a, b", `1,"beta":0,"epilogue":"GELU_AUX"`, [][]float64{gelu(ab), ab, nil}},
		{"bias gelu aux", "__cublas$lt$matmul", "(f32[2,2], f32[2,2], s8[4])", "a, b, bias", `1,"beta":0,"epilogue":"BIAS_GELU_AUX"`, [][]float64{gelu(biased), biased, nil}},
		{"C and bias", "__cublas$lt$matmul", "f32[2,2]", "a, b, c, bias", `1,"beta":1,"epilogue":"BIAS_RELU"`, [][]float64{{8, 1, 18, 3}}},
	}
	args := []*hlo.Literal{lit(t, "f32[2,2]", 1, 2, 3, 4), lit(t, "f32[2,2]", 1, -1, 2, 0), lit(t, "f32[2,2]", 2, 4, 6, 8), lit(t, "f32[2]", 1, -2)}
	for _, c := range cases {
		for _, backend := range []string{"interp", "cpu"} {
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				out := runGPU(t, backend, gemmText(c.target, c.shape, c.operands, c.config), args)
				if len(out) != len(c.want) {
					t.Fatalf("%d results, want %d", len(out), len(c.want))
				}
				for i, w := range c.want {
					if w == nil {
						w = make([]float64, out[i].Shape().NumElements())
					}
					wantValues(t, fmt.Sprintf("result %d", i), out[i], w, 1e-6)
				}
			})
		}
	}
}

// TestGemmF8: the f8 call scales A and B by their scales and the result by
// D's, and saturates to f8e4m3fn's largest finite value, 448. With scales
// 2, 3 and d_scale 8: 48·AB = [[240,-48],[528→448,-144]], all exact in
// f8e4m3fn.
func TestGemmF8(t *testing.T) {
	const text = `HloModule f8
ENTRY e {
  a = f8e4m3fn[2,2] parameter(0)
  b = f8e4m3fn[2,2] parameter(1)
  sa = f32[] constant(2)
  sb = f32[] constant(3)
  one = f32[] constant(1)
  sd = f32[] constant(8)
  ROOT g = (f8e4m3fn[2,2], s8[16]) custom-call(a, b, sa, sb, one, sd), custom_call_target="__cublas$lt$matmul$f8", backend_config={"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}
}
`
	args := []*hlo.Literal{lit(t, "f8e4m3fn[2,2]", 1, 2, 3, 4), lit(t, "f8e4m3fn[2,2]", 1, -1, 2, 0)}
	// With damax_output the call also returns max|6·AB| = 66, taken before
	// D's scale.
	damax := strings.NewReplacer("(f8e4m3fn[2,2], s8[16])", "(f8e4m3fn[2,2], f32[], s8[16])", `"epilogue"`, `"damax_output":true,"epilogue"`).Replace(text)
	for _, backend := range []string{"interp", "cpu"} {
		out := runGPU(t, backend, text, args)
		wantValues(t, backend, out[0], []float64{240, -48, 448, -144}, 0)
		out = runGPU(t, backend, damax, args)
		wantValues(t, backend+" damax", out[0], []float64{240, -48, 448, -144}, 0)
		wantValues(t, backend+" damax", out[1], []float64{66}, 0)
	}
}

// TestGemmBatched: batch dimensions from the config's
// dot_dimension_numbers, checked against the evaluator's plain dot.
func TestGemmBatched(t *testing.T) {
	const gpu = `HloModule b
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[3,5,4] parameter(1)
  ROOT g = f32[3,2,5] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config="{\"alpha_real\":1.5,\"beta\":0,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"2\"],\"rhs_contracting_dimensions\":[\"2\"],\"lhs_batch_dimensions\":[\"0\"],\"rhs_batch_dimensions\":[\"0\"]},\"epilogue\":\"DEFAULT\"}"
}
`
	const plain = `HloModule b
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[3,5,4] parameter(1)
  d = f32[3,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  s = f32[] constant(1.5)
  sb = f32[3,2,5] broadcast(s), dimensions={}
  ROOT r = f32[3,2,5] multiply(d, sb)
}
`
	compareWithPlain(t, gpu, plain, 1e-5)
}

// compareWithPlain runs gpu on both backends and plain on the evaluator
// over the same seeded arguments.
func compareWithPlain(t *testing.T, gpu, plain string, tol float64) {
	t.Helper()
	pm, err := hlotext.Parse(plain, hlotext.Options{File: "plain.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(pm, 1)
	want, err := eval.Run(pm, args...)
	if err != nil {
		t.Fatal(err)
	}
	wants := []*hlo.Literal{want}
	if want.Shape().IsTuple() {
		wants = want.Elements()
	}
	for _, backend := range []string{"interp", "cpu"} {
		got := runGPU(t, backend, gpu, args)
		for i := range wants {
			if err := conformance.Compare(got[i], wants[i], conformance.Tolerance{Atol: tol, Rtol: tol}); err != nil {
				t.Errorf("%s: %v", backend, err)
			}
		}
	}
}

// TestGPUCorpus: every corpus module with cuBLAS or cuDNN calls converts
// and verifies, and runs on both backends like the plain dot written in
// place of each call (the calls in the corpus are all DEFAULT GEMMs with
// alpha 1, beta 0, contracting lhs 1 with rhs 0, checked here). Modules
// whose arrays pass a million elements run scaled down (their dimensions
// replaced by small ones): they still convert and verify at full size.
func TestGPUCorpus(t *testing.T) {
	root := "../shared/corpus/hlo"
	var files []string
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(path, ".hlo") {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), "__cublas") || strings.Contains(string(b), "__cudnn") {
				files = append(files, path)
			}
		}
		return nil
	})
	if len(files) == 0 {
		t.Skip("shared corpus not found")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for i, part := range strings.Split(string(b), "// -----") {
			if !strings.Contains(part, "__cublas") && !strings.Contains(part, "__cudnn") {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(f), i), func(t *testing.T) { gpuCorpusModule(t, f, part) })
		}
	}
}

var (
	gemmCall = regexp.MustCompile(`custom-call\(([^()]*)\),\s*custom_call_target="__cublas\$gemm",\s*backend_config=("(?:[^"\\]|\\.)*"|\{[^\n]*\})`)
	// scaleDims shrinks prefetch.hlo's large dimensions.
	scaleDims = strings.NewReplacer("16384", "48", "100000", "40", "1024", "32", "1000", "24")
)

func gpuCorpusModule(t *testing.T, file, text string) {
	m, err := hlotext.Parse(text, hlotext.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	conv := m.Clone()
	if _, err := opt.GPULibraryCalls.Run(conv); err != nil {
		t.Fatal(err)
	}
	if err := hlo.Verify(conv); err != nil {
		t.Fatal(err)
	}
	for _, c := range conv.Computations {
		for _, in := range c.Instructions {
			if opt.IsGPULibraryCall(in) {
				t.Fatalf("%s is left", in.Name)
			}
		}
	}
	if total := paramElements(m); total > 1<<20 {
		text = scaleDims.Replace(text)
		t.Logf("%d parameter elements: running with dimensions scaled down", total)
	}
	plain := gemmCall.ReplaceAllStringFunc(text, func(call string) string {
		sub := gemmCall.FindStringSubmatch(call)
		cfg := strings.ReplaceAll(sub[2], `\"`, `"`)
		for _, want := range []string{`"alpha_real":1,`, `"beta":0,`, `"lhs_contracting_dimensions":["1"]`, `"rhs_contracting_dimensions":["0"]`, `"lhs_batch_dimensions":[]`, `"epilogue":"DEFAULT"`} {
			if !strings.Contains(cfg, want) {
				t.Fatalf("the plain form written here assumes %s: %s", want, cfg)
			}
		}
		return "dot(" + sub[1] + "), lhs_contracting_dims={1}, rhs_contracting_dims={0}"
	})
	if strings.Contains(plain, "__cublas") || strings.Contains(plain, "__cudnn") {
		t.Fatal("a call has no plain form here")
	}
	pm, err := hlotext.Parse(plain, hlotext.Options{File: file + " (plain)"})
	if err != nil {
		t.Fatal(err)
	}
	gm, err := hlotext.Parse(text, hlotext.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	args := positiveArgs(pm)
	want, err := eval.Run(pm, args...)
	if err != nil {
		t.Fatal(err)
	}
	wants := want.Elements()
	if !want.Shape().IsTuple() {
		wants = []*hlo.Literal{want}
	}
	for _, backend := range []string{"interp", "cpu"} {
		got := runModule(t, backend, gm, args)
		tol := 1e-5
		if got[0].Shape().DType == hlo.F16 {
			tol = 1e-2
		}
		for i := range wants {
			if err := conformance.Compare(got[i], wants[i], conformance.Tolerance{Atol: tol, Rtol: tol}); err != nil {
				t.Errorf("%s: %v", backend, err)
			}
		}
	}
}

func paramElements(m *hlo.Module) int64 {
	n := int64(0)
	for _, p := range m.Entry.Params {
		n += p.Shape.NumElements()
	}
	return n
}

// positiveArgs are seeded arguments in [0.25, 1): the corpus modules take
// square roots of their GEMMs' results.
func positiveArgs(m *hlo.Module) []*hlo.Literal {
	rng := rand.New(rand.NewPCG(7, 7))
	args := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		l := hlo.NewLiteral(p.Shape)
		for j := range int(p.Shape.NumElements()) {
			l.SetFloat64(j, 0.25+0.75*rng.Float64())
		}
		args[i] = l
	}
	return args
}
