package aot

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Checksum is the sum of l's elements as float64 (complex: real plus
// imaginary parts; NaN and inf propagate): what `axle run` prints of each
// result, and an ahead-of-time command too, so that the two compare.
func Checksum(l *hlo.Literal) float64 {
	s := l.Shape()
	if !s.IsArray() {
		return 0
	}
	var sum float64
	for i := range l.Len() {
		switch t := s.DType; {
		case t.IsComplex():
			c := l.GetComplex128(i)
			sum += real(c) + imag(c)
		case t.IsUnsigned():
			sum += float64(l.GetUint64(i))
		default:
			sum += l.GetFloat64(i)
		}
	}
	if math.IsNaN(sum) {
		return math.NaN()
	}
	return sum
}

// LoweringSummary says how many instructions went to each kind of kernel
// ("12 gemm, 30 tile-fusion"), as `axle run` and ahead-of-time commands
// print it.
func LoweringSummary(counts map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(parts, ", ")
}
