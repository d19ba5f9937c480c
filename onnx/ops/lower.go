package ops

import (
	"errors"
	"fmt"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Env maps value names to lowered values, with the enclosing scope's
// environment as parent (subgraphs see their outer graph's values).
type Env struct {
	vals   map[string]*Val
	parent *Env
}

// NewEnv returns an empty environment inside parent (nil for a root).
func NewEnv(parent *Env) *Env { return &Env{vals: map[string]*Val{}, parent: parent} }

// Get finds name here or in an enclosing scope.
func (e *Env) Get(name string) (*Val, bool) {
	for ; e != nil; e = e.parent {
		if v, ok := e.vals[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// Set binds name in this scope.
func (e *Env) Set(name string, v *Val) { e.vals[name] = v }

// FoldLimit is the largest element count of a node's inputs for which the
// lowerer computes the node at compile time when all its inputs are known.
const FoldLimit = 1 << 16

// Lowerer lowers ONNX nodes into an xb builder.
type Lowerer struct {
	Opsets map[string]int
	Env    *Env
	// NoFold turns constant folding off (the inputs of a node whose
	// inputs are all known are then emitted as HLO constants).
	NoFold bool
	// Threads is the threads the compiled code will run on, 0 where
	// unknown: a lowering may pick the form that runs best on them (a
	// bidirectional RNN's, rnnBothDirections).
	Threads int
	// L2 is one core's level-2 cache where the compiled code will run, in
	// bytes, 0 where unknown: a lowering may pick the form whose working
	// set fits it (rnnBothDirections).
	L2 int
}

// Opset is the model's version of domain.
func (l *Lowerer) Opset(domain string) int {
	if domain == "ai.onnx" {
		domain = ""
	}
	if v, ok := l.Opsets[domain]; ok {
		return v
	}
	return 1
}

// Resolve finds the implementation of n for the model's opsets.
func (l *Lowerer) Resolve(n *onnx.Node) (*Op, error) {
	op, ok := Lookup(n.Domain, n.Op, l.Opset(n.Domain))
	if !ok {
		return nil, fmt.Errorf("%s: no implementation of %s for opset %d: %w", n.Describe(), n.Op, l.Opset(n.Domain), ErrUnsupported)
	}
	return op, nil
}

// LowerNodes lowers nodes in order into b. An error is a *NodeError
// naming the node of nodes that failed (which may be a Loop or If whose
// subgraph holds the node the message names).
func (l *Lowerer) LowerNodes(b *xb.Builder, nodes []*onnx.Node) error {
	for _, n := range nodes {
		if err := l.LowerNode(b, n); err != nil {
			return &NodeError{Node: n, Err: err}
		}
	}
	return nil
}

// NodeError is a lowering error and the node of a list being lowered
// that it came from, so a caller can set that node apart and lower the
// rest. Its text is the error's.
type NodeError struct {
	Node *onnx.Node
	Err  error
}

func (e *NodeError) Error() string { return e.Err.Error() }
func (e *NodeError) Unwrap() error { return e.Err }

// LowerNode lowers one node into b, binding its outputs in l.Env.
func (l *Lowerer) LowerNode(b *xb.Builder, n *onnx.Node) error {
	op, err := l.Resolve(n)
	if err != nil {
		return err
	}
	if op.Lower == nil {
		return fmt.Errorf("%s: runs on the host only: %w", n.Describe(), ErrUnsupported)
	}
	in := make([]*Val, len(n.Inputs))
	allConst, size := true, int64(0)
	for i, name := range n.Inputs {
		if name == "" {
			continue
		}
		v, ok := l.Env.Get(name)
		if !ok {
			return fmt.Errorf("%s: input %d %q is not defined", n.Describe(), i, name)
		}
		in[i] = v
		if v.Const == nil {
			allConst = false
		} else {
			size += numElems(v.Const.Dims())
		}
	}
	for _, i := range op.ConstInputs {
		if i < len(in) && in[i] != nil && in[i].Const == nil {
			return fmt.Errorf("%s: input %d (%q) must be known at compile time: %w", n.Describe(), i, n.Inputs[i], ErrNotConst)
		}
	}
	var out []*Val
	folded := false
	if allConst && !l.NoFold && !op.Random && size <= FoldLimit && len(n.Graphs) == 0 && len(n.GraphLists) == 0 {
		out, folded, err = l.fold(op, n, in)
	}
	if err == nil && !folded {
		out, err = l.lower(b, op, n, in)
	}
	if err != nil {
		return err
	}
	for i, name := range n.Outputs {
		if name == "" {
			continue
		}
		if i >= len(out) || out[i] == nil {
			return fmt.Errorf("%s: output %d (%q) was not produced: %w", n.Describe(), i, name, ErrUnsupported)
		}
		l.Env.Set(name, out[i])
	}
	return nil
}

func (l *Lowerer) lower(b *xb.Builder, op *Op, n *onnx.Node, in []*Val) (out []*Val, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: lowering panicked: %v: %w", n.Describe(), r, ErrUnsupported)
		}
	}()
	c := &Ctx{B: b, Node: n, Opset: l.Opset(n.Domain), In: in, Sub: l, Threads: l.Threads, L2: l.L2}
	if err := op.Lower(c); err != nil {
		return nil, err
	}
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", n.Describe(), err)
	}
	return c.Out, nil
}

// fold computes a node whose inputs are all known at compile time, on the
// evaluator, in a builder of its own. It declines (ok false) when the
// results would be large (ConstantOfShape of a big shape, say): those are
// better computed by the compiled module than embedded in it.
func (l *Lowerer) fold(op *Op, n *onnx.Node, in []*Val) (out []*Val, ok bool, err error) {
	b := xb.New("fold")
	out, err = l.lower(b, op, n, in)
	if err != nil {
		return nil, false, err
	}
	var roots []*xb.Op
	var idx []int
	total := int64(0)
	for i, v := range out {
		if v == nil || v.Const != nil {
			continue
		}
		roots = append(roots, v.In(b))
		idx = append(idx, i)
		total += numElems(v.Dims())
	}
	if len(roots) == 0 {
		return out, true, nil
	}
	if total > FoldLimit {
		return nil, false, nil
	}
	m, err := b.Build(b.Tuple(roots...))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", n.Describe(), err)
	}
	res, err := eval.Run(m)
	if err != nil {
		return nil, false, fmt.Errorf("%s: folding: %w", n.Describe(), err)
	}
	elems := res.Elements()
	if len(elems) != len(idx) {
		return nil, false, errors.New("folding: wrong result count")
	}
	folded := make([]*Val, len(out))
	copy(folded, out)
	for k, i := range idx {
		folded[i] = FromConst(onnx.TensorOf(elems[k]))
	}
	return folded, true, nil
}

// LowerSubgraph lowers g into b with the given inputs bound to g's
// inputs, its initializers as constants and the enclosing values visible;
// it returns g's outputs.
func (l *Lowerer) LowerSubgraph(b *xb.Builder, g *onnx.Graph, inputs []*Val, captures map[string]*Val) ([]*Val, error) {
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("subgraph %q: %d inputs given, it has %d", g.Name, len(inputs), len(g.Inputs))
	}
	sub := &Lowerer{Opsets: l.Opsets, Env: NewEnv(l.Env), NoFold: l.NoFold, Threads: l.Threads, L2: l.L2}
	for name, v := range captures {
		sub.Env.Set(name, v)
	}
	for name, t := range g.Initializers {
		sub.Env.Set(name, FromConst(t))
	}
	for i, vi := range g.Inputs {
		sub.Env.Set(vi.Name, inputs[i])
	}
	if err := sub.LowerNodes(b, g.Nodes); err != nil {
		return nil, err
	}
	out := make([]*Val, len(g.Outputs))
	for i, vi := range g.Outputs {
		v, ok := sub.Env.Get(vi.Name)
		if !ok {
			return nil, fmt.Errorf("subgraph %q: output %q is not defined", g.Name, vi.Name)
		}
		out[i] = v
	}
	return out, nil
}

// Lookup resolves a name in the lowering scope.
func (l *Lowerer) Lookup(name string) (*Val, bool) { return l.Env.Get(name) }

func numElems(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

// literal makes a literal of type t and dims from float64 values.
func literal(t hlo.DType, vals []float64, dims ...int64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.ArrayShape(t, dims...))
	for i, v := range vals {
		l.SetFloat64(i, v)
	}
	return l
}

// IntTensor is an int64 tensor of the given values and dims (no dims: a
// scalar, so a vector needs its length given).
func IntTensor(vals []int64, dims ...int64) *onnx.Tensor {
	l := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, dims...))
	for i, v := range vals {
		l.SetInt64(i, v)
	}
	return onnx.TensorOf(l)
}

// Evaluate runs one node on concrete tensors: its lowering, with every
// input a constant, on the reference evaluator. It is how the evaluator
// device runs a node that has no host kernel.
func (l *Lowerer) Evaluate(n *onnx.Node, in []*onnx.Tensor) ([]*onnx.Tensor, error) {
	op, err := l.Resolve(n)
	if err != nil {
		return nil, err
	}
	if op.Lower == nil {
		return nil, fmt.Errorf("%s: has no lowering to evaluate", n.Describe())
	}
	vals := make([]*Val, len(in))
	for i, t := range in {
		if t != nil {
			vals[i] = FromConst(t)
		}
	}
	b := xb.New("node")
	out, err := l.lower(b, op, n, vals)
	if err != nil {
		return nil, err
	}
	res := make([]*onnx.Tensor, len(out))
	var roots []*xb.Op
	var idx []int
	for i, v := range out {
		switch {
		case v == nil:
		case v.Const != nil:
			res[i] = v.Const
		default:
			roots = append(roots, v.In(b))
			idx = append(idx, i)
		}
	}
	if len(roots) == 0 {
		return res, nil
	}
	m, err := b.Build(b.Tuple(roots...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Describe(), err)
	}
	tup, err := eval.Run(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Describe(), err)
	}
	for k, e := range tup.Elements() {
		res[idx[k]] = onnx.TensorOf(e)
	}
	return res, nil
}
