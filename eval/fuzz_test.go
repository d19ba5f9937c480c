package eval_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// FuzzEvalVerified: a module that parses and verifies runs on the
// evaluator or fails with an error, never a panic (Axle issue 43). Modules
// with loops or values over 64 KB are skipped: they may legitimately run
// long or exhaust memory.
func FuzzEvalVerified(f *testing.F) {
	files, _ := filepath.Glob("../../shared/corpus/hlo/parser/*/*.hlo")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil && len(b) < 8<<10 {
			f.Add(string(b))
		}
	}
	f.Add("HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target=\"TopK\"\n}\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil || hlo.Verify(m) != nil || !small(m) {
			return
		}
		_, _ = eval.Run(m, eval.RandomArguments(m, 1)...)
	})
}

// small reports whether m has no loop and no value over 64 KB.
func small(m *hlo.Module) bool {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpWhile {
				return false
			}
			ok := true
			in.Shape.Leaves(func(_ []int, s hlo.Shape) {
				if n, err := s.ByteSize(); err != nil || n > 64<<10 {
					ok = false
				}
			})
			if !ok {
				return false
			}
		}
	}
	return true
}
