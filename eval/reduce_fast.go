package eval

import (
	"math"

	"github.com/axle-ml/axle/hlo"
)

// binaryReducer recognises a reducer whose root is op(parameter(0),
// parameter(1)) for an op the fast path knows.
func binaryReducer(c *hlo.Computation) (hlo.Opcode, bool) {
	if c == nil || c.Root == nil || len(c.Root.Operands) != 2 {
		return 0, false
	}
	a, b := c.Root.Operands[0], c.Root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a.ParamNumber == b.ParamNumber {
		return 0, false
	}
	switch op := c.Root.Opcode; op {
	case hlo.OpAdd, hlo.OpMaximum, hlo.OpMinimum:
		return op, true
	}
	return 0, false
}

// floatFold is the fast path of single-input add/max/min folds: values
// are read once into float64 and each step rounds to the element type, so
// results equal calling the reducer computation element by element.
type floatFold struct {
	op        hlo.Opcode
	x         []float64
	round     func(float64) float64
	init, acc float64
}

func newFloatFold(c *hlo.Computation, inputs, inits []*hlo.Literal) *floatFold {
	if len(inputs) != 1 {
		return nil
	}
	op, ok := binaryReducer(c)
	if !ok || c.Root.Shape.DType != inputs[0].DType() {
		return nil
	}
	f := &floatFold{op: op, x: loadFloat64(inputs[0]), init: inits[0].GetFloat64(0)}
	switch inputs[0].DType() {
	case hlo.F64:
		f.round = func(v float64) float64 { return v }
	case hlo.F32:
		f.round = func(v float64) float64 { return float64(float32(v)) }
	default:
		return nil
	}
	return f
}

func (f *floatFold) add(at int) {
	f.acc = f.round(applyBinary(f.op, f.acc, f.x[at]))
}

// applyBinary follows XLA: maximum and minimum propagate NaN.
func applyBinary(op hlo.Opcode, a, b float64) float64 {
	switch op {
	case hlo.OpMaximum:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return max(a, b)
	case hlo.OpMinimum:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return min(a, b)
	}
	return a + b
}
