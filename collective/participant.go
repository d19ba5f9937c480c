package collective

import (
	"context"
	"sync"
)

// Participant is one device's part in one launch of a program: which
// replica and partition it runs, the assignment that places the others,
// and the transport that reaches them. Every collective the device's
// program executes, in its entry computation or in a loop body, goes
// through the same Participant, which numbers the executions of each
// instruction so that all participants agree on each exchange's Key.
type Participant struct {
	Device             int
	Replica, Partition int
	Assign             *Assignment
	Net                Transport
	// Ctx ends the launch: a cancelled caller or a failed device (the
	// runtime cancels every device's context when one fails).
	Ctx     context.Context
	Program uint64
	Launch  uint64

	mu  sync.Mutex
	seq map[string]uint64
}

// Key returns the key of the next execution of op on this device,
// phase 0; later phases of the same execution use Key.Phase.
func (p *Participant) Key(op string) Key {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seq == nil {
		p.seq = make(map[string]uint64)
	}
	n := p.seq[op]
	p.seq[op] = n + 1
	return Key{Program: p.Program, Launch: p.Launch, Op: op, Seq: n}
}

func (p *Participant) context() context.Context {
	if p.Ctx == nil {
		return context.Background()
	}
	return p.Ctx
}
