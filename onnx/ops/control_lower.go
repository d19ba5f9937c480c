package ops

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// lowerIf inlines the taken branch when the condition is known at compile
// time, and otherwise emits an HLO conditional whose operand is a tuple of
// the branches' free variables that are not compile-time constants.
func lowerIf(c *Ctx) error {
	if c.Sub == nil {
		return c.Unsupported("subgraphs cannot be lowered here")
	}
	thenG, elseG := c.Node.Graphs["then_branch"], c.Node.Graphs["else_branch"]
	if thenG == nil || elseG == nil {
		return c.Errorf("then_branch and else_branch are required")
	}
	if !c.Has(0) {
		return c.Errorf("the condition is required")
	}
	if t := c.In[0].Const; t != nil {
		cond, ok := ctlBool(t)
		if !ok {
			return c.Errorf("the condition must be a one-element tensor")
		}
		g := elseG
		if cond {
			g = thenG
		}
		outs, err := c.Sub.LowerSubgraph(c.B, g, nil, nil)
		if err != nil {
			return err
		}
		for i, v := range outs {
			if v == nil {
				return c.Unsupported("branch output %d is not a tensor", i)
			}
		}
		c.Out = outs
		return nil
	}
	// Free variables known at compile time resolve by name inside the
	// branches; the others become operands.
	var names []string
	var operands []*xb.Op
	for _, g := range []*[]string{ptr(thenG.FreeVars()), ptr(elseG.FreeVars())} {
		for _, name := range *g {
			if slices.Contains(names, name) {
				continue
			}
			v, ok := c.Sub.Lookup(name)
			if !ok {
				return c.Errorf("a branch reads %q, which is not defined", name)
			}
			if v.Const != nil {
				continue
			}
			op := v.In(c.B)
			if op == nil {
				return c.Unsupported("a branch reads %q, which has no HLO value", name)
			}
			names = append(names, name)
			operands = append(operands, op)
		}
	}
	pred := c.Input(0)
	if pred.Rank() != 0 {
		if numElems(pred.Dims()) != 1 {
			return c.Errorf("the condition must be a one-element tensor")
		}
		pred = xb.Reshape(pred)
	}
	if pred.DType() != hlo.Pred {
		pred = xb.Ne(pred, ScalarLike(pred, 0))
	}
	arg := c.B.Tuple(operands...)
	var firstErr error
	var thenShapes []hlo.Shape
	branch := func(g *graphRef, record bool) xb.Body {
		return func(sb *xb.Builder, x *xb.Op) *xb.Op {
			caps := map[string]*Val{}
			for i, name := range names {
				caps[name] = FromOp(xb.GetTupleElement(x, i))
			}
			outs, err := c.Sub.LowerSubgraph(sb, g.g, nil, caps)
			if err == nil && len(outs) != len(c.Node.Outputs) {
				err = c.Unsupported("branch %q gives %d outputs, the node has %d", g.g.Name, len(outs), len(c.Node.Outputs))
			}
			var ops []*xb.Op
			var shapes []hlo.Shape
			for i, v := range outs {
				if err != nil {
					break
				}
				op := v.In(sb)
				if op == nil {
					err = c.Unsupported("branch output %d is not a numeric tensor", i)
					break
				}
				ops = append(ops, op)
				shapes = append(shapes, op.Shape())
			}
			if err == nil {
				if record {
					thenShapes = shapes
				} else {
					for i := range shapes {
						if i >= len(thenShapes) || !shapes[i].Equal(thenShapes[i]) {
							err = c.Unsupported("the branches' output %d shapes differ", i)
							break
						}
					}
				}
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return sb.Tuple()
			}
			return sb.Tuple(ops...)
		}
	}
	res := xb.Cond(pred, arg, branch(&graphRef{thenG}, true), arg, branch(&graphRef{elseG}, false))
	if firstErr != nil {
		return firstErr
	}
	if err := c.B.Err(); err != nil {
		return fmt.Errorf("%s: %v: %w", c.Node.Describe(), err, ErrUnsupported)
	}
	for i := range c.Node.Outputs {
		c.Set(i, xb.GetTupleElement(res, i))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

type graphRef struct{ g *onnx.Graph }

// ctlCaptures are a subgraph's free variables not known at compile time:
// they enter an HLO loop or conditional as operands.
func ctlCaptures(c *Ctx, gs ...*onnx.Graph) (names []string, ops []*xb.Op, err error) {
	for _, g := range gs {
		for _, name := range g.FreeVars() {
			if slices.Contains(names, name) {
				continue
			}
			v, ok := c.Sub.Lookup(name)
			if !ok {
				return nil, nil, c.Errorf("a subgraph reads %q, which is not defined", name)
			}
			if v.Const != nil {
				continue
			}
			op := v.In(c.B)
			if op == nil {
				return nil, nil, c.Unsupported("a subgraph reads %q, which has no HLO value", name)
			}
			names = append(names, name)
			ops = append(ops, op)
		}
	}
	return names, ops, nil
}

// lowerLoop emits an HLO while loop when every carried value keeps its
// shape; scan outputs need a trip count known at compile time and a
// condition that stays true (known at compile time). Anything else is
// left to the host kernel.
func lowerLoop(c *Ctx) error {
	if c.Sub == nil {
		return c.Unsupported("subgraphs cannot be lowered here")
	}
	body := c.Node.Graphs["body"]
	if body == nil {
		return c.Errorf("body is missing")
	}
	nCarried := max(len(c.In)-2, 0)
	if len(body.Inputs) != nCarried+2 || len(body.Outputs) < nCarried+1 {
		return c.Errorf("the body does not match the node")
	}
	nScan := len(body.Outputs) - 1 - nCarried
	var carried []*xb.Op
	for i := range nCarried {
		if !c.Has(2 + i) {
			return c.Unsupported("omitted loop-carried value")
		}
		op := c.Input(2 + i)
		if op == nil {
			return c.Unsupported("loop-carried value %d has no HLO value", i)
		}
		carried = append(carried, op)
	}
	// Trip count and condition.
	tripConst, trip := int64(-1), (*xb.Op)(nil)
	if c.Has(0) {
		if t := c.In[0].Const; t != nil {
			v, err := seqScalarInt(t)
			if err != nil {
				return c.Errorf("M: %v", err)
			}
			tripConst = v
		} else {
			trip = xb.Convert(xb.Reshape(c.Input(0)), hlo.S64)
		}
	}
	condConstTrue := !c.Has(1)
	var cond0 *xb.Op
	if c.Has(1) {
		if t := c.In[1].Const; t != nil {
			v, ok := ctlBool(t)
			if !ok {
				return c.Errorf("cond must be a one-element tensor")
			}
			if !v {
				// No iteration: the carried values as given, empty scans.
				if nScan > 0 {
					return c.Unsupported("scan outputs of a loop that does not run")
				}
				for i, op := range carried {
					c.Set(i, op)
				}
				return nil
			}
			condConstTrue = true
		} else {
			cond0 = ctlPred(c.Input(1))
		}
	}
	if tripConst < 0 && trip == nil && !c.Has(1) {
		return c.Unsupported("the loop has neither a trip count nor a condition")
	}
	names, capOps, err := ctlCaptures(c, body)
	if err != nil {
		return err
	}
	// Probe: lower the body once to learn its outputs' shapes and whether
	// its condition stays true.
	probe := xb.New("loop_probe")
	bodyIn := func(b *xb.Builder, i, cnd *xb.Op, carried []*xb.Op) []*Val {
		in := []*Val{FromOp(i)}
		if cnd == nil {
			in = append(in, FromConst(optBool(true)))
		} else {
			in = append(in, FromOp(cnd))
		}
		for _, op := range carried {
			in = append(in, FromOp(op))
		}
		return in
	}
	var pCarried []*xb.Op
	for i, op := range carried {
		pCarried = append(pCarried, probe.Parameter(fmt.Sprintf("v%d", i), op.Shape()))
	}
	pCaps := map[string]*Val{}
	for i, name := range names {
		pCaps[name] = FromOp(probe.Parameter(fmt.Sprintf("c%d", i), capOps[i].Shape()))
	}
	var pCond *xb.Op
	if !condConstTrue {
		pCond = probe.Param("cond", hlo.Pred)
	}
	pOut, err := c.Sub.LowerSubgraph(probe, body, bodyIn(probe, probe.Param("i", hlo.S64), pCond, pCarried), pCaps)
	if err != nil {
		return err
	}
	bodyCondTrue := false
	if t := pOut[0].Const; t != nil {
		if v, ok := ctlBool(t); ok && v {
			bodyCondTrue = true
		}
	}
	for i := range nCarried {
		op := pOut[1+i].In(probe)
		if op == nil || !op.Shape().Equal(carried[i].Shape()) {
			return c.Unsupported("loop-carried value %d changes shape", i)
		}
	}
	var scanShapes []hlo.Shape
	for k := range nScan {
		op := pOut[1+nCarried+k].In(probe)
		if op == nil {
			return c.Unsupported("scan output %d has no HLO value", k)
		}
		scanShapes = append(scanShapes, op.Shape())
	}
	// Without a cond input the body's condition is ignored; a constant
	// true one that the body keeps true leaves the trip count to decide.
	useCond := c.Has(1) && !(condConstTrue && bodyCondTrue)
	if nScan > 0 && (tripConst < 0 || useCond) {
		return c.Unsupported("scan outputs need a known trip count and a condition that stays true")
	}
	if tripConst < 0 && trip == nil && !useCond {
		return c.Unsupported("the loop would not end")
	}
	if !useCond {
		cond0 = nil
	} else if cond0 == nil {
		cond0 = c.B.Constant(optBool(true).Lit)
	}
	if tripConst >= 0 {
		trip = c.B.Constant(IntTensor([]int64{tripConst}).Lit)
		trip = xb.Reshape(trip)
	}
	// State: i, trip?, cond?, carried..., scan buffers..., captures...
	state := []*xb.Op{c.B.Constant(IntTensor([]int64{0}).Lit)}
	state[0] = xb.Reshape(state[0])
	hasTrip, hasCond := trip != nil, cond0 != nil
	if hasTrip {
		state = append(state, trip)
	}
	if hasCond {
		state = append(state, cond0)
	}
	nHead := len(state)
	state = append(state, carried...)
	for _, s := range scanShapes {
		state = append(state, c.B.Full(s.DType, 0, append([]int64{tripConst}, s.Dims...)...))
	}
	state = append(state, capOps...)
	var firstErr error
	res := xb.While(c.B.Tuple(state...),
		func(sb *xb.Builder, s *xb.Op) *xb.Op {
			more := sb.Constant(optBool(true).Lit)
			k := 1
			if hasTrip {
				more = xb.Lt(xb.GetTupleElement(s, 0), xb.GetTupleElement(s, k))
				k++
			}
			if hasCond {
				more = xb.And(more, xb.GetTupleElement(s, k))
			}
			return more
		},
		func(sb *xb.Builder, s *xb.Op) *xb.Op {
			el := xb.Split(s)
			i := el[0]
			var cnd *xb.Op
			if hasCond {
				cnd = el[nHead-1]
			}
			cv := el[nHead : nHead+nCarried]
			bufs := el[nHead+nCarried : nHead+nCarried+nScan]
			caps := map[string]*Val{}
			for j, name := range names {
				caps[name] = FromOp(el[nHead+nCarried+nScan+j])
			}
			outs, err := c.Sub.LowerSubgraph(sb, body, bodyIn(sb, i, cnd, cv), caps)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return s
			}
			next := []*xb.Op{xb.Add(i, xb.Reshape(sb.Constant(IntTensor([]int64{1}).Lit)))}
			if hasTrip {
				next = append(next, el[1])
			}
			if hasCond {
				co := outs[0].In(sb)
				if co == nil {
					if firstErr == nil {
						firstErr = c.Unsupported("the body's condition has no HLO value")
					}
					return s
				}
				next = append(next, ctlPred(co))
			}
			for j := range nCarried {
				next = append(next, outs[1+j].In(sb))
			}
			for k := range nScan {
				v := outs[1+nCarried+k].In(sb)
				upd := xb.Reshape(v, append([]int64{1}, v.Dims()...)...)
				starts := []*xb.Op{i}
				for range v.Dims() {
					starts = append(starts, xb.Reshape(sb.Constant(IntTensor([]int64{0}).Lit)))
				}
				next = append(next, xb.DynamicUpdateSlice(bufs[k], upd, starts...))
			}
			next = append(next, el[nHead+nCarried+nScan:]...)
			return sb.Tuple(next...)
		})
	if firstErr != nil {
		return firstErr
	}
	if err := c.B.Err(); err != nil {
		return fmt.Errorf("%s: %v: %w", c.Node.Describe(), err, ErrUnsupported)
	}
	for j := range nCarried + nScan {
		c.Set(j, xb.GetTupleElement(res, nHead+j))
	}
	return nil
}

// ctlPred turns a one-element tensor into a pred[] scalar.
func ctlPred(x *xb.Op) *xb.Op {
	if x.Rank() != 0 {
		x = xb.Reshape(x)
	}
	if x.DType() != hlo.Pred {
		x = xb.Ne(x, ScalarLike(x, 0))
	}
	return x
}

// lowerScan emits Scan (opset 9+) as an HLO while loop over the static
// sequence length: states keep their shapes; scan inputs are sliced with
// dynamic-slice and scan outputs written with dynamic-update-slice.
func lowerScan(c *Ctx) error {
	if c.Sub == nil {
		return c.Unsupported("subgraphs cannot be lowered here")
	}
	body := c.Node.Graphs["body"]
	if body == nil {
		return c.Errorf("body is missing")
	}
	m := int(c.Node.Int("num_scan_inputs", 0))
	nState := len(c.In) - m
	if m <= 0 || nState < 0 || len(body.Inputs) != len(c.In) {
		return c.Errorf("num_scan_inputs %d does not fit the node", m)
	}
	nOut := len(body.Outputs) - nState
	if nOut < 0 {
		return c.Errorf("the body has too few outputs")
	}
	ins := make([]*xb.Op, len(c.In))
	for i := range c.In {
		if ins[i] = c.Input(i); ins[i] == nil {
			return c.Unsupported("input %d has no HLO value", i)
		}
	}
	inAxes := ctlAxes(c.Node, "scan_input_axes", m)
	inDirs := ctlAxes(c.Node, "scan_input_directions", m)
	outAxes := ctlAxes(c.Node, "scan_output_axes", nOut)
	outDirs := ctlAxes(c.Node, "scan_output_directions", nOut)
	T := int64(-1)
	sliceShapes := make([]hlo.Shape, m)
	for j := range m {
		x := ins[nState+j]
		ax, ok := NormAxis(inAxes[j], x.Rank())
		if !ok {
			return c.Errorf("scan_input_axes[%d] out of range", j)
		}
		inAxes[j] = ax
		d := x.Dims()
		if T >= 0 && d[ax] != T {
			return c.Errorf("scan inputs differ in length")
		}
		T = d[ax]
		sliceShapes[j] = hlo.ArrayShape(x.DType(), append(append([]int64(nil), d[:ax]...), d[ax+1:]...)...)
	}
	if T <= 0 {
		return c.Unsupported("empty scan")
	}
	names, capOps, err := ctlCaptures(c, body)
	if err != nil {
		return err
	}
	// Probe the body for its outputs' shapes.
	probe := xb.New("scan_probe")
	var pin []*Val
	for i := range nState {
		pin = append(pin, FromOp(probe.Parameter(fmt.Sprintf("s%d", i), ins[i].Shape())))
	}
	for j := range m {
		pin = append(pin, FromOp(probe.Parameter(fmt.Sprintf("x%d", j), sliceShapes[j])))
	}
	pCaps := map[string]*Val{}
	for i, name := range names {
		pCaps[name] = FromOp(probe.Parameter(fmt.Sprintf("c%d", i), capOps[i].Shape()))
	}
	pOut, err := c.Sub.LowerSubgraph(probe, body, pin, pCaps)
	if err != nil {
		return err
	}
	for i := range nState {
		op := pOut[i].In(probe)
		if op == nil || !op.Shape().Equal(ins[i].Shape()) {
			return c.Unsupported("state %d changes shape", i)
		}
	}
	outShapes := make([]hlo.Shape, nOut)
	for k := range nOut {
		op := pOut[nState+k].In(probe)
		if op == nil {
			return c.Unsupported("scan output %d has no HLO value", k)
		}
		outShapes[k] = op.Shape()
		if _, ok := NormAxis(outAxes[k], op.Rank()+1); !ok {
			return c.Errorf("scan_output_axes[%d] out of range", k)
		}
	}
	zero64 := func(b *xb.Builder) *xb.Op { return xb.Reshape(b.Constant(IntTensor([]int64{0}).Lit)) }
	state := []*xb.Op{zero64(c.B)}
	state = append(state, ins...)
	for _, s := range outShapes {
		state = append(state, c.B.Full(s.DType, 0, append([]int64{T}, s.Dims...)...))
	}
	state = append(state, capOps...)
	nIn := len(ins)
	var firstErr error
	res := xb.While(c.B.Tuple(state...),
		func(sb *xb.Builder, s *xb.Op) *xb.Op {
			return xb.Lt(xb.GetTupleElement(s, 0), xb.Reshape(sb.Constant(IntTensor([]int64{T}).Lit)))
		},
		func(sb *xb.Builder, s *xb.Op) *xb.Op {
			el := xb.Split(s)
			i := el[0]
			last := xb.Reshape(sb.Constant(IntTensor([]int64{T - 1}).Lit))
			at := func(rev int64) *xb.Op {
				if rev != 0 {
					return xb.Sub(last, i)
				}
				return i
			}
			var in []*Val
			for k := range nState {
				in = append(in, FromOp(el[1+k]))
			}
			for j := range m {
				x := el[1+nState+j]
				starts := make([]*xb.Op, x.Rank())
				sizes := x.Dims()
				for d := range starts {
					starts[d] = zero64(sb)
				}
				starts[inAxes[j]] = at(inDirs[j])
				sizes[inAxes[j]] = 1
				in = append(in, FromOp(xb.Reshape(xb.DynamicSlice(x, starts, sizes...), sliceShapes[j].Dims...)))
			}
			caps := map[string]*Val{}
			for j, name := range names {
				caps[name] = FromOp(el[1+nIn+nOut+j])
			}
			outs, err := c.Sub.LowerSubgraph(sb, body, in, caps)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return s
			}
			next := []*xb.Op{xb.Add(i, xb.Reshape(sb.Constant(IntTensor([]int64{1}).Lit)))}
			for k := range nState {
				next = append(next, outs[k].In(sb))
			}
			next = append(next, el[1+nState:1+nIn]...)
			for k := range nOut {
				v := outs[nState+k].In(sb)
				starts := []*xb.Op{at(outDirs[k])}
				for range v.Dims() {
					starts = append(starts, zero64(sb))
				}
				upd := xb.Reshape(v, append([]int64{1}, v.Dims()...)...)
				next = append(next, xb.DynamicUpdateSlice(el[1+nIn+k], upd, starts...))
			}
			next = append(next, el[1+nIn+nOut:]...)
			return sb.Tuple(next...)
		})
	if firstErr != nil {
		return firstErr
	}
	if err := c.B.Err(); err != nil {
		return fmt.Errorf("%s: %v: %w", c.Node.Describe(), err, ErrUnsupported)
	}
	for k := range nState {
		c.Set(k, xb.GetTupleElement(res, 1+k))
	}
	for k := range nOut {
		y := xb.GetTupleElement(res, 1+nIn+k)
		ax, _ := NormAxis(outAxes[k], len(outShapes[k].Dims)+1)
		if ax != 0 {
			// Move the stacking axis 0 to ax.
			var perm []int64
			for d := int64(1); d <= ax; d++ {
				perm = append(perm, d)
			}
			perm = append(perm, 0)
			for d := ax + 1; d <= int64(len(outShapes[k].Dims)); d++ {
				perm = append(perm, d)
			}
			y = xb.Transpose(y, perm...)
		}
		c.Set(nState+k, y)
	}
	return nil
}
