package ops

import (
	"fmt"
	"sort"
	"sync"

	"github.com/axle-ml/axle/onnx"
)

// Op is one registered ONNX operator implementation.
type Op struct {
	Name   string // op_type
	Domain string // "" for ai.onnx; "ai.onnx.ml", "ai.onnx.preview.training", ...
	// Since is the first opset version of the op's domain this entry
	// serves; the entry with the highest Since not above the model's
	// opset is used. Most ops register once (Since 1) and branch on
	// Ctx.Opset where the op changed.
	Since int
	// Lower emits HLO for the node (nil: no lowering, host only).
	Lower func(c *Ctx) error
	// Host runs the node on concrete values (nil: run through Lower on the
	// evaluator).
	Host func(h *HostCtx) error
	// ConstInputs are the inputs whose values Lower needs at compile time.
	ConstInputs []int
	// PreferConst are inputs whose values Lower uses when known (an If's
	// condition: one branch instead of a conditional); the executor feeds
	// them by value where it can.
	PreferConst []int
	// ShapeInputs are the inputs of which Lower reads only the shape
	// (Shape, Size): their values need not be known to fold the output.
	ShapeInputs []int
	// Random marks ops whose outputs must not be folded or cached as
	// constants (RandomNormal, Bernoulli, Dropout in training).
	Random bool
	// Types lists the input element types the lowering supports (nil:
	// any numeric type); used by placement and the coverage table.
	Types []onnx.ElemType
}

// Key names the op for tables: "Conv", "ai.onnx.ml:LabelEncoder".
func (o *Op) Key() string {
	if o.Domain == "" {
		return o.Name
	}
	return o.Domain + ":" + o.Name
}

var (
	regMu    sync.RWMutex
	registry = map[string][]*Op{} // Key -> entries sorted by Since
)

// Register adds an op implementation; it panics on a duplicate (Name,
// Domain, Since), a programming error caught by any test run.
func Register(o Op) {
	if o.Domain == "ai.onnx" {
		o.Domain = ""
	}
	if o.Since == 0 {
		o.Since = 1
	}
	if o.Lower == nil && o.Host == nil {
		panic("ops: " + o.Key() + " registered with neither Lower nor Host")
	}
	regMu.Lock()
	defer regMu.Unlock()
	k := o.Key()
	for _, e := range registry[k] {
		if e.Since == o.Since {
			panic(fmt.Sprintf("ops: %s since %d registered twice", k, o.Since))
		}
	}
	op := o
	registry[k] = append(registry[k], &op)
	sort.Slice(registry[k], func(i, j int) bool { return registry[k][i].Since < registry[k][j].Since })
}

// Lookup finds the implementation of domain:name for the given opset
// version of its domain: the entry with the highest Since ≤ opset.
func Lookup(domain, name string, opset int) (*Op, bool) {
	if domain == "ai.onnx" {
		domain = ""
	}
	regMu.RLock()
	defer regMu.RUnlock()
	k := name
	if domain != "" {
		k = domain + ":" + name
	}
	var best *Op
	for _, e := range registry[k] {
		if e.Since <= opset {
			best = e
		}
	}
	return best, best != nil
}

// All lists every registered implementation, sorted by key and Since.
func All() []*Op {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []*Op
	for _, es := range registry {
		out = append(out, es...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key() != out[j].Key() {
			return out[i].Key() < out[j].Key()
		}
		return out[i].Since < out[j].Since
	})
	return out
}

// MaxOpset is the newest ai.onnx opset version Axle reads.
const MaxOpset = 28

// MaxOpsets is the newest version Axle reads per domain.
var MaxOpsets = map[string]int{
	"":                         MaxOpset,
	"ai.onnx.ml":               5,
	"ai.onnx.preview.training": 1,
	"ai.onnx.preview":          1,
}
