package ops

import (
	"github.com/axle-ml/axle/onnx"
)

// Control flow: host kernels that run subgraphs on concrete values, and an
// HLO lowering for If (control_lower.go).

func init() {
	Register(Op{Name: "If", Lower: lowerIf, PreferConst: []int{0}, Host: hostIf})
	Register(Op{Name: "Loop", Lower: lowerLoop, PreferConst: []int{0, 1}, Host: hostLoop})
	Register(Op{Name: "Scan", Since: 8, Host: hostScan8})
	Register(Op{Name: "Scan", Since: 9, Lower: lowerScan, Host: hostScan})
	Register(Op{Name: "SequenceMap", Since: 17, Host: hostSequenceMap})
}

func ctlBool(t *onnx.Tensor) (bool, bool) {
	if t == nil || t.IsString() || t.Lit.Len() != 1 {
		return false, false
	}
	return t.Lit.GetFloat64(0) != 0, true
}

func hostIf(h *HostCtx) error {
	cond, ok := ctlBool(h.Tensor(0))
	if !ok {
		return h.Errorf("the condition must be a one-element tensor")
	}
	name := "else_branch"
	if cond {
		name = "then_branch"
	}
	g := h.Node.Graphs[name]
	if g == nil {
		return h.Errorf("%s is missing", name)
	}
	out, err := h.Run(g, nil)
	if err != nil {
		return err
	}
	if len(out) < len(h.Node.Outputs) {
		return h.Errorf("%s gives %d outputs, the node has %d", name, len(out), len(h.Node.Outputs))
	}
	h.Out = out
	return nil
}

func ctlInt64Scalar(v int64) *onnx.Value { return onnx.TensorValue(IntTensor([]int64{v})) }

func hostLoop(h *HostCtx) error {
	body := h.Node.Graphs["body"]
	if body == nil {
		return h.Errorf("body is missing")
	}
	maxTrip := int64(-1)
	if t := h.Tensor(0); t != nil {
		v, err := seqScalarInt(t)
		if err != nil {
			return h.Errorf("M: %v", err)
		}
		maxTrip = v
	}
	cond := true
	if t := h.Tensor(1); t != nil {
		c, ok := ctlBool(t)
		if !ok {
			return h.Errorf("cond must be a one-element tensor")
		}
		cond = c
	}
	if maxTrip < 0 && h.Tensor(1) == nil {
		return h.Errorf("neither a trip count nor a condition: the loop would not end")
	}
	nCarried := len(h.In) - 2
	if nCarried < 0 {
		nCarried = 0
	}
	carried := make([]*onnx.Value, nCarried)
	copy(carried, h.In[min(2, len(h.In)):])
	if len(body.Inputs) != nCarried+2 {
		return h.Errorf("body has %d inputs, want %d", len(body.Inputs), nCarried+2)
	}
	nScan := len(body.Outputs) - 1 - nCarried
	if nScan < 0 {
		return h.Errorf("body has %d outputs, want at least %d", len(body.Outputs), nCarried+1)
	}
	scans := make([][]*onnx.Tensor, nScan)
	for i := int64(0); (maxTrip < 0 || i < maxTrip) && cond; i++ {
		args := append([]*onnx.Value{ctlInt64Scalar(i), onnx.TensorValue(optBool(cond))}, carried...)
		out, err := h.Run(body, args)
		if err != nil {
			return err
		}
		if h.Tensor(1) != nil { // without a cond input, the body's is ignored
			if out[0] == nil || out[0].Kind != onnx.KindTensor {
				return h.Errorf("the body's condition output must be a one-element tensor")
			}
			c, ok := ctlBool(out[0].Tensor)
			if !ok {
				return h.Errorf("the body's condition output must be a one-element tensor")
			}
			cond = c
		}
		copy(carried, out[1:1+nCarried])
		for k := range nScan {
			v := out[1+nCarried+k]
			if v.Kind != onnx.KindTensor {
				return h.Errorf("scan output %d is not a tensor", k)
			}
			scans[k] = append(scans[k], v.Tensor)
		}
	}
	for i, v := range carried {
		h.Set(i, v)
	}
	for k := range nScan {
		var t *onnx.Tensor
		var err error
		if len(scans[k]) == 0 {
			t, err = ctlEmptyScan(body.Outputs[1+nCarried+k], 0)
		} else {
			t, err = seqStack(scans[k], 0)
		}
		if err != nil {
			return h.Errorf("scan output %d: %v", k, err)
		}
		h.Set(nCarried+k, onnx.TensorValue(t))
	}
	return nil
}

// ctlEmptyScan is the stacked output of no iterations: the declared shape
// of one iteration's value (unknown dims as 0) with a 0 inserted at axis.
func ctlEmptyScan(vi *onnx.ValueInfo, axis int) (*onnx.Tensor, error) {
	et := onnx.Float
	var dims []int64
	if vi.Type != nil {
		if vi.Type.Elem != onnx.Undefined {
			et = vi.Type.Elem
		}
		for _, d := range vi.Type.Dims {
			dims = append(dims, max(d, 0))
		}
	}
	axis = min(axis, len(dims))
	dims = append(dims[:axis], append([]int64{0}, dims[axis:]...)...)
	return seqZeros(et, dims)
}

func ctlAxes(n *onnx.Node, name string, count int) []int64 {
	v := n.Ints(name)
	out := make([]int64, count)
	for i := range out {
		if i < len(v) {
			out[i] = v[i]
		}
	}
	return out
}

// hostScan is Scan from opset 9: no batch axis, per-input axes and
// directions.
func hostScan(h *HostCtx) error {
	body := h.Node.Graphs["body"]
	if body == nil {
		return h.Errorf("body is missing")
	}
	m := int(h.Node.Int("num_scan_inputs", 0))
	nState := len(h.In) - m
	if m <= 0 || nState < 0 {
		return h.Errorf("num_scan_inputs %d does not fit %d inputs", m, len(h.In))
	}
	if len(body.Inputs) != len(h.In) {
		return h.Errorf("body has %d inputs, want %d", len(body.Inputs), len(h.In))
	}
	nOut := len(body.Outputs) - nState
	if nOut < 0 {
		return h.Errorf("body has too few outputs")
	}
	inAxes := ctlAxes(h.Node, "scan_input_axes", m)
	inDirs := ctlAxes(h.Node, "scan_input_directions", m)
	outAxes := ctlAxes(h.Node, "scan_output_axes", nOut)
	outDirs := ctlAxes(h.Node, "scan_output_directions", nOut)
	states := make([]*onnx.Value, nState)
	copy(states, h.In[:nState])
	scanIn := make([]*onnx.Tensor, m)
	seqLen := int64(-1)
	for j := range m {
		t := h.Tensor(nState + j)
		if t == nil {
			return h.Errorf("scan input %d must be a tensor", j)
		}
		ax, ok := NormAxis(inAxes[j], len(t.Dims()))
		if !ok {
			return h.Errorf("scan_input_axes[%d] out of range", j)
		}
		inAxes[j] = ax
		if seqLen >= 0 && t.Dims()[ax] != seqLen {
			return h.Errorf("scan inputs differ in length")
		}
		seqLen = t.Dims()[ax]
		scanIn[j] = t
	}
	outs, err := ctlScanRun(h, body, states, scanIn, inAxes, inDirs, seqLen, nOut)
	if err != nil {
		return err
	}
	for i, v := range states {
		h.Set(i, v)
	}
	for k := range nOut {
		var t *onnx.Tensor
		if len(outs[k]) == 0 {
			t, err = ctlEmptyScan(body.Outputs[nState+k], 0)
		} else {
			if outDirs[k] != 0 {
				for a, b := 0, len(outs[k])-1; a < b; a, b = a+1, b-1 {
					outs[k][a], outs[k][b] = outs[k][b], outs[k][a]
				}
			}
			ax, ok := NormAxis(outAxes[k], len(outs[k][0].Dims())+1)
			if !ok {
				return h.Errorf("scan_output_axes[%d] out of range", k)
			}
			t, err = seqStack(outs[k], int(ax))
		}
		if err != nil {
			return h.Errorf("scan output %d: %v", k, err)
		}
		h.Set(nState+k, onnx.TensorValue(t))
	}
	return nil
}

// ctlScanRun runs the body over seqLen steps, updating states in place; it
// returns each scan output's per-step values in step order.
func ctlScanRun(h *HostCtx, body *onnx.Graph, states []*onnx.Value, scanIn []*onnx.Tensor, inAxes, inDirs []int64, seqLen int64, nOut int) ([][]*onnx.Tensor, error) {
	outs := make([][]*onnx.Tensor, nOut)
	for t := int64(0); t < seqLen; t++ {
		args := append([]*onnx.Value(nil), states...)
		for j, x := range scanIn {
			idx := t
			if inDirs[j] != 0 {
				idx = seqLen - 1 - t
			}
			s, err := seqTake(x, int(inAxes[j]), idx)
			if err != nil {
				return nil, h.Errorf("%v", err)
			}
			args = append(args, onnx.TensorValue(s))
		}
		res, err := h.Run(body, args)
		if err != nil {
			return nil, err
		}
		copy(states, res[:len(states)])
		for k := range nOut {
			v := res[len(states)+k]
			if v.Kind != onnx.KindTensor {
				return nil, h.Errorf("scan output %d is not a tensor", k)
			}
			outs[k] = append(outs[k], v.Tensor)
		}
	}
	return outs, nil
}

// hostScan8 is Scan-8: input 0 is the optional sequence_lens, and every
// state and scan input has a leading batch axis (scan inputs scan axis 1).
func hostScan8(h *HostCtx) error {
	body := h.Node.Graphs["body"]
	if body == nil {
		return h.Errorf("body is missing")
	}
	m := int(h.Node.Int("num_scan_inputs", 0))
	in := h.In[1:]
	nState := len(in) - m
	if m <= 0 || nState < 0 {
		return h.Errorf("num_scan_inputs %d does not fit %d inputs", m, len(in))
	}
	nOut := len(body.Outputs) - nState
	if nOut < 0 || len(body.Inputs) != len(in) {
		return h.Errorf("body does not match the node")
	}
	dirs := ctlAxes(h.Node, "directions", m)
	var batch, maxLen int64 = -1, -1
	for i := range in {
		t := h.Tensor(1 + i)
		if t == nil || len(t.Dims()) < 1 {
			return h.Errorf("input %d must be a tensor with a batch axis", i+1)
		}
		batch = t.Dims()[0]
		if i >= nState {
			if len(t.Dims()) < 2 {
				return h.Errorf("scan input needs a sequence axis")
			}
			maxLen = t.Dims()[1]
		}
	}
	var lens []int64
	if t := h.Tensor(0); t != nil {
		var err error
		if lens, err = Int64s(t); err != nil {
			return h.Errorf("sequence_lens: %v", err)
		}
	}
	finalStates := make([][]*onnx.Tensor, nState)
	outsByBatch := make([][]*onnx.Tensor, nOut)
	for b := int64(0); b < batch; b++ {
		states := make([]*onnx.Value, nState)
		for i := range nState {
			s, err := seqTake(h.Tensor(1+i), 0, b)
			if err != nil {
				return h.Errorf("%v", err)
			}
			states[i] = onnx.TensorValue(s)
		}
		scanIn := make([]*onnx.Tensor, m)
		axes := make([]int64, m)
		for j := range m {
			s, err := seqTake(h.Tensor(1+nState+j), 0, b)
			if err != nil {
				return h.Errorf("%v", err)
			}
			scanIn[j] = s
		}
		n := maxLen
		if lens != nil && b < int64(len(lens)) {
			n = min(lens[b], maxLen)
		}
		if n < maxLen {
			for j := range m {
				s, err := seqSliceAxis(scanIn[j], 0, 0, n)
				if err != nil {
					return h.Errorf("%v", err)
				}
				scanIn[j] = s
			}
		}
		outs, err := ctlScanRun(h, body, states, scanIn, axes, dirs, n, nOut)
		if err != nil {
			return err
		}
		for i, v := range states {
			if v.Kind != onnx.KindTensor {
				return h.Errorf("state %d is not a tensor", i)
			}
			finalStates[i] = append(finalStates[i], v.Tensor)
		}
		for k := range nOut {
			var t *onnx.Tensor
			if len(outs[k]) == 0 {
				return h.Errorf("a batch entry of sequence length 0")
			}
			t, err = seqStack(outs[k], 0)
			if err != nil {
				return h.Errorf("%v", err)
			}
			if n < maxLen {
				d := t.Dims()
				d[0] = maxLen - n
				pad, err := seqZeros(t.ElemType(), d)
				if err != nil {
					return h.Errorf("%v", err)
				}
				if t, err = seqConcatAxis([]*onnx.Tensor{t, pad}, 0); err != nil {
					return h.Errorf("%v", err)
				}
			}
			outsByBatch[k] = append(outsByBatch[k], t)
		}
	}
	for i := range nState {
		t, err := seqStack(finalStates[i], 0)
		if err != nil {
			return h.Errorf("%v", err)
		}
		h.Set(i, onnx.TensorValue(t))
	}
	for k := range nOut {
		t, err := seqStack(outsByBatch[k], 0)
		if err != nil {
			return h.Errorf("%v", err)
		}
		h.Set(nState+k, onnx.TensorValue(t))
	}
	return nil
}

func hostSequenceMap(h *HostCtx) error {
	body := h.Node.Graphs["body"]
	if body == nil {
		return h.Errorf("body is missing")
	}
	s, err := seqInput(h, 0)
	if err != nil {
		return err
	}
	n := len(s.Elems)
	for i, v := range h.In {
		if v != nil && v.Kind == onnx.KindSequence && len(v.Elems) != n {
			return h.Errorf("sequence input %d has %d elements, input 0 has %d", i, len(v.Elems), n)
		}
	}
	outs := make([][]*onnx.Value, len(body.Outputs))
	for i := range n {
		args := make([]*onnx.Value, len(h.In))
		for j, v := range h.In {
			if v != nil && v.Kind == onnx.KindSequence {
				args[j] = v.Elems[i]
			} else {
				args[j] = v
			}
		}
		res, err := h.Run(body, args)
		if err != nil {
			return err
		}
		for k := range outs {
			outs[k] = append(outs[k], res[k])
		}
	}
	for k := range outs {
		et := onnx.Undefined
		if t := body.Outputs[k].Type; t != nil {
			et = t.Elem
		}
		h.Set(k, seqValue(outs[k], et))
	}
	return nil
}
