package eval_test

import "testing"

// DynamicReshape: the operand's live elements, in row-major order, fill
// the result's live region; the size operands become its dynamic sizes.
// Four live elements 10, 11, 12, 13 reshaped to live sizes 2x2 within
// bounds 2x3 sit at bounded positions 0, 1, 3, 4.
func TestDynamicReshapeLiveElements(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  p = f32[6] parameter(0)
  four = s32[] constant(4)
  s = f32[<=6] set-dimension-size(p, four), dimensions={0}
  two = s32[] constant(2)
  ROOT r = f32[2,<=3] dynamic-reshape(s, two, two)
}`, laLit(t, []float32{10, 11, 12, 13, 14, 15}, 6))
	if got.DynamicSize(1) != 2 {
		t.Fatalf("dynamic size %d, want 2", got.DynamicSize(1))
	}
	d := got.Data().([]float32)
	for i, want := range map[int]float32{0: 10, 1: 11, 3: 12, 4: 13} {
		if d[i] != want {
			t.Fatalf("bounded storage %v, want 10 11 _ 12 13 _", d)
		}
	}
}

// rng-get-and-update-state returns the state and advances it by delta:
// two reads in a row differ by delta.
func TestRngGetAndUpdateState(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = u64[2] rng-get-and-update-state(), delta=16
  b = u64[2] rng-get-and-update-state(), delta=16
  ROOT d = u64[2] subtract(b, a)
}`)
	laWant(t, got, uint64(16), 0)
}
