package collective

import (
	"context"
	"fmt"
	"sync"
)

// Key names one exchange uniquely among all the launches a transport
// carries: every participant of a collective computes the same Key.
type Key struct {
	// Program tells executables apart (a fingerprint of the module).
	Program uint64
	// Launch counts the program's launches (every device of one launch
	// has the same).
	Launch uint64
	// Op is the collective instruction ("computation/instruction").
	Op string
	// Seq counts the instruction's executions in the launch on a device
	// (a collective in a loop body runs once per iteration).
	Seq uint64
	// Phase tells apart the exchanges of one execution (an all-reduce has
	// two).
	Phase uint32
}

func (k Key) String() string {
	return fmt.Sprintf("%s (launch %d, execution %d, phase %d)", k.Op, k.Launch, k.Seq, k.Phase)
}

// Message is bytes sent to, or received from, one device.
type Message struct {
	Peer int
	Data []byte
}

// Transport moves bytes between devices. Exchange sends every sends[i]
// to its peer and fills every recvs[j].Data, whose length must be what
// that peer sends, with what the peer sent under the same key. It
// returns once every receive is filled and every send has been taken, so
// the caller may then reuse both; or with an error naming the device it
// waited for, when ctx ends or a peer fails. Messages to self are
// allowed. A Transport is safe for concurrent use by all its devices.
type Transport interface {
	Exchange(ctx context.Context, self int, key Key, sends, recvs []Message) error
}

// Local is the Transport between devices of one process: a receiver
// copies straight from the sender's buffer (one copy per message, no
// serialization), and the sender waits until it has.
type Local struct {
	mu    sync.Mutex
	boxes map[boxKey]*box
}

type boxKey struct {
	key      Key
	from, to int
}

// box is one message in flight: data is set and ready closed by the
// sender; the receiver copies, sets err on a size mismatch, and closes
// taken.
type box struct {
	data  []byte
	ready chan struct{}
	taken chan struct{}
	err   error
}

// NewLocal returns an empty in-process transport.
func NewLocal() *Local { return &Local{boxes: make(map[boxKey]*box)} }

func (l *Local) box(k boxKey) *box {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.boxes[k]
	if b == nil {
		b = &box{ready: make(chan struct{}), taken: make(chan struct{})}
		l.boxes[k] = b
	}
	return b
}

func (l *Local) drop(k boxKey) {
	l.mu.Lock()
	delete(l.boxes, k)
	l.mu.Unlock()
}

// Exchange implements Transport.
func (l *Local) Exchange(ctx context.Context, self int, key Key, sends, recvs []Message) error {
	posted := make([]*box, len(sends))
	for i, m := range sends {
		b := l.box(boxKey{key, self, m.Peer})
		b.data = m.Data
		close(b.ready)
		posted[i] = b
	}
	err := l.receive(ctx, self, key, recvs)
	for i, b := range posted {
		if err != nil {
			break
		}
		select {
		case <-b.taken:
			err = b.err
		case <-ctx.Done():
			err = fmt.Errorf("device %d: device %d did not take its message at %s: %w", self, sends[i].Peer, key, context.Cause(ctx))
		}
	}
	if err != nil {
		for _, m := range sends {
			l.drop(boxKey{key, self, m.Peer})
		}
	}
	return err
}

func (l *Local) receive(ctx context.Context, self int, key Key, recvs []Message) error {
	for _, m := range recvs {
		k := boxKey{key, m.Peer, self}
		b := l.box(k)
		select {
		case <-b.ready:
		case <-ctx.Done():
			return fmt.Errorf("device %d: waited for device %d at %s: %w", self, m.Peer, key, context.Cause(ctx))
		}
		l.drop(k)
		if len(b.data) != len(m.Data) {
			b.err = fmt.Errorf("device %d sent %d bytes at %s, device %d expected %d (different programs or shapes?)",
				m.Peer, len(b.data), key, self, len(m.Data))
			close(b.taken)
			return b.err
		}
		copy(m.Data, b.data)
		close(b.taken)
	}
	return nil
}
