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
