package main

import (
	"fmt"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/spmd"
)

// spmdRun is a module axle run partitioned (package spmd): its
// arguments are made for the whole module and split by the parameters'
// shardings, its results reassembled by the root's, so that it prints
// what the unpartitioned module computes.
type spmdRun struct {
	params []spmd.Sharding
	root   spmd.Sharding
	// shape is the whole module's result shape: uneven tiles are padded,
	// so the pieces alone do not say it.
	shape hlo.Shape
}

// partitionForRun partitions m when mode says so ("on", or "auto" and
// the module carries shardings over global shapes: spmd.NeedsPartitioning).
// A module the partitioner cannot take runs unpartitioned with "auto"
// (every device computing the whole module, which its annotations
// allow), with the reason in note.
func partitionForRun(m *hlo.Module, mode string) (*hlo.Module, *spmdRun, string, error) {
	switch mode {
	case "off":
		return m, nil, "", nil
	case "auto":
		if !spmd.NeedsPartitioning(m) {
			return m, nil, "", nil
		}
	case "on":
	default:
		return nil, nil, "", fmt.Errorf("--spmd %q: want auto, on or off", mode)
	}
	pm, stats, err := partition(m)
	if err != nil {
		if mode == "on" {
			return nil, nil, "", err
		}
		return m, nil, fmt.Sprintf("spmd: not partitioned (%v): every device runs the whole module", err), nil
	}
	r := &spmdRun{shape: m.Entry.Root.Shape.Clone()}
	for _, p := range pm.Entry.Params {
		s, _, err := spmd.Of(p)
		if err != nil {
			return nil, nil, "", err
		}
		r.params = append(r.params, s)
	}
	if r.root, _, err = spmd.Of(pm.Entry.Root); err != nil {
		return nil, nil, "", err
	}
	note := fmt.Sprintf("spmd: partitioned over %d devices, %d collectives added", pm.NumPartitions, stats.Collectives)
	if len(stats.Fallbacks) > 0 {
		note += fmt.Sprintf("; on whole values (gathered): %v", stats.Fallbacks)
	}
	return pm, r, note, nil
}

// split gives each of x's devices its pieces of the whole arguments.
func (r *spmdRun) split(x *axle.Executable, args []*hlo.Literal, total int) ([][]*hlo.Literal, error) {
	out := make([][]*hlo.Literal, len(x.Devices()))
	for i, a := range args {
		pieces, err := spmd.Split(a, r.params[i], total)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		for k, d := range x.Devices() {
			out[k] = append(out[k], pieces[d.ID])
		}
	}
	return out, nil
}

// assemble turns every device's results into the whole results.
func (r *spmdRun) assemble(results [][]*hlo.Literal) ([]*hlo.Literal, error) {
	var out []*hlo.Literal
	for i := range results[0] {
		s, shape := r.root, r.shape
		if shape.IsTuple() {
			if i >= len(shape.Tuple) {
				return nil, fmt.Errorf("result %d is not in the module's result %s", i, r.shape.HumanString())
			}
			shape = shape.Tuple[i]
		}
		if s.Kind == spmd.TupleKind {
			if i >= len(s.Elements) {
				return nil, fmt.Errorf("result %d has no sharding", i)
			}
			s = s.Elements[i]
		}
		pieces := make([]*hlo.Literal, len(results))
		for d := range results {
			pieces[d] = results[d][i]
		}
		whole, err := spmd.AssembleShape(pieces, s, shape)
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", i, err)
		}
		out = append(out, whole)
	}
	return out, nil
}

// partition is spmd.PartitionWithStats, its result verified and a panic
// in it (a partitioner bug) an error, so that "auto" falls back to
// running the whole module rather than fail a module it could run.
func partition(m *hlo.Module) (pm *hlo.Module, stats spmd.Stats, err error) {
	defer func() {
		if r := recover(); r != nil {
			pm, err = nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	if pm, stats, err = spmd.PartitionWithStats(m); err != nil {
		return nil, stats, err
	}
	if err := hlo.Verify(pm); err != nil {
		return nil, stats, fmt.Errorf("the partitioned module does not verify: %w", err)
	}
	return pm, stats, nil
}
