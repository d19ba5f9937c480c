package hlo_test

import (
	"errors"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// TestShapeByteSize: hand-worked sizes, and the first sizes past int64.
func TestShapeByteSize(t *testing.T) {
	for _, c := range []struct {
		s           hlo.Shape
		elems, size int64 // size -1: overflow
	}{
		{hlo.ArrayShape(hlo.F32, 2, 3), 6, 24},
		{hlo.ScalarShape(hlo.C128), 1, 16},
		{hlo.ArrayShape(hlo.S4, 3), 3, 3}, // sub-byte elements take a byte each
		{hlo.ArrayShape(hlo.F32, 0, 1<<62, 1<<62), 0, 0},
		{hlo.ArrayShape(hlo.F32, 1<<61-1), 1<<61 - 1, 1<<63 - 4},
		{hlo.ArrayShape(hlo.F32, 1<<61), 1 << 61, -1},
		{hlo.ArrayShape(hlo.S8, 1<<32, 1<<32), -1, -1},
		{hlo.ArrayShape(hlo.S8, 1<<31, 1<<31, 2), -1, -1},
		{hlo.TupleShape(hlo.ArrayShape(hlo.S8, 5), hlo.ArrayShape(hlo.F32, 2)), -2, 13},
		{hlo.TupleShape(hlo.ArrayShape(hlo.S8, 1<<62), hlo.ArrayShape(hlo.S8, 1<<62)), -2, -1},
		{hlo.TokenShape(), -2, 0},
	} {
		size, err := c.s.ByteSize()
		if c.size < 0 {
			if !errors.Is(err, hlo.ErrShapeTooLarge) {
				t.Errorf("%s: ByteSize = %d, %v; want ErrShapeTooLarge", c.s, size, err)
			}
		} else if err != nil || size != c.size {
			t.Errorf("%s: ByteSize = %d, %v; want %d", c.s, size, err, c.size)
		}
		if c.elems == -2 {
			continue
		}
		n, err := c.s.CheckedNumElements()
		if c.elems < 0 {
			if !errors.Is(err, hlo.ErrShapeTooLarge) {
				t.Errorf("%s: CheckedNumElements = %d, %v; want ErrShapeTooLarge", c.s, n, err)
			}
		} else if err != nil || n != c.elems {
			t.Errorf("%s: CheckedNumElements = %d, %v; want %d", c.s, n, err, c.elems)
		}
	}
}

// TestVerifyRejectsOversizedShapes: shapes past int64 elements or bytes,
// written (set after parsing, as the parser refuses them) or inferred, are
// verifier errors naming the instruction (Axle issue 43). The pad and
// reduce-window cases wrap around to the written size: 5 + 4*2^62 is 5
// modulo 2^64, and (5-1)*2^62 + 1 is 1.
func TestVerifyRejectsOversizedShapes(t *testing.T) {
	const addS8 = `
add_s8 {
  a = s8[] parameter(0)
  b = s8[] parameter(1)
  ROOT s = s8[] add(a, b)
}
`
	cases := []struct {
		name, hlo, instr, msg string
		edit                  func(m *hlo.Module)
	}{
		{"written", module("", `
  ROOT p = f32[2,2] parameter(0)`), "p", "element count of f32[4294967296,4294967296] overflows int64",
			func(m *hlo.Module) { m.Entry.Root.Shape.Dims = []int64{1 << 32, 1 << 32} }},
		{"broadcast", module("", `
  z = f32[] constant(0)
  ROOT b = f32[4] broadcast(z), dimensions={}`), "b", "byte size of f32[4611686018427387904]",
			func(m *hlo.Module) { m.Entry.Root.Shape.Dims = []int64{1 << 62} }},
		{"pad interior wraps", module("", `
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[5] pad(x, z), padding=0_0_4611686018427387904`), "p", "the padded size of dimension 0 overflows int64", nil},
		{"pad high", module("", `
  x = f32[2] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[2] pad(x, z), padding=0_9223372036854775807`), "p", "the padded size of dimension 0 overflows int64", nil},
		{"reduce-window dilation wraps", module(addF32, `
  x = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1] reduce-window(x, z), window={size=1 lhs_dilate=4611686018427387904}, to_apply=add_f32`), "r", "overflows int64", nil},
		{"concatenate", module("", `
  a = s8[4] parameter(0)
  ROOT c = s8[8] concatenate(a, a), dimensions={0}`), "c", "the concatenated size of dimension 0 overflows int64",
			func(m *hlo.Module) { m.Entry.Instructions[0].Shape.Dims = []int64{1<<63 - 8} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustParse(t, c.hlo)
			if c.edit != nil {
				c.edit(m)
				m.EntryLayout = nil // the edit would also contradict it
			}
			err := hlo.Verify(m)
			wantProblem(t, err, "e", c.instr, c.msg)
		})
	}
}

// TestVerifyRejectsInvalidLayouts: minor_to_major must be a permutation of
// the dimensions (XLA's LayoutUtil::ValidateLayoutInShape); backends
// compute strides from it.
func TestVerifyRejectsInvalidLayouts(t *testing.T) {
	for _, c := range []struct{ shape, msg string }{
		{"f32[2,3]{0,0}", "minor_to_major field has duplicate values: 0"},
		{"f32[2,3]{2,0}", "minor_to_major field has out-of-bounds value: 2"},
		{"f32[2,3]{-1,0}", "minor_to_major field has out-of-bounds value: -1"},
		{"(s32[], f32[2,3]{1,1})", "tuple element 1: layout minor_to_major field has duplicate values: 1"},
	} {
		m := mustParse(t, module("", "  ROOT p = "+c.shape+" parameter(0)"))
		wantProblem(t, hlo.Verify(m), "e", "p", c.msg)
	}
	// The parser refuses a wrong length; a module built in Go can have one.
	m := mustParse(t, module("", "  ROOT p = f32[2,3] parameter(0)"))
	m.Entry.Root.Shape.Layout = &hlo.Layout{MinorToMajor: []int64{0}}
	m.EntryLayout = nil
	wantProblem(t, hlo.Verify(m), "e", "p", "mismatched minor-to-major size 1 and dimension size 2")
}
