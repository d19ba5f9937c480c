package distributed

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

// connectMesh connects this process to every other: it dials the lower
// ranks and accepts the higher. Each pair agrees on its rings during the
// greeting: the dialer names its ring, the acceptor maps it and names
// its own, the dialer maps that; a ring the peer could not map (another
// host, or not Linux) leaves that direction on TCP.
func (n *Node) connectMesh(ctx context.Context, token string) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	n.peers = make([]*peer, len(n.table))
	outs := n.createRings(token)
	defer func() {
		for _, s := range outs {
			if s != nil {
				s.unlink() // mapped by now, or never will be
			}
		}
	}()
	results := make(chan *peer, len(n.table))
	errs := make(chan error, len(n.table))
	for j := 0; j < n.rank; j++ {
		go func() {
			p, err := n.dialPeer(ctx, j, token, outs)
			results <- p
			errs <- err
		}()
	}
	go n.acceptPeers(ctx, token, outs, results, errs)
	var first error
	for range len(n.table) - 1 {
		p, err := <-results, <-errs
		if err != nil && first == nil {
			first = err
			cancel()
		}
		if p != nil {
			n.peers[p.info.Rank] = p
		}
	}
	n.ln.Close() // every peer has connected
	for j, s := range outs {
		if s != nil && (n.peers[j] == nil || n.peers[j].out != s) {
			s.close()
		}
	}
	if first != nil {
		return first
	}
	for _, p := range n.peers {
		if p != nil {
			go p.read()
			if p.in != nil {
				go p.giveCredits()
			}
		}
	}
	return nil
}

// EnvNoShm, when set, keeps every message on TCP (for A/B runs and
// tests of the TCP path on one host).
const EnvNoShm = "AXLE_DISTRIBUTED_NO_SHM"

func (n *Node) createRings(token string) []*segment {
	outs := make([]*segment, len(n.table))
	if !shmSupported || os.Getenv(EnvNoShm) != "" {
		return outs
	}
	for j, info := range n.table {
		if j != n.rank && info.Host == n.table[n.rank].Host {
			outs[j], _ = createSegment(ringName(token, n.rank, j), numSlots*slotSize)
		}
	}
	return outs
}

func ringName(token string, from, to int) string {
	return fmt.Sprintf("axle-%s-%d-%d", token, from, to)
}

func (n *Node) dialPeer(ctx context.Context, j int, token string, outs []*segment) (*peer, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", n.table[j].Addr)
	if err != nil {
		return nil, fmt.Errorf("distributed: process %d connecting to %v at %s: %w", n.rank, n.table[j], n.table[j].Addr, err)
	}
	p, err := n.greet(ctx, c, j, token, outs)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("distributed: process %d greeting %v: %w", n.rank, n.table[j], err)
	}
	return p, nil
}

func (n *Node) acceptPeers(ctx context.Context, token string, outs []*segment, results chan<- *peer, errs chan<- error) {
	stop := context.AfterFunc(ctx, func() { n.ln.(*net.TCPListener).SetDeadline(time.Now()) })
	defer stop()
	for range len(n.table) - 1 - n.rank {
		c, err := n.ln.Accept()
		if err != nil {
			results <- nil
			errs <- fmt.Errorf("distributed: process %d waiting for its peers' connections: %w", n.rank, err)
			continue
		}
		go func() {
			p, err := n.greet(ctx, c, -1, token, outs)
			if err != nil {
				c.Close()
				err = fmt.Errorf("distributed: process %d greeting a peer: %w", n.rank, err)
			}
			results <- p
			errs <- err
		}()
	}
}

// greet exchanges the greeting on a new connection; j is the peer's
// rank when this side dialed, -1 when it accepted.
func (n *Node) greet(ctx context.Context, c net.Conn, j int, token string, outs []*segment) (*peer, error) {
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	defer c.SetDeadline(time.Time{})
	ringFor := func(j int) string {
		if outs[j] == nil {
			return ""
		}
		return ringName(token, n.rank, j)
	}
	var theirRing string
	var mappedMine bool
	if j >= 0 {
		if err := (&framedConn{Conn: c}).send(newFrame(cHello).str(token).int(n.rank).str(ringFor(j)).int(0)); err != nil {
			return nil, err
		}
	}
	kind, d, err := readFrame(c)
	if err != nil || kind != cHello {
		return nil, fmt.Errorf("no greeting (%v)", err)
	}
	tok, rank, ring, mapped := d.str(), d.int(), d.str(), d.int() == 1
	switch {
	case d.err != nil || tok != token:
		return nil, fmt.Errorf("a greeting from another job")
	case j >= 0 && rank != j, j < 0 && (rank <= n.rank || rank >= len(n.table)):
		return nil, fmt.Errorf("a greeting from process %d, unexpected", rank)
	}
	p := &peer{node: n, info: n.table[rank], conn: c, ended: make(chan struct{})}
	theirRing, mappedMine = ring, mapped
	if theirRing != "" {
		p.in, _ = openSegment(theirRing, numSlots*slotSize)
	}
	ok := 0
	if p.in != nil {
		ok = 1
	}
	if j < 0 {
		err = (&framedConn{Conn: c}).send(newFrame(cHello).str(token).int(n.rank).str(ringFor(rank)).int(ok))
		if err == nil {
			kind, d, err = readFrame(c)
			mappedMine = err == nil && kind == cHelloAck && d.int() == 1
		}
	} else {
		err = (&framedConn{Conn: c}).send(newFrame(cHelloAck).int(ok))
	}
	if err != nil {
		return nil, err
	}
	p.setup(outs[rank], mappedMine)
	return p, nil
}
