package eval_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// TestCheckSupported: a custom call to a target the evaluator does not
// implement is refused before running, wherever it is (the entry, a
// computation another calls), naming the instruction and the target;
// targets XLA defines and the evaluator runs pass (Axle issue 43).
func TestCheckSupported(t *testing.T) {
	for _, c := range []struct{ name, text, comp, instr string }{
		{"known targets", `HloModule m
ENTRY e {
  p = f32[2,8] parameter(0)
  s = f32[2,8] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  ROOT t = (f32[2,3], s32[2,3]) custom-call(s), custom_call_target="TopK"
}`, "", ""},
		{"entry", `HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT k = f32[2] custom-call(p), custom_call_target="my_kernel"
}`, "e", "k"},
		{"called", `HloModule m
f {
  x = f32[2] parameter(0)
  ROOT k = f32[2] custom-call(x), custom_call_target="__cublas$gemm"
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] call(p), to_apply=f
}`, "f", "k"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := hlotext.Parse(c.text, hlotext.Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = eval.CheckSupported(m)
			if c.instr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ie *hlo.InstructionError
			if !errors.As(err, &ie) || ie.Computation != c.comp || ie.Instruction != c.instr || !errors.Is(err, eval.ErrUnimplemented) {
				t.Fatalf("err = %v, want an InstructionError for %s/%s wrapping ErrUnimplemented", err, c.comp, c.instr)
			}
			target, _ := m.Computation(c.comp).Instruction(c.instr).StringAttr("custom_call_target")
			if !strings.Contains(err.Error(), `unsupported custom-call target "`+target+`"`) {
				t.Fatalf("err = %v does not name the target %q", err, target)
			}
		})
	}
}

// TestRunRefusesUnallocatableValues: a shape whose byte size fits in int64
// (so it verifies) but in no Go heap (2^50 f32s are 2^52 bytes, past the
// 2^48 bytes a 64-bit Go heap addresses) is an error naming the
// instruction, not a makeslice panic (Axle issue 43).
func TestRunRefusesUnallocatableValues(t *testing.T) {
	m, err := hlotext.Parse(`HloModule m
ENTRY e {
  z = f32[] constant(0)
  ROOT b = f32[1125899906842624] broadcast(z), dimensions={}
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	_, err = eval.Run(m)
	if err == nil || !strings.Contains(err.Error(), `instruction "b": a value of shape f32[1125899906842624] takes 4503599627370496 bytes`) {
		t.Fatalf("err = %v", err)
	}
}

// TestRandomArgumentsSkipUnallocatable: the `axle run` path makes up
// arguments and elided constants before compiling; for shapes no heap
// holds it leaves them out (nil argument, constant still elided) so the
// compile-time check reports them instead of make panicking.
func TestRandomArgumentsSkipUnallocatable(t *testing.T) {
	m, err := hlotext.Parse(`HloModule m
ENTRY e {
  p = f32[1125899906842624] parameter(0)
  c = f32[1125899906842624] constant({...})
  ROOT t = (f32[1125899906842624], f32[1125899906842624]) tuple(p, c)
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 1)
	if len(args) != 1 || args[0] != nil {
		t.Fatalf("args = %v, want one nil argument", args)
	}
	if c := m.Entry.Instruction("c"); !c.Literal.IsElided() {
		t.Fatal("the constant was filled")
	}
	if _, err := eval.Run(m, args...); err == nil {
		t.Fatal("Run accepted a nil argument")
	}
	if err := eval.CheckSupported(m); err == nil || !strings.Contains(err.Error(), `instruction "p"`) {
		t.Fatalf("CheckSupported: %v", err)
	}
}
