package hlo

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// ErrShapeTooLarge reports an array shape whose element count or byte size
// does not fit in an int64. Such a shape can never be allocated, and
// arithmetic on its sizes (NumElements, byte offsets) silently wraps, so
// the parser and the verifier reject it before anything sizes a buffer.
var ErrShapeTooLarge = errors.New("the shape is too large")

// CheckedNumElements is NumElements with overflow checking: the product of
// the dimension sizes (bounds for dynamic ones, 0 for unbounded ones) of an
// array shape, or an error wrapping ErrShapeTooLarge when it overflows
// int64.
func (s Shape) CheckedNumElements() (int64, error) {
	n := uint64(1)
	overflow := false
	for _, d := range s.Dims {
		if d <= 0 {
			// A zero (or unbounded) dimension makes the array empty
			// whatever the others are.
			return 0, nil
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			overflow = true
		}
		n = lo
	}
	if overflow {
		return 0, fmt.Errorf("%w: the element count of %s overflows int64", ErrShapeTooLarge, s.HumanString())
	}
	return int64(n), nil
}

// ByteSize is the storage size of s in bytes, each element rounded up to
// whole bytes (as the evaluator and backends store them): the elements of
// an array, the sum of the elements of a tuple or buffer, 0 for tokens and
// opaques. It returns an error wrapping ErrShapeTooLarge when an element
// count or the size overflows int64.
func (s Shape) ByteSize() (int64, error) {
	switch {
	case s.IsTuple() || s.DType == Buffer:
		total := int64(0)
		for i := range s.Tuple {
			n, err := s.Tuple[i].ByteSize()
			if err != nil {
				return 0, err
			}
			if total > math.MaxInt64-n {
				return 0, fmt.Errorf("%w: the byte size of %s overflows int64", ErrShapeTooLarge, s.HumanString())
			}
			total += n
		}
		return total, nil
	case !s.IsArray():
		return 0, nil
	}
	n, err := s.CheckedNumElements()
	if err != nil {
		return 0, err
	}
	width := int64((s.DType.Bits() + 7) / 8)
	if n > math.MaxInt64/width {
		return 0, fmt.Errorf("%w: the byte size of %s (%d elements of %d bytes) overflows int64", ErrShapeTooLarge, s.HumanString(), n, width)
	}
	return n * width, nil
}

// sizeArith does the dimension arithmetic of shape inference (padding,
// dilation, concatenation) with overflow detection: int64 sizes that wrap
// can come back as small, plausible dimensions, which no later size check
// would catch. Once an operation overflows, overflow stays set and the
// results are meaningless.
type sizeArith struct{ overflow bool }

func (a *sizeArith) add(x, y int64) int64 {
	s := x + y
	if (x >= 0) == (y >= 0) && (s >= 0) != (x >= 0) {
		a.overflow = true
	}
	return s
}

func (a *sizeArith) mul(x, y int64) int64 {
	if x == 0 || y == 0 {
		return 0
	}
	p := x * y
	if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		a.overflow = true
	}
	return p
}

// err reports the overflow of the dimension named what.
func (a *sizeArith) err(what string, args ...any) error {
	if !a.overflow {
		return nil
	}
	return fmt.Errorf("%w: %s overflows int64", ErrShapeTooLarge, fmt.Sprintf(what, args...))
}

// checkSizes checks that every array in s (tuple elements included) has
// an element count and byte size that fit in int64. A tuple's total may
// exceed it: its elements are separate buffers.
func checkSizes(s Shape) error {
	if s.IsTuple() || s.DType == Buffer {
		for i := range s.Tuple {
			if err := checkSizes(s.Tuple[i]); err != nil {
				return err
			}
		}
		return nil
	}
	_, err := s.ByteSize()
	return err
}
