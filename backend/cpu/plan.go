package cpu

import (
	"fmt"

	"github.com/axle-ml/axle/backend/cpu/frontend"
	"github.com/axle-ml/axle/hlo"
)

// Plan is what compiling decided beyond the fused module: the lowering
// each instruction took and each computation's schedule. An
// ahead-of-time package stores it with the module it was made for, and
// Load follows it: no lowering is tried in turn, no schedule searched.
type Plan struct {
	// Lowerings maps "computation/instruction" to the name of the
	// lowering (the table's, lower_table.go) that took the instruction.
	Lowerings map[string]string
	// Schedules maps a computation's name to its instructions' names in
	// the order they run.
	Schedules map[string][]string
}

// planKey names in within its module.
func planKey(in *hlo.Instruction) string {
	if in.Parent == nil {
		return in.Name
	}
	return in.Parent.Name + "/" + in.Name
}

// Plan is what compiling x's module decided, if it was compiled with
// Options.RecordPlan (nil otherwise, and for an interpreted module).
func (x *Executable) Plan() *Plan { return x.plan }

// record notes that the lowering named name took in.
func (c *compiler) record(in *hlo.Instruction, name string) {
	if c.plan != nil && !c.follow {
		c.plan.Lowerings[planKey(in)] = name
	}
}

// lowerAsPlanned lowers in with the lowering the plan names, when
// following one. A lowering that declines on this machine (which the
// plan's did not) leaves in to the table, tried in turn.
func (c *compiler) lowerAsPlanned(in *hlo.Instruction) (lowered, string, bool) {
	if !c.follow {
		return lowered{}, "", false
	}
	name := c.plan.Lowerings[planKey(in)]
	for _, lw := range lowerings[in.Opcode] {
		if lw.name != name {
			continue
		}
		if l, ok := lw.lower(c, in); ok {
			if l.how != "" {
				return l, l.how, true
			}
			return l, lw.name, true
		}
	}
	return lowered{}, "", false
}

// schedule orders comp's instructions: as the plan says when following
// one, else the candidate order needing the smallest arena (recorded when
// recording).
func (c *compiler) schedule(comp *hlo.Computation, infos map[*hlo.Instruction]valueInfo) ([]*hlo.Instruction, *assignment, error) {
	if !c.follow {
		order, asg := bestSchedule(comp, infos)
		if c.plan != nil {
			names := make([]string, len(order))
			for i, in := range order {
				names[i] = in.Name
			}
			c.plan.Schedules[comp.Name] = names
		}
		return order, asg, nil
	}
	order, err := plannedOrder(comp, c.plan.Schedules[comp.Name])
	if err != nil {
		return nil, nil, err
	}
	vals := make([]valueInfo, len(order))
	for i, in := range order {
		vals[i] = infos[in]
	}
	return order, assign(vals, comp.Root), nil
}

// plannedOrder is comp's instructions in the order names gives, which
// must name each exactly once, operands first.
func plannedOrder(comp *hlo.Computation, names []string) ([]*hlo.Instruction, error) {
	if len(names) != len(comp.Instructions) {
		return nil, fmt.Errorf("cpu: the plan schedules %d instructions of computation %s, which has %d", len(names), comp.Name, len(comp.Instructions))
	}
	byName := make(map[string]*hlo.Instruction, len(comp.Instructions))
	for _, in := range comp.Instructions {
		byName[in.Name] = in
	}
	placed := make(map[*hlo.Instruction]bool, len(names))
	order := make([]*hlo.Instruction, len(names))
	for i, n := range names {
		in := byName[n]
		if in == nil || placed[in] {
			return nil, fmt.Errorf("cpu: the plan's schedule of computation %s names %q, not one of its instructions or twice", comp.Name, n)
		}
		for _, o := range in.Operands {
			if !placed[o] {
				return nil, fmt.Errorf("cpu: the plan's schedule of computation %s runs %s before its operand %s", comp.Name, n, o.Name)
			}
		}
		placed[in], order[i] = true, in
	}
	return order, nil
}

// Load lowers mod, a module compiled before (optimized and fused: an
// Executable's Module), following plan: the lowering each instruction
// took and the schedules. It needs no compiler; an instruction the plan
// left to the evaluator fails at load when none is linked.
func Load(mod *hlo.Module, plan *Plan, opts Options) (*Executable, error) {
	if mod.Entry == nil {
		return nil, fmt.Errorf("cpu: module %s has no entry computation", mod.Name)
	}
	if err := hlo.Verify(mod); err != nil {
		return nil, err
	}
	if plan == nil || plan.Lowerings == nil || plan.Schedules == nil {
		return nil, fmt.Errorf("cpu: load %s: no plan", mod.Name)
	}
	c := newCompiler(mod, opts)
	c.plan, c.follow = plan, true
	x, err := c.compile(mod.Entry)
	if err != nil {
		return nil, err
	}
	if len(c.fallbacks) > 0 && frontend.Registered() == nil {
		return nil, fmt.Errorf("cpu: load %s: %d instructions run on the evaluator, which this binary does not link: %v", mod.Name, len(c.fallbacks), c.fallbacks)
	}
	x.plan = plan
	return x, nil
}
