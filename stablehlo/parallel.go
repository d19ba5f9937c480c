package stablehlo

import (
	"errors"
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Collectives are converted by simulating the StableHLO process grid in
// one HLO computation. Outside interpreter.run_parallel a program is the
// grid's only process: every collective sees a group of itself. Inside,
// each process (replica r, partition p) runs its program inlined into the
// same computation; the processes are converted in lockstep, each on its
// own goroutine holding the one baton in turn, and a collective op is a
// rendezvous: every process submits its operands, and once all have
// arrived the results are built from the members' instructions (a map of
// the reducer over the members' operands, a concatenation, a slice, ...).
// No HLO collective remains, so both backends run the result.

func init() {
	register(convertRunParallel, "interpreter.run_parallel")
	register(convertProcessID(true), "stablehlo.replica_id")
	register(convertProcessID(false), "stablehlo.partition_id")
	register(convertInfeed, "stablehlo.infeed")
	register(convertOutfeed, "stablehlo.outfeed")
	for _, name := range []string{"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
		"collective_permute", "collective_broadcast", "collective_reduce", "send", "recv"} {
		register(convertCollective, "stablehlo."+name)
	}
}

// process is one process of the grid.
type process struct {
	replica, partition int
	grid               *grid
	resume             chan rendezvous // the coordinator's answer to a request
	yield              chan *request   // a request, or nil when finished
	results            []*hlo.Instruction
	err                error
}

type grid struct {
	replicas, partitions int
	procs                []*process
	infeed               []*mlir.Op // run_parallel's infeed queue: functions giving each infeed's values
}

// request is a collective a process waits at.
type request struct {
	op  *mlir.Op
	ins []*hlo.Instruction
	s   *scope
	p   *process
}

type rendezvous struct {
	results []*hlo.Instruction
	err     error
}

var errAborted = errors.New("another process failed")

// soleProcess is the grid of a program run alone.
var soleProcess = &process{grid: &grid{replicas: 1, partitions: 1}}

func (s *scope) process() *process {
	if s.proc == nil {
		return soleProcess
	}
	return s.proc
}

func convertProcessID(replica bool) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		sh, err := resultShape(op, 0)
		if err != nil {
			return nil, err
		}
		p := s.process()
		v := p.partition
		if replica {
			v = p.replica
		}
		return []*hlo.Instruction{s.scalar(sh.DType, float64(v))}, nil
	}
}

// convertCollective resolves a collective: at once for a sole process, at
// the rendezvous of all processes inside run_parallel.
func convertCollective(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	req := &request{op: op, ins: ins, s: s, p: s.process()}
	if s.proc == nil {
		if s.outer != nil && s.c.parallel {
			return nil, fmt.Errorf("collective inside a region of a parallel program: %w", ErrUnsupported)
		}
		out, err := resolve([]*request{req})
		if err != nil {
			return nil, err
		}
		return out[0], nil
	}
	s.proc.yield <- req
	r := <-s.proc.resume
	return r.results, r.err
}

// convertRunParallel runs programs[r][p] as process (r, p), taking its
// arguments from the operands in order and giving its results in order.
func convertRunParallel(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	if s.proc != nil || s.outer != nil {
		return nil, fmt.Errorf("nested run_parallel: %w", ErrUnsupported)
	}
	rows, ok := op.Attr("programs").(mlir.ArrayAttr)
	if !ok || len(rows.Elems) == 0 {
		return nil, fmt.Errorf("run_parallel without programs")
	}
	args, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	g := &grid{replicas: len(rows.Elems)}
	if q, ok := op.Attr("infeed").(mlir.ArrayAttr); ok {
		for _, e := range q.Elems {
			f := s.c.funcs[stringAttr(e)]
			if f == nil {
				return nil, fmt.Errorf("run_parallel infeed %v not found", e)
			}
			g.infeed = append(g.infeed, f)
		}
	}
	var funcs []*mlir.Op
	for r, row := range rows.Elems {
		cols, ok := row.(mlir.ArrayAttr)
		if !ok || (r > 0 && len(cols.Elems) != g.partitions) {
			return nil, fmt.Errorf("run_parallel programs are not a grid")
		}
		g.partitions = len(cols.Elems)
		for p, e := range cols.Elems {
			f := s.c.funcs[stringAttr(e)]
			if f == nil {
				return nil, fmt.Errorf("run_parallel program %v not found", e)
			}
			funcs = append(funcs, f)
			g.procs = append(g.procs, &process{replica: r, partition: p, grid: g,
				resume: make(chan rendezvous), yield: make(chan *request)})
		}
	}
	s.c.parallel = true
	defer func() { s.c.parallel = false }()
	for i, p := range g.procs {
		body, err := funcBody(funcs[i])
		if err != nil {
			return nil, err
		}
		if len(body.Args) > len(args) {
			return nil, fmt.Errorf("run_parallel has too few operands for its programs")
		}
		go p.run(s, funcs[i], args[:len(body.Args)])
		args = args[len(body.Args):]
	}
	if err := g.coordinate(); err != nil {
		return nil, err
	}
	var out []*hlo.Instruction
	for _, p := range g.procs {
		out = append(out, p.results...)
	}
	return out, nil
}

// run converts the process's program once the coordinator first resumes it.
func (p *process) run(s *scope, f *mlir.Op, args []*hlo.Instruction) {
	if r := <-p.resume; r.err != nil {
		p.err = r.err
		p.yield <- nil
		return
	}
	inner := newScope(s.c, s.comp, nil)
	inner.entry = s.entry
	inner.proc = p
	defer func() {
		// A panic on this goroutine would escape every recover of the
		// converter: it becomes the process's error.
		if r := recover(); r != nil {
			p.results, p.err = nil, fmt.Errorf("%s: converting %s: %v", s.c.pos, s.c.opName, r)
		}
		p.yield <- nil
	}()
	p.results, p.err = inner.inline(f, args)
}

// coordinate passes the baton to each running process in turn until all
// have finished or wait at a collective, then resolves the collective.
func (g *grid) coordinate() error {
	answers := make(map[*process]rendezvous)
	running := map[*process]bool{}
	for _, p := range g.procs {
		running[p] = true
	}
	var firstErr error
	for len(running) > 0 {
		var waiting []*request
		for _, p := range g.procs {
			if !running[p] {
				continue
			}
			p.resume <- answers[p]
			if req := <-p.yield; req != nil {
				waiting = append(waiting, req)
				continue
			}
			delete(running, p)
			if p.err != nil && firstErr == nil {
				firstErr = p.err
			}
		}
		if len(waiting) == 0 {
			break
		}
		answers = map[*process]rendezvous{}
		out, err := resolve(waiting)
		if err == nil && firstErr != nil {
			err = errAborted
		}
		if err == nil && len(waiting) != len(running) {
			err = fmt.Errorf("%s: %d of %d processes reached the collective", waiting[0].op.Pos, len(waiting), len(running))
		}
		for i, req := range waiting {
			if err != nil {
				answers[req.p] = rendezvous{err: err}
			} else {
				answers[req.p] = rendezvous{results: out[i]}
			}
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// convertInfeed takes the next function of run_parallel's infeed queue
// (processes read it in turn, as the baton passes): its results, then a
// token.
func convertInfeed(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	g := s.process().grid
	if len(g.infeed) == 0 {
		return nil, fmt.Errorf("infeed with no queue (only run_parallel's infeed attribute gives one): %w", ErrUnsupported)
	}
	f := g.infeed[0]
	g.infeed = g.infeed[1:]
	vals, err := s.inline(f, nil)
	if err != nil {
		return nil, err
	}
	return append(vals, s.add(hlo.OpAfterAll, hlo.TokenShape(), nil)), nil
}

// convertOutfeed consumes its values: nothing reads an outfeed here.
func convertOutfeed(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	if _, err := s.operands(op); err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpAfterAll, hlo.TokenShape(), nil)}, nil
}
