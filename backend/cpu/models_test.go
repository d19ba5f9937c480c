package cpu

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

const modelDir = "../../../shared/corpus/hlo/xla/backends/cpu/benchmarks/hlo"

// TestModelsInstructionByInstruction compiles every corpus model and
// checks every instruction the backend lowers to its own code (fusions,
// GEMMs, convolutions) against the evaluator, instruction by instruction,
// on the evaluator's values of its operands. The models run in bf16 with
// random weights, where whole-model outputs are chaotic (exponentials of
// large activations amplify a one-ulp rounding difference), so comparing
// each instruction on the same inputs is the meaningful check: the result
// may differ from the exactly rounded value by one bf16 rounding of an
// f32-accumulated sum.
func TestModelsInstructionByInstruction(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(modelDir, "*.hlo"))
	if len(files) == 0 {
		t.Skip("corpus not found: clone with ../shared beside the repository")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := hlotext.Parse(string(text), hlotext.Options{File: f})
			if err != nil {
				t.Fatal(err)
			}
			args := eval.RandomArguments(m, 1)
			x, err := Compile(m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("lowering: %v", x.Lowering)
			mem := x.Memory()
			t.Logf("memory: arena %d bytes, intermediates %d bytes, %d in place", mem.Peak, mem.Intermediates, mem.InPlace)
			if mem.Peak >= mem.Intermediates {
				t.Errorf("buffer assignment saves nothing: arena %d bytes, intermediates %d", mem.Peak, mem.Intermediates)
			}
			checkInstructions(t, x, args)
		})
	}
}

func checkInstructions(t *testing.T, x *Executable, args []*hlo.Literal) {
	var ev eval.Evaluator
	vals := make([]*hlo.Literal, len(x.steps))
	for i, s := range x.steps {
		in := s.in
		if in.Opcode == hlo.OpParameter {
			vals[i] = args[in.ParamNumber]
			continue
		}
		ops := make([]*hlo.Literal, len(s.ops))
		for k, j := range s.ops {
			ops[k] = vals[j]
		}
		want, err := ev.Instruction(in, ops)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = want
		if s.k == nil || s.how == "evaluator" {
			continue
		}
		got, err := s.k(&runState{}, garbage(in.Shape), ops)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		if err := closeEnough(got, want); err != "" {
			t.Errorf("%s (%s %s): %s", in.Name, in.Opcode, in.Shape.HumanString(), err)
		}
	}
}

// garbage is an output buffer full of NaN bytes, as a reused arena
// buffer may be: a kernel must overwrite all of it.
func garbage(s hlo.Shape) *hlo.Literal {
	if arrayBytes(s) < 0 {
		return nil
	}
	mem := alignedBytes(arrayBytes(s))
	for i := range mem {
		mem[i] = 0xff
	}
	return viewBytes(s, mem)
}

// closeEnough allows each element one rounding of the result type plus
// f32 accumulation error on the scale of the result.
func closeEnough(got, want *hlo.Literal) string {
	ulp := math.Pow(2, -23)
	if t := want.DType(); t == hlo.BF16 {
		ulp = math.Pow(2, -7)
	} else if t == hlo.F16 {
		ulp = math.Pow(2, -10)
	}
	var scale float64
	for i := range want.Len() {
		scale = max(scale, math.Abs(want.GetFloat64(i)))
	}
	for i := range want.Len() {
		g, w := got.GetFloat64(i), want.GetFloat64(i)
		if math.IsNaN(w) && math.IsNaN(g) || g == w {
			continue
		}
		// A NaN against a number is a difference (the comparison below
		// is false for NaN: a kernel leaving poison behind passed it).
		if math.IsNaN(g) || math.IsNaN(w) || math.Abs(g-w) > ulp*math.Abs(w)+1e-5*scale {
			return "element " + itoa(i) + ": got " + ftoa(g) + ", want " + ftoa(w)
		}
	}
	return ""
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', 9, 64) }

// BenchmarkCompileModels times Compile (optimization, fusion, generated
// code, lowering, scheduling, buffer assignment) on each corpus model,
// and reports it per 1000 instructions of the module as parsed.
func BenchmarkCompileModels(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(modelDir, "*.hlo"))
	if len(files) == 0 {
		b.Skip("corpus not found: clone with ../shared beside the repository")
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		m, err := hlotext.Parse(string(text), hlotext.Options{File: f})
		if err != nil {
			b.Fatal(err)
		}
		eval.RandomArguments(m, 1) // fills the elided constants
		n := 0
		for _, c := range m.Computations {
			n += len(c.Instructions)
		}
		b.Run(filepath.Base(f), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile(m, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N)*1000/float64(n), "ms/1000-instructions")
			b.ReportMetric(float64(n), "instructions")
		})
	}
}
