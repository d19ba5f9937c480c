package hlo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// inferCase is one hand-worked shape inference case: a module whose entry
// root is the instruction under test, and the shape (or error) that XLA's
// operation semantics give for it. Roots written without a shape are
// inferred by the parser too; error cases write a shape so that they parse.
type inferCase struct {
	name string
	// doc is the statement of XLA's operation_semantics.md (or, where the
	// doc is silent, of ShapeInference) that the case pins.
	doc  string
	hlo  string
	want string // the inferred shape without layout, or
	err  string // a substring of the error
}

// Scalar computations the cases call.
const (
	addF32 = `
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
`
	addS32 = `
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
`
	lessF32 = `
less_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
`
)

// module wraps entry instructions (and any computations they call) into
// an HLO module.
func module(comps, entry string) string {
	return "HloModule m\n" + comps + "\nENTRY e {\n" + entry + "\n}\n"
}

func runInferCases(t *testing.T, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := hlotext.Parse(c.hlo, hlotext.Options{File: c.name})
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, c.hlo)
			}
			got, err := hlo.InferShape(m.Entry.Root)
			if c.err != "" {
				if err == nil {
					t.Fatalf("inferred %s, want an error containing %q (%s)", got.HumanString(), c.err, c.doc)
				}
				if !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %q does not contain %q (%s)", err, c.err, c.doc)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v (%s)", err, c.doc)
			}
			if got.HumanString() != c.want {
				t.Fatalf("inferred %s, want %s (%s)", got.HumanString(), c.want, c.doc)
			}
			if !hasDefaultLayouts(got) {
				t.Errorf("inferred %s, want default layouts", got)
			}
		})
	}
}

// hasDefaultLayouts reports whether every array in s has the default
// layout (the cases only use operands with default layouts).
func hasDefaultLayouts(s hlo.Shape) bool {
	ok := true
	s.Leaves(func(_ []int, leaf hlo.Shape) {
		if leaf.IsArray() && !leaf.Layout.IsDefault() {
			ok = false
		}
	})
	return ok
}

// TestInferNeedsWrittenShape: ops whose result is defined by the shape
// written in HLO text report ErrCannotInfer when it is absent.
func TestInferNeedsWrittenShape(t *testing.T) {
	m, err := hlotext.Parse(module("", `
  p = f32[2,3] parameter(0)
  t = token[] after-all()
  c = s32[2,3] convert(p)
  b = f32[4,2,3] broadcast(p), dimensions={1,2}
  r = f32[6] reshape(p)
  i = s32[7] iota(), iota_dimension=0
  cc = f32[2] custom-call(p), custom_call_target="foo"
  in = ((f32[2]), token[]) infeed(t)
  ROOT tu = (s32[2,3], f32[4,2,3], f32[6], s32[7], f32[2]) tuple(c, b, r, i, cc)`), hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"c", "b", "r", "i", "cc", "in"} {
		in := m.Entry.Instruction(name)
		if _, err := hlo.InferShape(in); err != nil {
			if name != "cc" {
				t.Errorf("%s with its written shape: %v", name, err)
			}
		}
		in.Shape = hlo.Shape{}
		if _, err := hlo.InferShape(in); !errors.Is(err, hlo.ErrCannotInfer) {
			t.Errorf("%s without a written shape: got %v, want ErrCannotInfer", name, err)
		}
	}
}

// TestInferBadInput: malformed instructions give errors, not panics.
func TestInferBadInput(t *testing.T) {
	if _, err := hlo.InferShape(nil); err == nil {
		t.Error("nil instruction: no error")
	}
	p := &hlo.Instruction{Name: "p", Opcode: hlo.OpParameter, Shape: hlo.ArrayShape(hlo.F32, 2)}
	cases := []*hlo.Instruction{
		{Name: "a", Opcode: hlo.OpAdd, Operands: []*hlo.Instruction{p, nil}},
		{Name: "a", Opcode: hlo.OpAdd, Operands: []*hlo.Instruction{p}},
		{Name: "s", Opcode: hlo.OpSlice, Operands: []*hlo.Instruction{p}},
		{Name: "t", Opcode: hlo.OpTranspose, Operands: []*hlo.Instruction{p}, Attrs: []hlo.Attr{{Name: "dimensions", Value: []int64{5}}}},
		{Name: "g", Opcode: hlo.OpGetTupleElement, Operands: []*hlo.Instruction{p}},
		{Name: "r", Opcode: hlo.OpReduce, Operands: []*hlo.Instruction{p, p}},
		{Name: "w", Opcode: hlo.OpWhile, Operands: []*hlo.Instruction{p}},
		{Name: "c", Opcode: hlo.OpConvolution, Operands: []*hlo.Instruction{p, p}},
		{Name: "d", Opcode: hlo.OpDot, Operands: []*hlo.Instruction{p, p}, Attrs: []hlo.Attr{{Name: "lhs_contracting_dims", Value: []int64{3}}}},
		{Name: "x", Opcode: hlo.Opcode(250)},
		{Name: "b", Opcode: hlo.OpAdd, Operands: []*hlo.Instruction{p, {Name: "q", Opcode: hlo.OpParameter, Shape: hlo.Shape{DType: 200}}}},
		{Name: "c", Opcode: hlo.OpCompare, Shape: hlo.Shape{DType: 201}, Operands: []*hlo.Instruction{p, p}},
	}
	for _, in := range cases {
		if s, err := hlo.InferShape(in); err == nil {
			t.Errorf("%s %s: inferred %s, want an error", in.Opcode, in.Name, s)
		}
	}
}
