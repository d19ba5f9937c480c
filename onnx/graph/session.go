package graph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/ops"
)

// Options configure a Session.
type Options struct {
	// Backend is the compiled device's engine: "cpu" (the default) or
	// "interp" (the reference evaluator, still clustered).
	Backend string
	// Threads bounds the goroutines one cluster execution uses (0: all).
	Threads int
	// NoSoftPlacement makes a node its preferred device refuses fail the
	// load (and a cluster that fails to lower fail the run) instead of
	// running on the next device.
	NoSoftPlacement bool
	// NoClustering runs every node op by op on the evaluator device.
	NoClustering bool
	// LogPlacement, if set, receives each node's device and cluster at
	// load, and each cluster compiled or sent op by op at run time
	// (TensorFlow's log_device_placement).
	LogPlacement io.Writer
	// DumpDir, if set, receives each compiled cluster's HLO module, one
	// file per cluster and input signature.
	DumpDir string
	// MemoryLimit bounds the memory of the compiled device's executions
	// (axle.ClientOptions.MemoryLimit: 0 is 3/4 of physical memory).
	MemoryLimit int64
	// Compile are the options every cluster is compiled with (Profile
	// times each kernel: see Session.ProfileTable).
	Compile axle.CompileOptions
}

// Session is a loaded model, placed and clustered, ready to run from many
// goroutines. Executables are cached per cluster and input signature.
type Session struct {
	model *onnx.Model
	plan  *plan
	// overrides holds plans in which initializers a caller fed are inputs
	// (key: their sorted names), made on first use.
	overrides sync.Map
	devs      []*Device
	opts      Options
	cpu       *axle.Client
}

// Open loads the model file at path.
func Open(path string, opts Options) (*Session, error) {
	m, err := onnx.Load(path)
	if err != nil {
		return nil, err
	}
	return New(m, opts)
}

// New places and clusters a decoded model.
func New(m *onnx.Model, opts Options) (*Session, error) {
	if err := checkOpsets(m); err != nil {
		return nil, err
	}
	backend := opts.Backend
	if backend == "" {
		backend = "cpu"
	}
	cpu, err := axle.NewClient(axle.ClientOptions{Backend: backend, Threads: opts.Threads, MemoryLimit: opts.MemoryLimit})
	if err != nil {
		return nil, err
	}
	s := &Session{model: m, opts: opts, cpu: cpu}
	cpuDev := &Device{Name: "cpu:0", Priority: 50, Compiled: true, Supports: cpuSupports, client: cpu}
	evalDev := &Device{Name: "eval:0", Priority: 10, Supports: evalSupports}
	s.devs = []*Device{cpuDev, evalDev}
	if opts.NoClustering {
		s.devs = []*Device{evalDev}
	}
	slices.SortStableFunc(s.devs, func(a, b *Device) int { return b.Priority - a.Priority })
	p, err := newPlan(m.Graph, m.Opsets, s.devs, !opts.NoSoftPlacement, nil)
	if err != nil {
		cpu.Close()
		return nil, prefix(m, err)
	}
	s.plan = p
	if opts.LogPlacement != nil {
		s.logPlan(opts.LogPlacement, p, "")
	}
	return s, nil
}

func prefix(m *onnx.Model, err error) error {
	if m.Path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", m.Path, err)
}

// checkOpsets refuses opsets newer than Axle reads.
func checkOpsets(m *onnx.Model) error {
	for dom, v := range m.Opsets {
		limit, ok := ops.MaxOpsets[dom]
		if !ok {
			continue // a domain no node uses is harmless; a node using it fails at placement
		}
		if v > limit {
			return prefix(m, fmt.Errorf("opset %d of domain %q is newer than Axle reads (up to %d)", v, domainName(dom), limit))
		}
	}
	return nil
}

// Close releases the session's clients.
func (s *Session) Close() error {
	if s == nil || s.cpu == nil {
		return nil
	}
	return s.cpu.Close()
}

// Model is the decoded model.
func (s *Session) Model() *onnx.Model { return s.model }

// Inputs are the graph inputs a caller feeds.
func (s *Session) Inputs() []*onnx.ValueInfo { return s.model.Graph.Inputs }

// Outputs are the graph outputs Run returns.
func (s *Session) Outputs() []*onnx.ValueInfo { return s.model.Graph.Outputs }

// Run runs the graph on named inputs and returns every graph output by
// name. Inputs left out that have an initializer keep its value.
func (s *Session) Run(ctx context.Context, inputs map[string]*onnx.Value) (map[string]*onnx.Value, error) {
	g := s.model.Graph
	e := &env{vals: map[string]*onnx.Value{}}
	for name, v := range inputs {
		vi, ok := g.ValueInfo[name]
		_, isInit := g.Initializers[name]
		if !ok && !isInit {
			return nil, fmt.Errorf("input %q: the model has no such input (inputs: %s)", name, names(g.Inputs))
		}
		if err := checkInput(name, vi, v); err != nil {
			return nil, err
		}
		e.vals[name] = v
	}
	for _, vi := range g.Inputs {
		if _, ok := e.vals[vi.Name]; !ok {
			return nil, fmt.Errorf("input %q: not given", vi.Name)
		}
	}
	p, err := s.planFor(inputs)
	if err != nil {
		return nil, err
	}
	if err := s.runPlan(ctx, p, e); err != nil {
		return nil, prefix(s.model, err)
	}
	out := map[string]*onnx.Value{}
	for _, vi := range g.Outputs {
		v, ok := e.get(vi.Name, g)
		if !ok {
			return nil, fmt.Errorf("output %q was not computed", vi.Name)
		}
		out[vi.Name] = v
	}
	return out, nil
}

// RunOrdered runs the graph with inputs in the order of Inputs and
// returns the outputs in the order of Outputs.
func (s *Session) RunOrdered(ctx context.Context, inputs []*onnx.Value) ([]*onnx.Value, error) {
	g := s.model.Graph
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("%d inputs given, the model has %d (%s)", len(inputs), len(g.Inputs), names(g.Inputs))
	}
	m := map[string]*onnx.Value{}
	for i, vi := range g.Inputs {
		m[vi.Name] = inputs[i]
	}
	res, err := s.Run(ctx, m)
	if err != nil {
		return nil, err
	}
	out := make([]*onnx.Value, len(g.Outputs))
	for i, vi := range g.Outputs {
		out[i] = res[vi.Name]
	}
	return out, nil
}

func names(vis []*onnx.ValueInfo) string {
	s := ""
	for i, vi := range vis {
		if i > 0 {
			s += ", "
		}
		s += vi.Name
	}
	return s
}

// checkInput compares a fed value with the input's declared type: kind,
// element type and the concrete dimensions.
func checkInput(name string, vi *onnx.ValueInfo, v *onnx.Value) error {
	if v == nil {
		return fmt.Errorf("input %q: nil value", name)
	}
	if vi == nil || vi.Type == nil {
		return nil
	}
	t := vi.Type
	if t.Kind != v.Kind {
		return fmt.Errorf("input %q: got %v, the model declares a %s", name, v, kindName(t.Kind))
	}
	if v.Kind != onnx.KindTensor {
		return nil
	}
	if v.Tensor == nil {
		return fmt.Errorf("input %q: nil tensor", name)
	}
	if t.Elem != onnx.Undefined && v.Tensor.ElemType() != t.Elem {
		return fmt.Errorf("input %q: element type %v, the model declares %v", name, v.Tensor.ElemType(), t.Elem)
	}
	if !t.HasShape {
		return nil
	}
	d := v.Tensor.Dims()
	if len(d) != len(t.Dims) {
		return fmt.Errorf("input %q: shape %v, the model declares rank %d %s", name, d, len(t.Dims), declared(t))
	}
	for i, want := range t.Dims {
		if want >= 0 && d[i] != want {
			return fmt.Errorf("input %q: shape %v, the model declares %s", name, d, declared(t))
		}
	}
	return nil
}

func declared(t *onnx.Type) string {
	s := "["
	for i, d := range t.Dims {
		if i > 0 {
			s += ","
		}
		switch {
		case d >= 0:
			s += fmt.Sprint(d)
		case t.DimNames[i] != "":
			s += t.DimNames[i]
		default:
			s += "?"
		}
	}
	return s + "]"
}

func kindName(k onnx.Kind) string {
	switch k {
	case onnx.KindSequence:
		return "sequence"
	case onnx.KindOptional:
		return "optional"
	case onnx.KindMap:
		return "map"
	}
	return "tensor"
}

var errNoValue = errors.New("value not computed")

// planFor is the plan for a call: the load-time one, or, when the caller
// feeds a value for an initializer (an input with a default value, as
// IR-3 models list them), a plan in which those initializers are inputs
// rather than constants compiled into the clusters.
func (s *Session) planFor(inputs map[string]*onnx.Value) (*plan, error) {
	g := s.model.Graph
	var fed []string
	for name := range inputs {
		if _, ok := g.Initializers[name]; ok {
			fed = append(fed, name)
		}
	}
	if len(fed) == 0 {
		return s.plan, nil
	}
	sort.Strings(fed)
	key := strings.Join(fed, "\x00")
	if p, ok := s.overrides.Load(key); ok {
		return p.(*plan), nil
	}
	og := *g
	og.Initializers = map[string]*onnx.Tensor{}
	for name, t := range g.Initializers {
		if !slices.Contains(fed, name) {
			og.Initializers[name] = t
		}
	}
	og.Inputs = slices.Clone(g.Inputs)
	for _, name := range fed {
		og.Inputs = append(og.Inputs, &onnx.ValueInfo{Name: name})
	}
	p, err := newPlan(&og, s.model.Opsets, s.devs, !s.opts.NoSoftPlacement, nil)
	if err != nil {
		return nil, err
	}
	got, _ := s.overrides.LoadOrStore(key, p)
	return got.(*plan), nil
}
