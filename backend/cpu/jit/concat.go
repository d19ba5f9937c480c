package jit

import "errors"

// Concat returns one program computing a's values and then b's, which
// read only their own: b's inputs, scalars, row scalars, outputs, folds
// and prefetches follow a's. A tile program runs its last segment of one
// tile and the segment before it of the next in one loop this way, so
// that the one's stores to memory overlap the other's loads and
// arithmetic (see package cpu's tile_pipe.go). Both programs must run
// over the same rows, or b over none.
func Concat(a, b *Program) (*Program, error) {
	if a.Strided || b.Strided || b.RowLen != 0 && b.RowLen != a.RowLen {
		return nil, errors.New("jit: programs over different rows do not concatenate")
	}
	nv := len(a.Values)
	c := &Program{
		Values:         append([]Value(nil), a.Values...),
		Inputs:         a.Inputs + b.Inputs,
		Scalars:        a.Scalars + b.Scalars,
		RowLen:         a.RowLen,
		RowScalars:     append([]int(nil), a.RowScalars...),
		RowFolds:       append([]RowFold(nil), a.RowFolds...),
		PrefetchInputs: append([]int(nil), a.PrefetchInputs...),
		PrefetchAhead:  a.PrefetchAhead,
		CachedOutputs:  append([]int(nil), a.CachedOutputs...),
	}
	for _, v := range b.Values {
		switch v.Op {
		case Input:
			v.Arg += a.Inputs
		case Splat:
			v.Arg += a.Scalars
		case Const:
		default:
			for k := range v.Op.arity() {
				v.Args[k] += nv
			}
		}
		c.Values = append(c.Values, v)
	}
	aOuts, bOuts := a.outputs(), b.outputs()
	c.Outputs = append([]int(nil), aOuts...)
	for _, o := range bOuts {
		c.Outputs = append(c.Outputs, o+nv)
	}
	for _, k := range b.RowScalars {
		c.RowScalars = append(c.RowScalars, k+a.Scalars)
	}
	for _, f := range b.RowFolds {
		c.RowFolds = append(c.RowFolds, RowFold{Op: f.Op, Value: f.Value + nv})
	}
	for _, k := range b.PrefetchInputs {
		c.PrefetchInputs = append(c.PrefetchInputs, k+a.Inputs)
	}
	if len(a.PrefetchInputs) == 0 {
		c.PrefetchAhead = b.PrefetchAhead
	}
	for _, k := range b.CachedOutputs {
		c.CachedOutputs = append(c.CachedOutputs, k+len(aOuts))
	}
	if a.InputTypes != nil || b.InputTypes != nil {
		for k := range c.Inputs {
			if k < a.Inputs {
				c.InputTypes = append(c.InputTypes, a.inputType(k))
			} else {
				c.InputTypes = append(c.InputTypes, b.inputType(k-a.Inputs))
			}
		}
	}
	if a.OutputTypes != nil || b.OutputTypes != nil {
		for k := range len(c.Outputs) {
			if k < len(aOuts) {
				c.OutputTypes = append(c.OutputTypes, a.outputType(k))
			} else {
				c.OutputTypes = append(c.OutputTypes, b.outputType(k-len(aOuts)))
			}
		}
	}
	return c, c.validate()
}
