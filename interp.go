package axle

import (
	"sync/atomic"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// interpProgram runs a module on the reference evaluator. Each execution
// gets its own evaluator (it is not safe for concurrent use), so rng draws
// restart from the same seed on every execution, as on the cpu backend.
type interpProgram struct {
	m    *hlo.Module
	peak atomic.Int64 // the evaluator's high-water mark over executions
}

func (p *interpProgram) RunChecked(args []*hlo.Literal, donated []bool) (*hlo.Literal, error) {
	return p.RunOn(args, donated, nil, nil)
}

// RunOn evaluates under stop as device part (nil: the only one),
// measuring the live values.
func (p *interpProgram) RunOn(args []*hlo.Literal, _ []bool, stop *atomic.Bool, part *collective.Participant) (*hlo.Literal, error) {
	ev := eval.Evaluator{Interrupt: stop, MeasurePeak: true, Participant: part}
	if part != nil {
		ev.ReplicaID, ev.PartitionID = uint32(part.Replica), uint32(part.Partition)
	}
	out, err := ev.Run(p.m, args...)
	for n := ev.PeakBytes(); ; {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	return out, err
}

// Recycle does nothing: the evaluator allocates every value anew.
func (*interpProgram) Recycle(*hlo.Literal) {}

// PeakBytes is the largest high-water mark of an execution so far.
func (p *interpProgram) PeakBytes() int64 { return p.peak.Load() }
