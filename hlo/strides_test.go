package hlo

import (
	"slices"
	"testing"
)

func TestStrides(t *testing.T) {
	for _, c := range []struct {
		s    Shape
		want []int
	}{
		{Shape{DType: F32}, []int{}},
		{Shape{DType: F32, Dims: []int64{2, 3, 4}}, []int{12, 4, 1}},
		{Shape{DType: F32, Dims: []int64{2, 3, 4}, Layout: &Layout{MinorToMajor: []int64{0, 1, 2}}}, []int{1, 2, 6}},
		{Shape{DType: F32, Dims: []int64{2, 3}, Layout: &Layout{MinorToMajor: []int64{0}}}, []int{3, 1}},
		{Shape{DType: F32, Dims: []int64{2, 3}, Layout: &Layout{MinorToMajor: []int64{0, 5}}}, []int{3, 1}},
	} {
		if got := c.s.LayoutStrides(); !slices.Equal(got, c.want) {
			t.Errorf("%v: LayoutStrides() = %v, want %v", c.s, got, c.want)
		}
	}
	if got := RowMajorStrides([]int64{5, 0, 2}); !slices.Equal(got, []int{0, 2, 1}) {
		t.Errorf("RowMajorStrides([5 0 2]) = %v", got)
	}
}
