package ops

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// hostMove runs a data-movement op (whose outputs all hold elements of
// its string-or-numeric data inputs) on concrete values. Numeric inputs
// go through the op's lowering on the evaluator, as without a host
// kernel; string tensors, which HLO cannot hold, are first replaced by
// int64 indices into a table of their strings (index 0 is "", the padding
// value), and the outputs are mapped back.
func hostMove(h *HostCtx) error {
	ts := make([]*onnx.Tensor, len(h.In))
	anyStr := false
	for i, v := range h.In {
		if v == nil {
			continue
		}
		if v.Kind != onnx.KindTensor || v.Tensor == nil {
			return h.Errorf("input %d is not a tensor", i)
		}
		ts[i] = v.Tensor
		anyStr = anyStr || v.Tensor.IsString()
	}
	var table []string
	if anyStr {
		if r := h.Node.Str("reduction", "none"); r != "none" {
			return fmt.Errorf("%s: reduction %q of strings: %w", h.Node.Describe(), r, ErrUnsupported)
		}
		table = []string{""}
		for i, t := range ts {
			if t == nil || !t.IsString() {
				continue
			}
			lit := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, t.Dims()...))
			for k, s := range t.Strs {
				lit.SetInt64(k, int64(len(table)))
				table = append(table, s)
			}
			ts[i] = onnx.TensorOf(lit)
		}
	}
	l := &Lowerer{Opsets: map[string]int{h.Node.Domain: h.Opset}, Env: NewEnv(nil)}
	res, err := l.Evaluate(h.Node, ts)
	if err != nil {
		return err
	}
	for i, t := range res {
		if t == nil {
			h.Set(i, nil)
			continue
		}
		if anyStr && !t.IsString() {
			if t.Lit.DType() != hlo.S64 {
				return fmt.Errorf("%s: output %d of a string op is %s: %w", h.Node.Describe(), i, t, ErrUnsupported)
			}
			strs := make([]string, t.Lit.Len())
			for k := range strs {
				j := t.Lit.GetInt64(k)
				if j < 0 || j >= int64(len(table)) {
					return h.Errorf("string index out of range")
				}
				strs[k] = table[j]
			}
			st, err := onnx.NewStringTensor(strs, t.Dims()...)
			if err != nil {
				return err
			}
			t = st
		}
		h.Set(i, onnx.TensorValue(t))
	}
	return nil
}
