package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/ops"
)

// plan is a graph's placement and clustering, made once at load.
type plan struct {
	g        *onnx.Graph
	opsets   map[string]int
	impl     []*ops.Op      // per node
	dev      []*Device      // per node
	why      []string       // per node: why a preferred device refused it
	uses     [][]string     // per node: values it reads (inputs, then its subgraphs' outer references)
	producer map[string]int // value -> index of the node producing it
	units    []*unit        // in execution order
	unitOf   []int          // node index -> unit index in units
	free     []string       // values the graph reads from enclosing scopes
	subs     sync.Map       // *onnx.Graph -> *plan, for host control flow
	types    *typeInfo
}

// unit is what the executor runs as one step: a cluster of nodes on a
// compiled device, or one node elsewhere.
type unit struct {
	id        int
	name      string       // set for a split cluster's parts (splitAt)
	nodes     []*onnx.Node // in graph order
	dev       *Device
	inputs    []string             // values read from outside the unit
	outputs   []string             // values produced here and read outside (or graph outputs)
	constArgs map[string]constNeed // inputs fed by value (in the cache key)
	cache     sync.Map             // signature -> *compiled
	cached    atomic.Int64         // entries in cache
}

// constNeed says how much a lowering in a unit wants an input's value.
type constNeed uint8

const (
	// needValue: a lowering cannot do without it (a Reshape's shape).
	needValue constNeed = iota + 1
	// preferValue: a lowering uses it when known (an If's condition).
	preferValue
)

// byValue says whether input t of the unit is fed by value: always when a
// lowering needs it (if it is small enough to fold), and when one only
// prefers it, for small integer or boolean tensors, whose values repeat
// from call to call (a sample rate, a flag), so that the cache keyed by
// them stays small.
func (u *unit) byValue(name string, t *onnx.Tensor) bool {
	n := t.Lit.Shape().NumElements()
	switch u.constArgs[name] {
	case needValue:
		return n <= ops.FoldLimit
	case preferValue:
		d := t.Lit.DType()
		return n <= 16 && (d.IsInteger() || d.IsPred())
	}
	return false
}

func (u *unit) String() string {
	if u.name != "" {
		return u.name
	}
	return fmt.Sprintf("cluster_%d", u.id)
}

// splitAt clusters u's nodes again with node bad, one of them, on the
// fallback device (nodes outside u are held off the compiled device, so
// nothing merges across u's edges): the units to run instead of u, in
// order, named after u. nil when bad is not u's or nothing would change.
func (p *plan) splitAt(u *unit, bad *onnx.Node, fallback *Device) []*unit {
	if fallback == nil || bad.Index < 0 || bad.Index >= len(p.dev) || p.dev[bad.Index] == fallback {
		return nil
	}
	mine := map[int]bool{}
	for _, n := range u.nodes {
		mine[n.Index] = true
	}
	if !mine[bad.Index] {
		return nil
	}
	sp := &plan{g: p.g, opsets: p.opsets, impl: p.impl, uses: p.uses, producer: p.producer, free: p.free, types: p.types,
		dev: slices.Clone(p.dev), why: p.why}
	for i := range sp.dev {
		if !mine[i] || i == bad.Index {
			sp.dev[i] = fallback
		}
	}
	sp.cluster()
	var units []*unit
	for _, su := range sp.units {
		if mine[su.nodes[0].Index] {
			su.name = fmt.Sprintf("%s.%d", u, len(units))
			units = append(units, su)
		}
	}
	return units
}

// unitNames lists units' names.
func unitNames(units []*unit) string {
	names := make([]string, len(units))
	for i, u := range units {
		names[i] = u.String()
	}
	return strings.Join(names, ", ")
}

// newPlan places and clusters g's nodes. outer is the enclosing graph's
// type information (nil for the main graph).
func newPlan(g *onnx.Graph, opsets map[string]int, devs []*Device, soft bool, outer *typeInfo) (*plan, error) {
	p := &plan{g: g, opsets: opsets, producer: map[string]int{}, types: inferTypes(g, outer)}
	defined := map[string]bool{}
	for _, vi := range g.Inputs {
		defined[vi.Name] = true
	}
	for name := range g.Initializers {
		defined[name] = true
	}
	freeSet := map[string]bool{}
	for i, n := range g.Nodes {
		op, err := resolve(n, opsets)
		if err != nil {
			return nil, err
		}
		p.impl = append(p.impl, op)
		uses := slices.Clone(n.Inputs)
		for _, sub := range n.Subgraphs() {
			uses = append(uses, sub.FreeVars()...)
		}
		p.uses = append(p.uses, uses)
		for _, v := range uses {
			if v != "" && !defined[v] {
				if _, ok := p.producer[v]; !ok && !freeSet[v] {
					freeSet[v] = true
					p.free = append(p.free, v)
				}
			}
		}
		for _, out := range n.Outputs {
			if out != "" {
				p.producer[out] = i
				defined[out] = true
			}
		}
		d, why, err := place(n, op, devs, soft, p.types)
		if err != nil {
			return nil, err
		}
		p.dev = append(p.dev, d)
		p.why = append(p.why, why)
	}
	p.cluster()
	return p, nil
}

func resolve(n *onnx.Node, opsets map[string]int) (*ops.Op, error) {
	v, ok := opsets[n.Domain]
	if !ok {
		if n.Domain != "" {
			return nil, fmt.Errorf("%s: domain %q is not imported by the model", n.Describe(), n.Domain)
		}
		v = 1
	}
	op, ok := ops.Lookup(n.Domain, n.Op, v)
	if !ok {
		if _, known := ops.Lookup(n.Domain, n.Op, 1<<30); known {
			return nil, fmt.Errorf("%s: no implementation for opset %d of domain %q", n.Describe(), v, domainName(n.Domain))
		}
		return nil, fmt.Errorf("%s: unknown op %s in domain %q", n.Describe(), n.Op, domainName(n.Domain))
	}
	return op, nil
}

func domainName(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

// place takes the highest-priority device that supports the node; with
// soft placement off, a refusal by the first device fails the load.
func place(n *onnx.Node, op *ops.Op, devs []*Device, soft bool, t *typeInfo) (*Device, string, error) {
	var refusals []string
	for _, d := range devs {
		err := d.Supports(n, op, t)
		if err == nil {
			return d, strings.Join(refusals, "; "), nil
		}
		if !soft {
			return nil, "", fmt.Errorf("%s cannot run on %s: %v (soft placement is off)", n.Describe(), d.Name, err)
		}
		refusals = append(refusals, d.Name+": "+err.Error())
	}
	return nil, "", fmt.Errorf("%s: no device can run it (%s)", n.Describe(), strings.Join(refusals, "; "))
}

// cluster forms the units: compiled nodes merge along edges unless the
// merge would make a cycle through a node outside the pair; the rest are
// units of one node. Units are then ordered topologically.
func (p *plan) cluster() {
	var froms, tos []int
	for j := range p.g.Nodes {
		for _, v := range p.uses[j] {
			if i, ok := p.producer[v]; ok && i != j {
				froms, tos = append(froms, i), append(tos, j)
			}
		}
	}
	rep, succ := clusters(len(p.g.Nodes), froms, tos, func(from, to int) bool {
		return p.dev[from].Compiled && p.dev[to].Compiled && p.dev[from] == p.dev[to]
	})
	find := func(i int) int { return rep[i] }
	p.buildUnits(find, succ)
}

func (p *plan) buildUnits(find func(int) int, succ []map[int]bool) {
	byRep := map[int]*unit{}
	var reps []int
	for i, node := range p.g.Nodes {
		r := find(i)
		u, ok := byRep[r]
		if !ok {
			u = &unit{dev: p.dev[i]}
			byRep[r] = u
			reps = append(reps, r)
		}
		u.nodes = append(u.nodes, node)
	}
	// Kahn's algorithm over the units, lowest first node first.
	indeg := map[int]int{}
	for _, r := range reps {
		for s := range succ[r] {
			indeg[s]++
		}
	}
	var ready []int
	for _, r := range reps {
		if indeg[r] == 0 {
			ready = append(ready, r)
		}
	}
	p.unitOf = make([]int, len(p.g.Nodes))
	for len(ready) > 0 {
		sort.Slice(ready, func(i, j int) bool { return byRep[ready[i]].nodes[0].Index < byRep[ready[j]].nodes[0].Index })
		r := ready[0]
		ready = ready[1:]
		u := byRep[r]
		u.id = len(p.units)
		p.units = append(p.units, u)
		for _, node := range u.nodes {
			p.unitOf[node.Index] = u.id
		}
		for s := range succ[r] {
			indeg[s]--
			if indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	p.unitIO()
}

// unitIO finds each unit's inputs, outputs and inputs fed by value.
func (p *plan) unitIO() {
	readOutside := map[string]bool{}
	for _, vi := range p.g.Outputs {
		readOutside[vi.Name] = true
	}
	for j := range p.g.Nodes {
		for _, v := range p.uses[j] {
			if i, ok := p.producer[v]; ok && p.unitOf[i] != p.unitOf[j] {
				readOutside[v] = true
			}
		}
	}
	for _, u := range p.units {
		inside := map[string]bool{}
		seen := map[string]bool{}
		for _, n := range u.nodes {
			for _, v := range p.uses[n.Index] {
				if v == "" || inside[v] || seen[v] {
					continue
				}
				if _, isInit := p.g.Initializers[v]; isInit {
					continue
				}
				seen[v] = true
				u.inputs = append(u.inputs, v)
			}
			for _, o := range n.Outputs {
				if o == "" {
					continue
				}
				inside[o] = true
				if readOutside[o] {
					u.outputs = append(u.outputs, o)
				}
			}
		}
		u.constArgs = p.constArgs(u)
	}
}

// constArgs: the unit's inputs whose values its lowerings need at compile
// time, found backwards from the nodes' ConstInputs through the unit's
// own nodes (TensorFlow's backwards constant analysis).
func (p *plan) constArgs(u *unit) map[string]constNeed {
	need := map[string]constNeed{}
	mark := func(v string, k constNeed) {
		if old, ok := need[v]; !ok || k < old {
			need[v] = k
		}
	}
	for k := len(u.nodes) - 1; k >= 0; k-- {
		n := u.nodes[k]
		op := p.impl[n.Index]
		for _, i := range op.ConstInputs {
			if i < len(n.Inputs) && n.Inputs[i] != "" {
				mark(n.Inputs[i], needValue)
			}
		}
		for _, i := range op.PreferConst {
			if i < len(n.Inputs) && n.Inputs[i] != "" {
				mark(n.Inputs[i], preferValue)
			}
		}
		var want constNeed
		for _, o := range n.Outputs {
			if k, ok := need[o]; ok && (want == 0 || k < want) {
				want = k
			}
		}
		if want == 0 {
			continue
		}
		for i, v := range n.Inputs {
			if v != "" && !slices.Contains(op.ShapeInputs, i) {
				mark(v, want)
			}
		}
	}
	out := map[string]constNeed{}
	for _, v := range u.inputs {
		if k, ok := need[v]; ok {
			out[v] = k
		}
	}
	return out
}
