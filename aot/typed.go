package aot

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Arg wraps data as the argument for parameter k of p, without copying:
// data must hold the parameter's element type (its Go storage type: bf16
// and f16 as uint16 bit patterns) and exactly its number of elements. It
// is what a generated package's typed methods call.
func Arg[T any](p *Program, k int, data []T) (*hlo.Literal, error) {
	params := p.mod.Entry.Params
	if k < 0 || k >= len(params) {
		return nil, fmt.Errorf("aot: no parameter %d (the entry has %d)", k, len(params))
	}
	l, err := hlo.NewLiteralFromData(params[k].Shape, data)
	if err != nil {
		return nil, fmt.Errorf("aot: parameter %d (%s): %w", k, p.paramName(k), err)
	}
	return l, nil
}

// Data is result k's elements as T (its Go storage type).
func Data[T any](results []*hlo.Literal, k int) ([]T, error) {
	if k < 0 || k >= len(results) {
		return nil, fmt.Errorf("aot: no result %d (%d results)", k, len(results))
	}
	d, ok := results[k].Data().([]T)
	if !ok {
		var zero T
		return nil, fmt.Errorf("aot: result %d is %s, not %T values", k, results[k].Shape().HumanString(), zero)
	}
	return d, nil
}
