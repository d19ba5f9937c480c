package graph

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/ops"
	"github.com/axle-ml/axle/xb"
)

// env holds one run's values; a subgraph's env sees its parent's.
type env struct {
	mu     sync.Mutex
	vals   map[string]*onnx.Value
	parent *env
}

func (e *env) get(name string, g *onnx.Graph) (*onnx.Value, bool) {
	for ; e != nil; e, g = e.parent, parentOf(g) {
		e.mu.Lock()
		v, ok := e.vals[name]
		e.mu.Unlock()
		if ok {
			return v, true
		}
		if g != nil {
			if t, ok := g.Initializers[name]; ok {
				return onnx.TensorValue(t), true
			}
		}
	}
	return nil, false
}

func parentOf(g *onnx.Graph) *onnx.Graph {
	if g == nil {
		return nil
	}
	return g.Parent
}

func (e *env) set(name string, v *onnx.Value) {
	e.mu.Lock()
	e.vals[name] = v
	e.mu.Unlock()
}

func (s *Session) runPlan(ctx context.Context, p *plan, e *env) error {
	return s.runUnits(ctx, p, p.units, e)
}

// runUnits runs units of p in order.
func (s *Session) runUnits(ctx context.Context, p *plan, units []*unit, e *env) error {
	for _, u := range units {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if u.dev.Compiled {
			err = s.runCluster(ctx, p, u, e)
		} else {
			err = s.runNode(ctx, p, u.nodes[0], e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// compiled is a cluster lowered and compiled for one input signature.
type compiled struct {
	once     sync.Once
	exe      *axle.Executable
	params   []string                // unit inputs fed as parameters, in order
	consts   map[string]*onnx.Tensor // outputs known at compile time
	results  map[string]int          // output -> index in the executable's results
	fallback error                   // non-nil: run the unit's nodes op by op (why)
	split    []*unit                 // non-nil: run these instead (splitAt)
	err      error
}

func (s *Session) runCluster(ctx context.Context, p *plan, u *unit, e *env) error {
	args := make(map[string]*onnx.Value, len(u.inputs))
	for _, name := range u.inputs {
		v, ok := e.get(name, p.g)
		if !ok {
			return fmt.Errorf("%s: input %q: %w", u, name, errNoValue)
		}
		args[name] = v
	}
	key, ok := signature(u, args)
	var c *compiled
	if !ok {
		c = &compiled{fallback: errors.New("an input is not a numeric tensor")}
	} else {
		got, ok := u.cache.Load(key)
		if !ok {
			// A bound on the signatures kept per cluster: inputs fed by
			// value that change on every call must not grow it forever.
			if u.cached.Add(1) > maxSignatures {
				u.cache.Clear()
				u.cached.Store(1)
			}
			got, _ = u.cache.LoadOrStore(key, &compiled{})
		}
		c = got.(*compiled)
		c.once.Do(func() { s.compileCluster(p, u, args, key, c) })
	}
	if c.err != nil {
		return c.err
	}
	if c.split != nil {
		return s.runUnits(ctx, p, c.split, e)
	}
	if c.fallback != nil {
		if s.opts.NoSoftPlacement {
			return fmt.Errorf("%s cannot be compiled: %w (soft placement is off)", u, c.fallback)
		}
		for _, n := range u.nodes {
			if err := s.runNode(ctx, p, n, e); err != nil {
				return err
			}
		}
		return nil
	}
	for name, t := range c.consts {
		e.set(name, onnx.TensorValue(t))
	}
	if c.exe == nil {
		return nil
	}
	lits := make([]*hlo.Literal, len(c.params))
	for i, name := range c.params {
		lits[i] = args[name].Tensor.Lit
	}
	res, err := c.exe.ExecuteLiterals(lits...)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	for name, i := range c.results {
		e.set(name, onnx.LiteralValue(res[i]))
	}
	return nil
}

// maxSignatures bounds the compiled signatures a cluster keeps.
const maxSignatures = 64

// signature keys a cluster's compilation: each input's element type and
// dims, and the values of inputs fed by value. ok is false when an input
// cannot be compiled over (a sequence, strings).
func signature(u *unit, args map[string]*onnx.Value) (string, bool) {
	h := sha256.New()
	var buf [8]byte
	for _, name := range u.inputs {
		v := args[name]
		if v.Kind != onnx.KindTensor || v.Tensor == nil || v.Tensor.IsString() {
			return "", false
		}
		l := v.Tensor.Lit
		h.Write([]byte{byte(l.DType()), byte(len(l.Shape().Dims))})
		for _, d := range l.Shape().Dims {
			binary.LittleEndian.PutUint64(buf[:], uint64(d))
			h.Write(buf[:])
		}
		if u.byValue(name, v.Tensor) {
			h.Write([]byte{1})
			h.Write(l.RawBytes())
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), true
}

// target is what a cluster's code will run on, for lowerings that pick a
// form by it: the threads of an execution and one core's L2 cache in
// bytes (0: unknown).
type target struct{ threads, l2 int }

// compileCluster lowers the unit for the given arguments and compiles it.
// A lowering the compiler cannot take (unsupported attributes, a value
// needed at compile time that is not known) sends the unit op by op.
func (s *Session) compileCluster(p *plan, u *unit, args map[string]*onnx.Value, key string, c *compiled) {
	m, err := buildCluster(p, u, args, fmt.Sprintf("cluster_%d", u.id), c, target{s.cpu.Threads(), s.cpu.L2Bytes()})
	if err != nil {
		s.refuse(p, u, c, err)
		return
	}
	if m == nil {
		return
	}
	if s.opts.DumpDir != "" {
		s.dump(u, key, m)
	}
	exe, err := u.dev.client.Compile(m, s.opts.Compile)
	if err != nil {
		s.refuse(p, u, c, err)
		return
	}
	c.exe = exe
	if s.opts.LogPlacement != nil {
		fmt.Fprintf(s.opts.LogPlacement, "compiled %s on %s for signature %s: %d nodes, %d parameters, engine %s\n",
			u, u.dev, key, len(u.nodes), len(c.params), exe.Engine())
	}
}

// buildCluster lowers u's nodes into a module named name for the
// arguments' shapes (and the values of those fed by value), filling c's
// parameters, results and constant outputs; nil when every output is a
// constant. on is what the module will run on (zero: unknown).
func buildCluster(p *plan, u *unit, args map[string]*onnx.Value, name string, c *compiled, on target) (*hlo.Module, error) {
	b := xb.New(name)
	l := &ops.Lowerer{Opsets: p.opsets, Env: ops.NewEnv(nil), Threads: on.threads, L2: on.l2}
	for name, t := range p.g.Initializers {
		l.Env.Set(name, ops.FromConst(t))
	}
	for _, name := range u.inputs {
		t := args[name].Tensor
		if u.byValue(name, t) {
			l.Env.Set(name, ops.FromConst(t))
			continue
		}
		c.params = append(c.params, name)
		l.Env.Set(name, ops.FromOp(b.Parameter(name, t.Lit.Shape())))
	}
	if err := l.LowerNodes(b, u.nodes); err != nil {
		return nil, err
	}
	c.consts = map[string]*onnx.Tensor{}
	c.results = map[string]int{}
	var roots []*xb.Op
	for _, name := range u.outputs {
		v, _ := l.Env.Get(name)
		if v.Const != nil {
			c.consts[name] = v.Const
			continue
		}
		c.results[name] = len(roots)
		roots = append(roots, v.In(b))
	}
	if len(roots) == 0 {
		return nil, nil
	}
	return b.Build(b.Tuple(roots...))
}

func (s *Session) refuse(p *plan, u *unit, c *compiled, err error) {
	if !errors.Is(err, ops.ErrUnsupported) && !errors.Is(err, ops.ErrNotConst) && s.opts.NoSoftPlacement {
		c.err = fmt.Errorf("%s: %w", u, err)
		return
	}
	var ne *ops.NodeError
	if !s.opts.NoSoftPlacement && len(u.nodes) > 1 && errors.As(err, &ne) {
		// Only the node that failed goes op by op: the rest of the
		// cluster is clustered again without it and compiled (a Loop
		// whose body slices by values known only at run time no longer
		// takes the model's dense layers with it).
		if c.split = p.splitAt(u, ne.Node, s.fallbackDevice()); c.split != nil {
			if s.opts.LogPlacement != nil {
				fmt.Fprintf(s.opts.LogPlacement, "%s splits: node %q (%s) runs op by op on eval:0 (%v); the rest as %s\n",
					u, ne.Node.Name, ne.Node.Op, err, unitNames(c.split))
			}
			return
		}
	}
	c.fallback = err
	if s.opts.LogPlacement != nil {
		fmt.Fprintf(s.opts.LogPlacement, "%s runs op by op on eval:0: %v\n", u, err)
	}
}

func (s *Session) dump(u *unit, key string, m *hlo.Module) {
	if err := os.MkdirAll(s.opts.DumpDir, 0o755); err != nil {
		return
	}
	name := filepath.Join(s.opts.DumpDir, fmt.Sprintf("%s.%s.hlo", u, key))
	_ = os.WriteFile(name, []byte(hlotext.Print(m, hlotext.PrintOptions{})), 0o644)
}

// runNode runs one node on concrete values: its host kernel, or its
// lowering on the evaluator.
func (s *Session) runNode(ctx context.Context, p *plan, n *onnx.Node, e *env) error {
	op := p.impl[n.Index]
	in := make([]*onnx.Value, len(n.Inputs))
	for i, name := range n.Inputs {
		if name == "" {
			continue
		}
		v, ok := e.get(name, p.g)
		if !ok {
			return fmt.Errorf("%s: input %q: %w", n.Describe(), name, errNoValue)
		}
		in[i] = v
	}
	var out []*onnx.Value
	if op.Host != nil {
		h := &ops.HostCtx{Node: n, Opset: p.opsets[n.Domain], In: in,
			Run: func(g *onnx.Graph, args []*onnx.Value) ([]*onnx.Value, error) {
				return s.runSubgraph(ctx, p, g, e, args)
			}}
		if err := runHost(op, h); err != nil {
			return err
		}
		out = h.Out
	} else {
		ts := make([]*onnx.Tensor, len(in))
		for i, v := range in {
			if v == nil {
				continue
			}
			if v.Kind != onnx.KindTensor {
				return fmt.Errorf("%s: input %d is a %s; the op takes tensors", n.Describe(), i, kindName(v.Kind))
			}
			ts[i] = v.Tensor
		}
		l := &ops.Lowerer{Opsets: p.opsets, Env: ops.NewEnv(nil)}
		res, err := l.Evaluate(n, ts)
		if err != nil {
			return err
		}
		for _, t := range res {
			if t == nil {
				out = append(out, nil)
			} else {
				out = append(out, onnx.TensorValue(t))
			}
		}
	}
	for i, name := range n.Outputs {
		if name == "" {
			continue
		}
		if i >= len(out) || out[i] == nil {
			return fmt.Errorf("%s: output %d (%q) was not produced", n.Describe(), i, name)
		}
		e.set(name, out[i])
	}
	return nil
}

// runSubgraph runs a subgraph of a node of p (an If branch, a Loop body)
// on concrete inputs, with p's values visible; its plan is made once.
func (s *Session) runSubgraph(ctx context.Context, p *plan, g *onnx.Graph, outer *env, args []*onnx.Value) ([]*onnx.Value, error) {
	if len(args) != len(g.Inputs) {
		return nil, fmt.Errorf("subgraph %q: %d inputs given, it has %d", g.Name, len(args), len(g.Inputs))
	}
	sp, ok := p.subs.Load(g)
	if !ok {
		np, err := newPlan(g, p.opsets, s.devs, !s.opts.NoSoftPlacement, p.types)
		if err != nil {
			return nil, err
		}
		sp, _ = p.subs.LoadOrStore(g, np)
	}
	sub := sp.(*plan)
	e := &env{vals: map[string]*onnx.Value{}, parent: outer}
	for i, vi := range g.Inputs {
		if args[i] != nil {
			e.vals[vi.Name] = args[i]
		}
	}
	if err := s.runPlan(ctx, sub, e); err != nil {
		return nil, err
	}
	out := make([]*onnx.Value, len(g.Outputs))
	for i, vi := range g.Outputs {
		v, ok := e.get(vi.Name, g)
		if !ok {
			return nil, fmt.Errorf("subgraph %q: output %q was not computed", g.Name, vi.Name)
		}
		out[i] = v
	}
	return out, nil
}

// runHost runs a host kernel; a panic in it (a bug on some input) becomes
// an error naming the node rather than crossing the API.
func runHost(op *ops.Op, h *ops.HostCtx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: host kernel panicked: %v", h.Node.Describe(), r)
		}
	}()
	return op.Host(h)
}

// ProfileTable is, for each compiled cluster of the main graph (compiled
// with Options.Compile.Profile), the table of its n slowest kernels (all
// of them where n is zero or less).
func (s *Session) ProfileTable(n int) string {
	var b strings.Builder
	for _, u := range s.plan.units {
		u.cache.Range(func(key, v any) bool {
			c := v.(*compiled)
			if c.exe != nil {
				fmt.Fprintf(&b, "%s (signature %s):\n%s", u, key, c.exe.ProfileTable(n))
			}
			return true
		})
	}
	return b.String()
}

// fallbackDevice is the device a node set apart from a cluster runs on:
// the highest-priority device that does not compile.
func (s *Session) fallbackDevice() *Device {
	for _, d := range s.devs {
		if !d.Compiled {
			return d
		}
	}
	return nil
}
