package hlo

// Ints converts dimensions (or any int64s) to ints, the type kernels index
// with.
func Ints(dims []int64) []int {
	out := make([]int, len(dims))
	for i, d := range dims {
		out[i] = int(d)
	}
	return out
}
