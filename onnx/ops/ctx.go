package ops

import (
	"errors"
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Val is a value while a graph is lowered: an HLO value of the builder
// being filled, a value known at compile time, or both. Sequences and
// optionals are not lowered (their ops run on the host).
type Val struct {
	// Const is the value when known at compile time (folded from
	// constants and shapes, or fed by value).
	Const *onnx.Tensor
	ops   map[*xb.Builder]*xb.Op
	shape hlo.Shape // of the HLO value, when there is one
}

// FromOp is a value computed in the builder.
func FromOp(op *xb.Op) *Val {
	return &Val{ops: map[*xb.Builder]*xb.Op{op.Builder(): op}, shape: op.Shape()}
}

// FromConst is a value known at compile time.
func FromConst(t *onnx.Tensor) *Val { return &Val{Const: t} }

// In returns v as an op of builder b, emitting its constant there if it
// has not been used in b yet. It is nil for string tensors.
func (v *Val) In(b *xb.Builder) *xb.Op {
	if v == nil {
		return nil
	}
	if op, ok := v.ops[b]; ok {
		return op
	}
	if v.Const == nil || v.Const.IsString() {
		return nil
	}
	op := b.Constant(v.Const.Lit)
	if v.ops == nil {
		v.ops = map[*xb.Builder]*xb.Op{}
	}
	v.ops[b] = op
	return op
}

// Shape is the value's HLO shape (element type and dims).
func (v *Val) Shape() hlo.Shape {
	if v.Const != nil && v.Const.Lit != nil {
		return v.Const.Lit.Shape()
	}
	return v.shape
}

// Dims is the value's dimensions.
func (v *Val) Dims() []int64 {
	if v.Const != nil {
		return v.Const.Dims()
	}
	return v.shape.Dims
}

// ErrNotConst is wrapped by the error of a lowering that needs an input's
// value at compile time and does not have it.
var ErrNotConst = errors.New("value not known at compile time")

// ErrUnsupported is wrapped by the error of a lowering that does not
// support the node's attributes, types or shapes: the executor then runs
// the node elsewhere (soft placement) rather than failing.
var ErrUnsupported = errors.New("not supported")

// Ctx is what a lowering gets: the node, its opset, its inputs, and the
// builder to emit into. It sets Out.
type Ctx struct {
	B     *xb.Builder
	Node  *onnx.Node
	Opset int // version of the node's domain in the model
	In    []*Val
	Out   []*Val
	// Sub lowers a subgraph (If branches, Loop and Scan bodies); nil where
	// subgraphs cannot be lowered.
	Sub SubLowerer
	// Threads is the threads the compiled code runs on (Lowerer.Threads).
	Threads int
	// L2 is one core's level-2 cache there (Lowerer.L2).
	L2 int
}

// SubLowerer lowers subgraphs and resolves outer-scope names.
type SubLowerer interface {
	// LowerSubgraph lowers g into builder b (the builder of a
	// conditional branch or loop body, or c.B itself to inline it): its
	// inputs are given; captures rebind outer-scope names (g.FreeVars())
	// to values of b, since HLO computations have no captures: pass the
	// outer values in as operands and bind them here. Names not rebound
	// resolve in the enclosing scopes, which works only for values known
	// at compile time or when b is the enclosing builder. It returns
	// g's outputs.
	LowerSubgraph(b *xb.Builder, g *onnx.Graph, inputs []*Val, captures map[string]*Val) ([]*Val, error)
	// Lookup resolves a name in the node's scope (for its subgraphs'
	// free variables).
	Lookup(name string) (*Val, bool)
}

// Has reports whether input i is given (not omitted, not past the end).
func (c *Ctx) Has(i int) bool { return i < len(c.In) && c.In[i] != nil }

// Input is input i as an op of c.B (nil if omitted).
func (c *Ctx) Input(i int) *xb.Op {
	if !c.Has(i) {
		return nil
	}
	return c.In[i].In(c.B)
}

// Inputs are all given inputs as ops of c.B (omitted ones are nil).
func (c *Ctx) Inputs() []*xb.Op {
	out := make([]*xb.Op, len(c.In))
	for i := range c.In {
		out[i] = c.Input(i)
	}
	return out
}

// Const is input i's value if known at compile time.
func (c *Ctx) Const(i int) (*onnx.Tensor, error) {
	if !c.Has(i) {
		return nil, c.Errorf("input %d is required", i)
	}
	if c.In[i].Const == nil {
		return nil, fmt.Errorf("%s: input %d (%q): %w", c.Node.Describe(), i, c.Node.Input(i), ErrNotConst)
	}
	return c.In[i].Const, nil
}

// ConstInts is input i's value, known at compile time, as int64s (any
// integer type).
func (c *Ctx) ConstInts(i int) ([]int64, error) {
	t, err := c.Const(i)
	if err != nil {
		return nil, err
	}
	return Int64s(t)
}

// ConstFloats is input i's value, known at compile time, as float64s.
func (c *Ctx) ConstFloats(i int) ([]float64, error) {
	t, err := c.Const(i)
	if err != nil {
		return nil, err
	}
	return Float64s(t)
}

// Set sets output i.
func (c *Ctx) Set(i int, op *xb.Op) {
	for len(c.Out) <= i {
		c.Out = append(c.Out, nil)
	}
	c.Out[i] = FromOp(op)
}

// SetConst sets output i to a value known at compile time.
func (c *Ctx) SetConst(i int, t *onnx.Tensor) {
	for len(c.Out) <= i {
		c.Out = append(c.Out, nil)
	}
	c.Out[i] = FromConst(t)
}

// Errorf is an error about the node.
func (c *Ctx) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", c.Node.Describe(), fmt.Sprintf(format, args...))
}

// Unsupported is an error wrapping ErrUnsupported about the node.
func (c *Ctx) Unsupported(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", c.Node.Describe(), fmt.Sprintf(format, args...), ErrUnsupported)
}

// Int64s reads an integer tensor's elements as int64.
func Int64s(t *onnx.Tensor) ([]int64, error) {
	if t == nil || t.Lit == nil {
		return nil, errors.New("not a numeric tensor")
	}
	l := t.Lit
	if !l.DType().IsInteger() && !l.DType().IsPred() {
		return nil, fmt.Errorf("%v is not an integer tensor", t)
	}
	out := make([]int64, l.Len())
	for i := range out {
		out[i] = l.GetInt64(i)
	}
	return out, nil
}

// Float64s reads a numeric tensor's elements as float64.
func Float64s(t *onnx.Tensor) ([]float64, error) {
	if t == nil || t.Lit == nil {
		return nil, errors.New("not a numeric tensor")
	}
	l := t.Lit
	out := make([]float64, l.Len())
	for i := range out {
		out[i] = l.GetFloat64(i)
	}
	return out, nil
}

// HostCtx is what a host kernel gets: concrete input values (nil where
// omitted); it sets Out.
type HostCtx struct {
	Node  *onnx.Node
	Opset int
	In    []*onnx.Value
	Out   []*onnx.Value
	// Run runs a subgraph of the node on concrete values (control flow),
	// with the node's scope visible to it.
	Run func(g *onnx.Graph, inputs []*onnx.Value) ([]*onnx.Value, error)
}

// Errorf is an error about the node.
func (h *HostCtx) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", h.Node.Describe(), fmt.Sprintf(format, args...))
}

// Tensor is input i as a tensor (nil if omitted or not a tensor).
func (h *HostCtx) Tensor(i int) *onnx.Tensor {
	if i >= len(h.In) || h.In[i] == nil || h.In[i].Kind != onnx.KindTensor {
		return nil
	}
	return h.In[i].Tensor
}

// Set sets output i.
func (h *HostCtx) Set(i int, v *onnx.Value) {
	for len(h.Out) <= i {
		h.Out = append(h.Out, nil)
	}
	h.Out[i] = v
}
