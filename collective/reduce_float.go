package collective

import (
	"fmt"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
	"github.com/axle-ml/axle/internal/xlamath"
)

type float interface{ ~float32 | ~float64 }

// addF32 is acc += x on the kernels' vector code.
func addF32(acc, x []float32) { kernels.AddF32(acc, acc, x) }

// floatFold: add and multiply round once in T; maximum and minimum
// propagate NaN, as XLA's do. The parameter order is kept even for add,
// so that which NaN survives is the evaluator's.
func floatFold[T float](op hlo.Opcode, swapped bool) func(acc, x []T) {
	if f, ok := any(addF32).(func(acc, x []T)); ok && op == hlo.OpAdd && !swapped {
		return f // the vector kernel: IEEE addition gives the same bits at any width
	}
	switch {
	case op == hlo.OpAdd && !swapped:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] += x[i]
			}
		}
	case op == hlo.OpMultiply && !swapped:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] *= x[i]
			}
		}
	}
	if f := floatOp[T](op); f != nil {
		return loop(f, swapped)
	}
	return nil
}

// floatOp is op on one pair of floats, or nil.
func floatOp[T float](op hlo.Opcode) func(a, b T) T {
	switch op {
	case hlo.OpAdd:
		return func(a, b T) T { return a + b }
	case hlo.OpMultiply:
		return func(a, b T) T { return a * b }
	case hlo.OpMaximum:
		return xlamath.Max[T]
	case hlo.OpMinimum:
		return xlamath.Min[T]
	}
	return nil
}

// narrowFold folds f16, bf16 and the f8 types as the evaluator computes
// them: both values decoded exactly to float64, the op applied there, the
// result rounded to nearest even. For add and multiply this is the
// correctly rounded narrow result: float64 keeps at least 2p+2 bits of
// any p-bit narrow type, so its own rounding never changes the second.
func narrowFold(f minifloat.Format, op hlo.Opcode, swapped bool) foldFunc {
	g := floatOp[float64](op)
	if g == nil {
		return nil
	}
	if swapped {
		g0 := g
		g = func(a, b float64) float64 { return g0(b, a) }
	}
	tab := f.Values()
	if f.Bits() > 8 {
		return func(acc, x []byte) error {
			a, b := view[uint16](acc), view[uint16](x)
			for i := range a {
				a[i] = f.FromFloat64(g(tab[a[i]], tab[b[i]]))
			}
			return nil
		}
	}
	return func(acc, x []byte) error {
		for i := range acc {
			acc[i] = uint8(f.FromFloat64(g(tab[acc[i]], tab[x[i]])))
		}
		return nil
	}
}

// slowFold applies comp to each pair of elements through apply.
func slowFold(comp *hlo.Computation, t hlo.DType, apply ScalarApply) foldFunc {
	return func(acc, x []byte) error {
		a, b := hlo.NewLiteral(hlo.ScalarShape(t)), hlo.NewLiteral(hlo.ScalarShape(t))
		ab, bb := a.RawBytes(), b.RawBytes()
		es := len(ab)
		for off := 0; off < len(acc); off += es {
			copy(ab, acc[off:off+es])
			copy(bb, x[off:off+es])
			r, err := apply(comp, a, b)
			if err != nil {
				return fmt.Errorf("to_apply %s: %w", comp.Name, err)
			}
			rb := r.RawBytes()
			if r.DType() != t || len(rb) != es {
				return fmt.Errorf("to_apply %s returned %s for %s operands", comp.Name, r.Shape().HumanString(), t)
			}
			copy(acc[off:off+es], rb)
		}
		return nil
	}
}
