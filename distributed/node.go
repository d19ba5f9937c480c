package distributed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/axle-ml/axle/collective"
)

// Node is this process's membership in a job: a collective.Cluster
// whose Exchange reaches every device of every process.
type Node struct {
	cfg         Config
	rank, local int
	table       []ProcessInfo
	loc         *collective.Local
	match       *matcher
	peers       []*peer // by rank, nil for this process
	ln          net.Listener
	coord       *coordClient
	svc         *service
	stopBeat    chan struct{}
	kv          *KV

	dead     context.Context // cancelled, with a *ProcessError, when a process fails
	kill     context.CancelCauseFunc
	failOnce sync.Once
	closing  atomic.Bool
}

var _ collective.Cluster = (*Node)(nil)

// Join meets the job's other processes and connects to each of them.
// Process 0 serves the coordination service. Join returns when every
// process has arrived and the mesh is up, or fails within cfg.Timeout
// naming the processes that never arrived.
func Join(ctx context.Context, cfg Config) (*Node, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, rank: cfg.Process, local: cfg.LocalDevices, loc: collective.NewLocal(),
		match: newMatcher(), stopBeat: make(chan struct{})}
	n.dead, n.kill = context.WithCancelCause(context.Background())
	if n.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("distributed: listening for peers: %w", err)
	}
	if err := n.join(ctx); err != nil {
		n.teardown()
		return nil, err
	}
	go n.coord.beat(n.stopBeat)
	return n, nil
}

func (n *Node) join(ctx context.Context) error {
	if n.rank == 0 {
		svc, err := startService(n.cfg)
		if err != nil {
			return err
		}
		n.svc = svc
	}
	conn, err := dialCoordinator(ctx, n.cfg)
	if err != nil {
		return err
	}
	if n.coord, err = register(conn, n.cfg, n.dataAddr(conn), n.fail); err != nil {
		conn.Close()
		return err
	}
	n.kv = &KV{c: n.coord, timeout: n.cfg.Timeout}
	var t tableMsg
	select {
	case t = <-n.coord.table:
	case <-time.After(n.cfg.Timeout + n.cfg.Heartbeat):
		t.err = fmt.Errorf("distributed: process %d: the coordinator at %s ended no rendezvous within %v",
			n.rank, n.cfg.Coordinator, n.cfg.Timeout+n.cfg.Heartbeat)
	case <-ctx.Done():
		t.err = fmt.Errorf("distributed: rendezvous: %w", context.Cause(ctx))
	}
	if t.err != nil {
		return t.err
	}
	n.table = t.procs
	return n.connectMesh(ctx, t.token)
}

// dataAddr is the address peers dial: Listen's host if it names one,
// otherwise the interface this process reaches the coordinator from.
func (n *Node) dataAddr(coord net.Conn) string {
	_, port, _ := net.SplitHostPort(n.ln.Addr().String())
	host, _, _ := net.SplitHostPort(n.cfg.Listen)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host, _, _ = net.SplitHostPort(coord.LocalAddr().String())
	}
	return net.JoinHostPort(host, port)
}

// fail records that process rank failed: every pending and later
// Exchange fails with its error, and the data connections close so
// that no send stays blocked on a process that will never read.
func (n *Node) fail(rank int, reason string) {
	if n.closing.Load() {
		return
	}
	n.failOnce.Do(func() {
		info := ProcessInfo{Rank: rank}
		if rank >= 0 && rank < len(n.table) {
			info = n.table[rank]
		}
		n.kill(&ProcessError{Process: info, Reason: reason})
		for _, p := range n.peers {
			if p != nil {
				go p.abort(rank, reason)
			}
		}
	})
}

// Devices implements collective.Cluster.
func (n *Node) Devices() int { return n.cfg.Processes * n.local }

// LocalDevices implements collective.Cluster.
func (n *Node) LocalDevices() []int {
	ds := make([]int, n.local)
	for i := range ds {
		ds[i] = n.rank*n.local + i
	}
	return ds
}

// Process implements collective.Cluster.
func (n *Node) Process() int { return n.rank }

// ProcessOf implements collective.Cluster.
func (n *Node) ProcessOf(device int) int { return device / n.local }

// Processes returns what every process told the coordinator, by rank.
func (n *Node) Processes() []ProcessInfo { return append([]ProcessInfo(nil), n.table...) }

// KV returns the job's key-value store.
func (n *Node) KV() *KV { return n.kv }

// Err returns the failure that broke the job, or nil.
func (n *Node) Err() error {
	if n.dead.Err() == nil {
		return nil
	}
	return context.Cause(n.dead)
}

// Close leaves the job: it tells every peer and the coordinator, waits
// (up to Config.Timeout) for the peers to close too so that no message
// still in flight is cut off, and releases the connections and rings.
// Process 0's service stays up until every process has left.
func (n *Node) Close() error {
	if !n.closing.CompareAndSwap(false, true) {
		return nil
	}
	close(n.stopBeat)
	var pe *ProcessError
	failed := errors.As(n.Err(), &pe)
	for _, p := range n.peers {
		switch {
		case p == nil:
		case failed:
			// The job failed: the peer learns which process failed and
			// why, not that this one left. (fail's own abort frames go
			// out from goroutines; a goodbye overtaking them made a peer
			// blame this process, seen with the host loaded.)
			p.abort(pe.Process.Rank, pe.Reason)
		default:
			p.write([]byte{dBye})
			if tc, ok := p.conn.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
		}
	}
	timeout := time.After(n.cfg.Timeout)
	for _, p := range n.peers {
		if p != nil {
			select {
			case <-p.ended:
			case <-timeout:
			}
		}
	}
	n.coord.close()
	if n.svc != nil {
		n.svc.close()
	}
	n.teardown()
	return nil
}

func (n *Node) teardown() {
	for _, p := range n.peers {
		if p != nil {
			p.conn.Close()
			for _, s := range []*segment{p.out, p.in} {
				if s != nil {
					s.close()
				}
			}
		}
	}
	if n.coord != nil {
		n.coord.conn.Close()
	}
	if n.svc != nil && !n.closing.Load() {
		n.svc.ln.Close()
	}
	n.ln.Close()
}

// errNotLocal is returned for an exchange from a device of another process.
var errNotLocal = errors.New("is not a device of this process")
