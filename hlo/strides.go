package hlo

// RowMajorStrides returns each dimension's element stride in row-major
// storage (the default layout, last dimension fastest) of an array with
// these dimensions. Strides are ints: they index Go slices.
func RowMajorStrides(dims []int64) []int {
	st := make([]int, len(dims))
	n := 1
	for i := len(dims) - 1; i >= 0; i-- {
		st[i] = n
		n *= int(dims[i])
	}
	return st
}

// LayoutStrides returns each logical dimension's element stride in the
// storage order s's layout gives (minor_to_major). A shape without a
// complete, valid layout is stored row-major, as the evaluator and the
// backends store it.
func (s Shape) LayoutStrides() []int {
	if s.Layout == nil || len(s.Layout.MinorToMajor) != len(s.Dims) {
		return RowMajorStrides(s.Dims)
	}
	st := make([]int, len(s.Dims))
	n := 1
	for _, d := range s.Layout.MinorToMajor {
		if d < 0 || int(d) >= len(s.Dims) {
			return RowMajorStrides(s.Dims)
		}
		st[d] = n
		n *= int(s.Dims[d])
	}
	return st
}
