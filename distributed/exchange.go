package distributed

import (
	"context"
	"fmt"

	"github.com/axle-ml/axle/collective"
)

// Exchange implements collective.Transport. Messages between devices of
// this process go through a collective.Local; the others over the peer
// process's connection, all peers' sends in parallel. It returns when
// every receive is filled and every send written; or with an error when
// ctx ends, a size differs, or a process of the job has failed (a
// *ProcessError, wrapped).
func (n *Node) Exchange(ctx context.Context, self int, key collective.Key, sends, recvs []collective.Message) error {
	if err := n.checkDevices(self, sends, recvs); err != nil {
		return err
	}
	if err := n.Err(); err != nil {
		return fmt.Errorf("device %d at %s: %w", self, key, err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(n.dead, func() { cancel(context.Cause(n.dead)) })()

	var local []collective.Message
	var waits []waiting
	for _, m := range recvs {
		p := n.ProcessOf(m.Peer)
		if p == n.rank {
			local = append(local, m)
			continue
		}
		if n.peers[p].left.Load() {
			n.withdraw(waits)
			return fmt.Errorf("device %d at %s: %w", self, key, n.peers[p].brokeErr(nil))
		}
		k := matchKey{key: key, from: m.Peer, to: self}
		waits = append(waits, waiting{k, n.match.post(k, m.Data)})
	}
	errs := make(chan error, len(sends)+1)
	pending := 0
	var localSends []collective.Message
	for _, m := range sends {
		p := n.ProcessOf(m.Peer)
		if p == n.rank {
			localSends = append(localSends, m)
			continue
		}
		pending++
		go func() { errs <- n.peers[p].send(ctx, key, self, m.Peer, m.Data) }()
	}
	if len(local)+len(localSends) > 0 {
		pending++
		go func() { errs <- n.loc.Exchange(ctx, self, key, localSends, local) }()
	}
	err := n.await(ctx, self, key, waits)
	if err != nil {
		cancel(err)
	}
	// Every send ends: written, or failed because the node failed and
	// closed its connections; the caller may then reuse the buffers.
	for ; pending > 0; pending-- {
		if e := <-errs; e != nil && err == nil {
			if ne := n.Err(); ne != nil {
				// A send cut off by the node's failure, which closed the
				// connections: the failure is the error, not the closed
				// connection the write found.
				e = ne
			}
			err = fmt.Errorf("device %d at %s: %w", self, key, e)
			cancel(err)
		}
	}
	return err
}

type waiting struct {
	k matchKey
	r *recv
}

func (n *Node) await(ctx context.Context, self int, key collective.Key, waits []waiting) error {
	for i, w := range waits {
		select {
		case <-w.r.done:
			if w.r.err != nil {
				n.withdraw(waits[i+1:])
				return fmt.Errorf("device %d at %s: %w", self, key, w.r.err)
			}
		case <-ctx.Done():
			n.withdraw(waits[i:])
			return fmt.Errorf("device %d: waited for device %d at %s: %w", self, w.k.from, key, context.Cause(ctx))
		}
	}
	return nil
}

// withdraw takes back receives an exchange no longer waits for; one a
// reader is filling is waited for, so that the buffer is the caller's
// again on return.
func (n *Node) withdraw(waits []waiting) {
	for _, w := range waits {
		if !n.match.withdraw(w.k, w.r) {
			<-w.r.done
		}
	}
}

func (n *Node) checkDevices(self int, sends, recvs []collective.Message) error {
	if self < 0 || n.ProcessOf(self) != n.rank {
		return fmt.Errorf("distributed: device %d %v (process %d runs devices %v)", self, errNotLocal, n.rank, n.LocalDevices())
	}
	for _, ms := range [][]collective.Message{sends, recvs} {
		for _, m := range ms {
			if m.Peer < 0 || m.Peer >= n.Devices() {
				return fmt.Errorf("distributed: device %d exchanges with device %d, outside the job's %d devices", self, m.Peer, n.Devices())
			}
		}
	}
	return nil
}
