package pass

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Pass is one named module transformation. Run reports whether it changed
// the module; it must leave a verifying module verifying.
type Pass interface {
	Name() string
	Run(m *hlo.Module) (changed bool, err error)
}

// funcPass adapts a function to Pass.
type funcPass struct {
	name string
	run  func(*hlo.Module) (bool, error)
}

func (p funcPass) Name() string                    { return p.name }
func (p funcPass) Run(m *hlo.Module) (bool, error) { return p.run(m) }
func (p funcPass) String() string                  { return p.name }

// Func returns a pass named name that runs fn.
func Func(name string, fn func(*hlo.Module) (bool, error)) Pass {
	return funcPass{name: name, run: fn}
}

// Fix is a fixed-point group: its passes run in order, again and again,
// until a whole round changes nothing (XLA's HloPassFix). A pipeline runs
// the members through its own checks, timers and observers.
type Fix struct {
	Label  string
	Passes []Pass
	// MaxRounds bounds the rounds (25 if zero, as XLA's HloPassFix); a
	// group still changing after that many is reported as an error, since
	// it means two rewrites undo each other.
	MaxRounds int
}

// Name is the group's name.
func (f *Fix) Name() string { return f.Label }

// Run runs the group on its own, without a pipeline's checks.
func (f *Fix) Run(m *hlo.Module) (bool, error) {
	return (&Pipeline{Label: f.Label, Passes: []Pass{f}}).RunWith(m, Options{})
}

func (f *Fix) maxRounds() int {
	if f.MaxRounds > 0 {
		return f.MaxRounds
	}
	return 25
}

// Order says that pass Before must run before pass After, and why. A
// pipeline checks its orders when it starts.
type Order struct {
	Before, After string
	Reason        string
}

// names lists every pass name in p's table, depth first, in order.
func names(passes []Pass, out []string) []string {
	for _, p := range passes {
		out = append(out, p.Name())
		switch g := p.(type) {
		case *Fix:
			out = names(g.Passes, out)
		case *Pipeline:
			out = names(g.Passes, out)
		}
	}
	return out
}

// checkOrders validates the table: unique names, and every Order whose
// passes are both present holds.
func checkOrders(passes []Pass, orders []Order) error {
	first := map[string]int{}
	last := map[string]int{}
	for i, n := range names(passes, nil) {
		if _, dup := first[n]; dup {
			return fmt.Errorf("pass name %q appears twice; run a pass twice under two names", n)
		}
		first[n], last[n] = i, i
	}
	for _, o := range orders {
		b, okB := first[o.Before]
		a, okA := last[o.After]
		if okB && okA && b >= a {
			return fmt.Errorf("pass %s must run before %s: %s", o.Before, o.After, o.Reason)
		}
	}
	return nil
}

// renamed is a pass under another name.
type renamed struct {
	Pass
	name string
}

func (r renamed) Name() string { return r.name }

// Rename returns p under a new name, so one pass can appear in a table
// twice ("early-dce", "late-dce").
func Rename(name string, p Pass) Pass { return renamed{Pass: p, name: name} }
