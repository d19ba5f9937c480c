package hlo_test

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

func TestCombiner(t *testing.T) {
	for _, c := range []struct {
		body string
		op   hlo.Opcode
		ok   bool
	}{
		{"a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b)", hlo.OpAdd, true},
		{"a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] maximum(b, a)", hlo.OpMaximum, true},
		{"a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT r = s32[] and(a, b)", hlo.OpAnd, true},
		{"a = f32[] parameter(0)\n ROOT b = f32[] parameter(1)", hlo.OpParameter, true},
		{"ROOT a = f32[] parameter(0)\n b = f32[] parameter(1)", hlo.OpParameter, false},
		{"a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, a)", hlo.OpInvalid, false},
		{"a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] constant(2)\n m = f32[] multiply(b, c)\n ROOT r = f32[] add(a, m)", hlo.OpInvalid, false},
	} {
		text := "HloModule m\n\nbody {\n " + c.body + "\n}\n\nENTRY e {\n x = f32[] parameter(0)\n ROOT n = f32[] negate(x)\n}\n"
		m, err := hlotext.Parse(text, hlotext.Options{File: "combiner.hlo"})
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		var body *hlo.Computation
		for _, comp := range m.Computations {
			if comp.Name == "body" {
				body = comp
			}
		}
		op, ok := hlo.Combiner(body)
		if op != c.op || ok != c.ok {
			t.Errorf("%q: Combiner = %v, %v; want %v, %v", c.body, op, ok, c.op, c.ok)
		}
	}
	if _, ok := hlo.Combiner(nil); ok {
		t.Error("Combiner(nil) is ok")
	}
}
