package cpu

import (
	"maps"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/hlobin"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// TestLoadFollowsPlan: a module compiled with RecordPlan, written as
// hlobin and read back, loads following the plan (every
// lowering as recorded, the same schedule) and computes the compiled
// executable's bits; the plan covers the computations control flow
// calls.
func TestLoadFollowsPlan(t *testing.T) {
	for name, text := range pipelineModules(t) {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		x, err := Compile(m, Options{RecordPlan: true})
		if err != nil || x.Plan() == nil {
			t.Fatalf("%s: %v (plan %v)", name, err, x.Plan())
		}
		data, err := hlobin.Encode(x.Module())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mod, err := hlobin.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		y, err := Load(mod, x.Plan(), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !maps.Equal(x.Lowering, y.Lowering) {
			t.Errorf("%s: loaded lowerings %v, compiled %v", name, y.Lowering, x.Lowering)
		}
		for i := range x.steps {
			if x.steps[i].in.Name != y.steps[i].in.Name {
				t.Fatalf("%s: step %d is %s, compiled %s", name, i, y.steps[i].in.Name, x.steps[i].in.Name)
			}
		}
		args := eval.RandomArguments(m, 3)
		want, err := x.Run(args, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := y.Run(args, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameBits(t, x.Module().Entry.Root, got, want)
	}
}

// TestLoadRefusesBadPlans: a plan that does not fit the module is an
// error naming what does not fit, never a panic.
func TestLoadRefusesBadPlans(t *testing.T) {
	m, err := hlotext.Parse(controlFlow, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{RecordPlan: true})
	if err != nil {
		t.Fatal(err)
	}
	mod := x.Module()
	entry := mod.Entry.Name
	for _, c := range []struct {
		name, want string
		edit       func(p *Plan)
	}{
		{"no plan", "no plan", func(p *Plan) { p.Lowerings = nil }},
		{"short schedule", "schedules", func(p *Plan) { p.Schedules[entry] = p.Schedules[entry][1:] }},
		{"unknown name", "not one of its instructions", func(p *Plan) { p.Schedules[entry][0] = "nothing" }},
		{"operand after", "before its operand", func(p *Plan) {
			s := p.Schedules[entry]
			s[0], s[len(s)-1] = s[len(s)-1], s[0]
		}},
	} {
		p := clonePlan(x.Plan())
		c.edit(p)
		if _, err := Load(mod, p, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	// A lowering the plan names that is not the opcode's falls back to
	// the table, tried in turn: the same kernels.
	p := clonePlan(x.Plan())
	for k := range p.Lowerings {
		p.Lowerings[k] = "no-such-lowering"
	}
	y, err := Load(mod, p, Options{})
	if err != nil || !maps.Equal(y.Lowering, x.Lowering) {
		t.Errorf("unknown lowerings: %v, lowerings %v want %v", err, y.Lowering, x.Lowering)
	}
}

func clonePlan(p *Plan) *Plan {
	q := &Plan{Lowerings: maps.Clone(p.Lowerings), Schedules: map[string][]string{}}
	for k, v := range p.Schedules {
		q.Schedules[k] = append([]string(nil), v...)
	}
	return q
}
