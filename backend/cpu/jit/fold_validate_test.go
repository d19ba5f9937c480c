package jit

import (
	"strings"
	"testing"
)

// TestRowFoldsRefused: programs whose row folds cannot run are refused
// by Compile with an error naming the folds, on every platform.
func TestRowFoldsRefused(t *testing.T) {
	v := []Value{{Op: Input}, {Op: Exp, Args: [3]int{0}}}
	for _, p := range []Program{
		{Inputs: 1, Values: v, RowFolds: []RowFold{{Op: Add, Value: 1}}},             // no rows
		{Inputs: 1, Values: v, RowLen: 8, RowFolds: []RowFold{{Op: Mul, Value: 1}}},  // not a fold op
		{Inputs: 1, Values: v, RowLen: 8, RowFolds: []RowFold{{Op: Add, Value: 2}}},  // no such value
		{Inputs: 1, Values: v, RowLen: 8, RowFolds: []RowFold{{Op: Max, Value: -1}}}, // no such value
		{Inputs: 1, Values: v, RowLen: 8, RowFolds: make([]RowFold, MaxRowFolds+1)},  // too many
	} {
		_, err := Compile(&p)
		if err == nil || !strings.Contains(err.Error(), "row fold") {
			t.Errorf("%+v: Compile gave %v, want a row fold error", p.RowFolds, err)
		}
	}
}
