package tile

import "testing"

// rowsAndColumns on index maps worked by hand, over a C with rows of 12.
func TestRowsAndColumns(t *testing.T) {
	for _, c := range []struct {
		dims, strides []int
		rows, cols    int
		ok            bool
	}{
		{[]int{5, 12}, []int{0, 1}, 0, 1, true},          // a bias row
		{[]int{5, 12}, []int{12, 1}, 12, 1, true},        // C's shape
		{[]int{5, 12}, []int{1, 0}, 1, 0, true},          // a bias column
		{[]int{5, 3, 4}, []int{0, 4, 1}, 0, 1, true},     // a bias of two dimensions
		{[]int{2, 5, 12}, []int{60, 12, 1}, 12, 1, true}, // batched
		{[]int{2, 5, 12}, []int{0, 12, 1}, 0, 0, false},  // rows that do not collapse
		{[]int{5, 3, 4}, []int{0, 1, 3}, 0, 0, false},    // transposed columns
		{[]int{5, 8}, []int{8, 1}, 0, 0, false},          // no split at 12
		{[]int{5, 1, 12, 1}, []int{12, 7, 1, 9}, 12, 1, true},
	} {
		rows, cols, ok := rowsAndColumns(affineMap{dims: c.dims, strides: c.strides}, 12)
		if ok != c.ok || ok && (rows != c.rows || cols != c.cols) {
			t.Errorf("dims %v strides %v: got %d, %d, %v; want %d, %d, %v", c.dims, c.strides, rows, cols, ok, c.rows, c.cols, c.ok)
		}
	}
}

// period on index maps worked by hand: leading broadcast dimensions
// repeat the rest, dimensions of size 1 count as broadcast whatever their
// stride, and maps with no broadcast dimension before the rest do not
// repeat.
func TestPeriod(t *testing.T) {
	for _, c := range []struct {
		dims, strides []int
		period        int
	}{
		{[]int{5, 12}, []int{0, 1}, 12},                    // a bias row
		{[]int{1, 12, 128, 128}, []int{128, 0, 0, 1}, 128}, // an attention mask [1, 128]
		{[]int{2, 3, 4}, []int{0, 0, 1}, 4},
		{[]int{2, 3, 4}, []int{0, 4, 1}, 12},
		{[]int{5, 12}, []int{12, 1}, 0},     // no broadcast
		{[]int{1, 1, 4}, []int{4, 4, 1}, 0}, // only sizes of 1: one period, no repeat
		{[]int{5, 12}, []int{1, 0}, 0},      // a column: does not repeat along the flat index
		{[]int{3, 1}, []int{0, 5}, 0},       // every dimension broadcast: one value
	} {
		if got := (affineMap{dims: c.dims, strides: c.strides}).period(); got != c.period {
			t.Errorf("dims %v strides %v: period %d, want %d", c.dims, c.strides, got, c.period)
		}
	}
}
