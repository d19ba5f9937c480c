package xlamath

// Float is the native float types.
type Float interface{ ~float32 | ~float64 }

// Max and Min are XLA's maximum and minimum on floats: NaN propagates
// (a's when both are), and a is kept when the two compare equal (-0 and
// +0). The evaluator and the collectives' folds share them, so that an
// all-reduce with maximum gives the evaluator's bits.
func Max[T Float](a, b T) T {
	if a != a || b != b {
		return pickNaN(a, b)
	}
	if b > a {
		return b
	}
	return a
}

// Min: see Max.
func Min[T Float](a, b T) T {
	if a != a || b != b {
		return pickNaN(a, b)
	}
	if b < a {
		return b
	}
	return a
}

// pickNaN is a if it is NaN, else b.
func pickNaN[T Float](a, b T) T {
	if a != a {
		return a
	}
	return b
}
