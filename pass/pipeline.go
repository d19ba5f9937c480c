package pass

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Pipeline is one ordered table of passes; *Fix entries are fixed-point
// groups. A Pipeline is itself a Pass, so pipelines nest.
type Pipeline struct {
	Label  string
	Passes []Pass
	// Orders are the ordering constraints between passes, checked when the
	// pipeline starts.
	Orders []Order
}

// Options control a pipeline run. The zero value runs every pass with no
// checks, which is what production compiles do.
type Options struct {
	// Verify runs the verifier on the input and after every pass that
	// changed the module (always on in tests).
	Verify bool
	// CheckUnchanged prints the module before each pass and fails if a
	// pass that reported "unchanged" changed the text.
	CheckUnchanged bool
	// Only, if not empty, names the passes to run (naming a group runs
	// all of its members); Skip names passes not to run.
	Only, Skip []string
	// Observers see the module after every pass that ran (dumpers).
	Observers []Observer
	// Timings, if not nil, accumulates per-pass time.
	Timings *Timings
}

// Event is one pass run, as observers see it.
type Event struct {
	Seq     int // 1-based position among the pass runs of this pipeline run
	Pass    string
	Changed bool
	Module  *hlo.Module
	Elapsed time.Duration
}

// Observer is called after each pass run.
type Observer func(Event) error

// Name is the pipeline's label.
func (p *Pipeline) Name() string { return p.Label }

// Run runs the pipeline with default options.
func (p *Pipeline) Run(m *hlo.Module) (bool, error) { return p.RunWith(m, Options{}) }

// PassNames lists every pass of the table, groups before their members.
func (p *Pipeline) PassNames() []string { return names(p.Passes, nil) }

// RunWith runs the pipeline on m.
func (p *Pipeline) RunWith(m *hlo.Module, opts Options) (bool, error) {
	if err := checkOrders(p.Passes, p.allOrders(nil)); err != nil {
		return false, fmt.Errorf("pipeline %s: %w", p.Label, err)
	}
	if len(opts.Only)+len(opts.Skip) > 0 { // (a compile names none: no list to make)
		known := p.PassNames()
		for _, n := range append(slices.Clone(opts.Only), opts.Skip...) {
			if !slices.Contains(known, n) {
				return false, fmt.Errorf("pipeline %s has no pass %q (passes: %s)", p.Label, n, strings.Join(known, ", "))
			}
		}
	}
	if opts.Verify {
		if err := hlo.Verify(m); err != nil {
			return false, fmt.Errorf("pipeline %s: input module: %w", p.Label, err)
		}
	}
	r := &runner{opts: opts, m: m}
	return r.list(p.Passes, len(opts.Only) == 0)
}

// allOrders is p's orders and those of the pipelines nested in it: a
// nested pipeline's table is run by the outer one, so its orders are
// checked there.
func (p *Pipeline) allOrders(out []Order) []Order {
	out = append(out, p.Orders...)
	for _, ps := range p.Passes {
		if q, ok := ps.(*Pipeline); ok {
			out = q.allOrders(out)
		}
	}
	return out
}

type runner struct {
	opts Options
	m    *hlo.Module
	seq  int
}

// list runs passes in order; selected says whether an enclosing group was
// named in Only (or Only is empty).
func (r *runner) list(passes []Pass, selected bool) (bool, error) {
	changed := false
	for _, ps := range passes {
		if slices.Contains(r.opts.Skip, ps.Name()) {
			continue
		}
		sel := selected || slices.Contains(r.opts.Only, ps.Name())
		var c bool
		var err error
		switch g := ps.(type) {
		case *Fix:
			c, err = r.fix(g, sel)
		case *Pipeline:
			c, err = r.list(g.Passes, sel)
		default:
			if sel {
				c, err = r.one(ps)
			}
		}
		if err != nil {
			return changed, err
		}
		changed = changed || c
	}
	return changed, nil
}

func (r *runner) fix(f *Fix, selected bool) (bool, error) {
	changed := false
	for round := 0; round < f.maxRounds(); round++ {
		c, err := r.list(f.Passes, selected)
		if err != nil || !c {
			return changed, err
		}
		changed = true
	}
	return changed, fmt.Errorf("fixed-point group %s still changes the module after %d rounds", f.Label, f.maxRounds())
}

// one runs a single pass with the checks the options ask for.
func (r *runner) one(ps Pass) (bool, error) {
	var before string
	if r.opts.CheckUnchanged {
		before = snapshot(r.m)
	}
	start := time.Now()
	changed, err := ps.Run(r.m)
	elapsed := time.Since(start)
	if err != nil {
		return false, fmt.Errorf("pass %s: %w", ps.Name(), err)
	}
	r.seq++
	r.opts.Timings.add(ps.Name(), changed, elapsed)
	if r.opts.CheckUnchanged && !changed {
		if after := snapshot(r.m); after != before {
			return false, fmt.Errorf("pass %s reported no change but changed the module: %s", ps.Name(), firstDifference(before, after))
		}
	}
	if r.opts.Verify && changed {
		if err := hlo.Verify(r.m); err != nil {
			return false, fmt.Errorf("after pass %s: %w", ps.Name(), err)
		}
	}
	ev := Event{Seq: r.seq, Pass: ps.Name(), Changed: changed, Module: r.m, Elapsed: elapsed}
	for _, o := range r.opts.Observers {
		if err := o(ev); err != nil {
			return false, fmt.Errorf("after pass %s: %w", ps.Name(), err)
		}
	}
	return changed, nil
}

// firstDifference quotes the first line that differs between two texts.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d was %q, is %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines became %d", len(al), len(bl))
}

// snapshot is the module's text with large constants elided, followed by
// the identity of every constant's literal: cheap on modules with big
// weights, yet it sees any edit (passes replace literals, never mutate
// them).
func snapshot(m *hlo.Module) string {
	var b strings.Builder
	b.WriteString(hlotext.Print(m, hlotext.PrintOptions{ElideLargeConstants: true}))
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Literal != nil {
				fmt.Fprintf(&b, "%s=%p\n", in.Name, in.Literal)
			}
		}
	}
	return b.String()
}
