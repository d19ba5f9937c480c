package npy

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
)

func TestParamFor(t *testing.T) {
	params := []*hlo.Instruction{{Name: "Arg_0.1"}, {Name: "w.2"}}
	for _, c := range []struct {
		name string
		pos  int
		want int
	}{
		{"Arg_0.1", -1, 0}, {"w.2", -1, 1}, {"w", -1, 1}, {"arg1", -1, 1}, {"Arg_1", -1, 1},
		{"input_0", -1, 0}, {"ARR_1", -1, 1}, {"arg2", -1, -1}, {"arg2", 0, -1},
		{"q", 1, 1}, {"q", -1, -1}, {"q", 2, -1}, {"w", 0, 1},
	} {
		a := Input{Array: Array{Name: c.name}, Pos: c.pos}
		if got := ParamFor(a, params); got != c.want {
			t.Errorf("%q at %d: parameter %d, want %d", c.name, c.pos, got, c.want)
		}
	}
}
