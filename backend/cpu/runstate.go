package cpu

import (
	"errors"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu/frontend"
	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/internal/runctl"
)

// runState is what the kernels of one execution frame share: the stop
// flag, the device's ids, the rng state, and the evaluator the fallback
// kernels run on. The evaluator is the compiler's (package frontend),
// made on first use: a binary without the compiler (an ahead-of-time
// package's) has none, and a kernel that needs it fails with
// errNoEvaluator rather than crash.
type runState struct {
	// Interrupt, when set, stops the execution (a cancelled context).
	Interrupt *atomic.Bool
	// ReplicaID and PartitionID are what replica-id and partition-id return.
	ReplicaID, PartitionID uint32
	// part is this device's part in a multi-device launch (nil: one
	// device); collectives exchange through it.
	part *collective.Participant
	// Seed drives rng and rng-get-and-update-state's initial state.
	Seed     uint64
	rngState runctl.RngState
	ev       frontend.Evaluator
}

var errNoEvaluator = errors.New("cpu: this instruction runs on the evaluator, which this binary does not link (it has no compiler)")

// setParticipant makes the frame one device's (nil: a single device).
func (s *runState) setParticipant(p *collective.Participant) {
	s.part = p
	s.ReplicaID, s.PartitionID = 0, 0
	if p != nil {
		s.ReplicaID, s.PartitionID = uint32(p.Replica), uint32(p.Partition)
	}
}

// RngGetAndUpdateState returns the 128-bit rng state (seeded from Seed at
// first use) and advances its low word by delta, as the instruction
// rng-get-and-update-state does (the evaluator's state machine).
func (s *runState) RngGetAndUpdateState(delta int64) [2]uint64 {
	return s.rngState.GetAndUpdate(s.Seed, delta)
}

// evaluator returns the frame's evaluator, polling the frame's stop flag.
func (s *runState) evaluator() (frontend.Evaluator, error) {
	if s.ev == nil {
		ev, err := newEvaluator(nil, false)
		if err != nil {
			return nil, err
		}
		s.ev = ev
	}
	s.ev.SetInterrupt(s.Interrupt)
	s.ev.SetParticipant(s.part)
	return s.ev, nil
}

// newEvaluator makes an evaluator with the registered compiler's.
func newEvaluator(stop *atomic.Bool, measurePeak bool) (frontend.Evaluator, error) {
	fc := frontend.Registered()
	if fc == nil {
		return nil, errNoEvaluator
	}
	return fc.NewEvaluator(stop, measurePeak), nil
}
