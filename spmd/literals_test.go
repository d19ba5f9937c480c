package spmd_test

import (
	"fmt"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/spmd"
)

// A 4×4 value over a 2×2 mesh whose devices are listed transposed
// ({devices=[2,2]0,2,1,3}): device 1 holds tile (1,0), rows 2–3 and
// columns 0–1 (worked by hand).
func TestSplitAssemble(t *testing.T) {
	s, err := spmd.Parse("{devices=[2,2]0,2,1,3}")
	if err != nil {
		t.Fatal(err)
	}
	v := make([]int32, 16)
	for i := range v {
		v[i] = int32(i)
	}
	whole, _ := hlo.LiteralFromSlice(v, 4, 4)
	pieces, err := spmd.Split(whole, s, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pieces[1].Data()); got != "[8 9 12 13]" {
		t.Fatalf("device 1's piece %s, want [8 9 12 13]", got)
	}
	if got := fmt.Sprint(pieces[2].Data()); got != "[2 3 6 7]" {
		t.Fatalf("device 2's piece %s, want [2 3 6 7]", got)
	}
	back, err := spmd.Assemble(pieces, s)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(whole) {
		t.Fatalf("reassembled %v, want %v", back, whole)
	}
	pieces[3] = hlo.NewLiteral(pieces[3].Shape())
	r, _ := spmd.Parse("{replicated}")
	if _, err := spmd.Assemble(pieces, r); err == nil {
		t.Fatal("replicated pieces that differ: no error")
	}
}

// Uneven tiles are padded with zeros at the end, XLA's layout: f32[5]
// over 4 devices gives ceil(5/4) = 2 each, [0 1] [2 3] [4 pad] [pad pad];
// a 3×5 value over [1,2] gives columns 0–2 and 3–4 plus padding.
func TestSplitAssembleUneven(t *testing.T) {
	s, _ := spmd.Parse("{devices=[4]<=[4]}")
	whole, _ := hlo.LiteralFromSlice([]float32{10, 11, 12, 13, 14}, 5)
	pieces, err := spmd.Split(whole, s, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[10 11]", "[12 13]", "[14 0]", "[0 0]"}
	for d, w := range want {
		if got := fmt.Sprint(pieces[d].Data()); got != w {
			t.Errorf("device %d's piece %s, want %s", d, got, w)
		}
	}
	pieces[3].SetFloat64(0, 99) // padding: dropped, whatever it holds
	back, err := spmd.AssembleShape(pieces, s, whole.Shape())
	if err != nil || !back.Equal(whole) {
		t.Fatalf("reassembled %v (%v), want %v", back, err, whole)
	}

	m, _ := spmd.Parse("{devices=[1,2]1,0}")
	v := make([]int32, 15)
	for i := range v {
		v[i] = int32(i)
	}
	whole, _ = hlo.LiteralFromSlice(v, 3, 5)
	pieces, err = spmd.Split(whole, m, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Device 1 holds tile 0 (columns 0–2), device 0 tile 1 (3–4, padded).
	if got := fmt.Sprint(pieces[1].Data()); got != "[0 1 2 5 6 7 10 11 12]" {
		t.Errorf("device 1's piece %s", got)
	}
	if got := fmt.Sprint(pieces[0].Data()); got != "[3 4 0 8 9 0 13 14 0]" {
		t.Errorf("device 0's piece %s", got)
	}
	back, err = spmd.AssembleShape(pieces, m, whole.Shape())
	if err != nil || !back.Equal(whole) {
		t.Fatalf("reassembled %v (%v), want %v", back, err, whole)
	}
	if _, err := spmd.AssembleShape(pieces[:1], m, hlo.ArrayShape(hlo.S32, 3, 7)); err == nil {
		t.Error("pieces of the wrong shape assembled")
	}
}
