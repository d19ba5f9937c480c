package distributed

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// service is the coordination service process 0 runs: it meets every
// process (the rendezvous), holds the key-value store and watches the
// processes' heartbeats.
type service struct {
	cfg   Config
	ln    net.Listener
	token string

	mu      sync.Mutex
	members []*member // by rank, nil until registered
	joined  int
	ready   bool   // the table went out
	failed  bool   // the rendezvous failed
	failure string // and why (what a process arriving after is told)
	closed  bool
	kv      map[string][]byte
	waiters map[string][]kvWaiter
	left    chan struct{} // signalled when a member leaves or dies
}

type member struct {
	info     ProcessInfo
	conn     *framedConn
	lastSeen time.Time
	gone     bool
}

type kvWaiter struct {
	m  *member
	id uint64
}

func startService(cfg Config) (*service, error) {
	_, port, err := net.SplitHostPort(cfg.Coordinator)
	if err != nil {
		return nil, fmt.Errorf("distributed: coordinator address %q: %w", cfg.Coordinator, err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("", port))
	if err != nil {
		return nil, fmt.Errorf("distributed: serving the coordinator: %w", err)
	}
	tok := make([]byte, 8)
	rand.Read(tok)
	s := &service{cfg: cfg, ln: ln, token: hex.EncodeToString(tok),
		members: make([]*member, cfg.Processes), kv: map[string][]byte{},
		waiters: map[string][]kvWaiter{}, left: make(chan struct{}, 1)}
	go s.accept()
	time.AfterFunc(cfg.Timeout, s.rendezvousTimeout)
	go s.watch()
	return s, nil
}

func (s *service) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.serve(&framedConn{Conn: c, timeout: s.cfg.Heartbeat})
	}
}

// serve reads one process's frames: its registration, then heartbeats
// and KV requests until it says goodbye or its connection drops.
func (s *service) serve(c *framedConn) {
	defer c.Close()
	kind, d, err := readFrame(c)
	if err != nil || kind != cRegister {
		return
	}
	m := s.register(c, d)
	if m == nil {
		return
	}
	for {
		kind, d, err := readFrame(c)
		if err != nil {
			s.lost(m, fmt.Sprintf("closed its connection to the coordinator (%v)", err))
			return
		}
		s.mu.Lock()
		m.lastSeen = time.Now()
		s.mu.Unlock()
		switch kind {
		case cHeartbeat:
			c.send(newFrame(cHeartbeat))
		case cSet:
			s.set(m, d.u64(), d.str(), d.bytes())
		case cGet:
			s.get(m, d.u64(), d.str())
		case cBye:
			s.bye(m)
		}
	}
}

// register checks a process's claims against the job's and sends
// everyone the table once all have come.
func (s *service) register(c *framedConn, d *dec) *member {
	rank, size, local := d.int(), d.int(), d.int()
	info := ProcessInfo{Rank: rank, Addr: d.str(), Host: d.str(), Pid: d.int(), Devices: local}
	if d.err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var problem string
	switch {
	case s.failed && s.failure != "":
		// The rendezvous failed before this process came: it learns why
		// (process 0 itself arrives after another's mismatch when that
		// one reaches the service first).
		c.send(newFrame(cFail).str(s.failure))
		return nil
	case s.ready || s.failed || s.closed:
		problem = fmt.Sprintf("%v arrived after the rendezvous ended", info)
	case size != s.cfg.Processes:
		problem = fmt.Sprintf("%v says the job has %d processes, process 0 says %d", info, size, s.cfg.Processes)
	case rank < 0 || rank >= size:
		problem = fmt.Sprintf("%v has a rank outside the job's %d processes", info, size)
	case local != s.cfg.LocalDevices:
		problem = fmt.Sprintf("%v has %d local devices, process 0 has %d (every process must have as many)", info, local, s.cfg.LocalDevices)
	case s.members[rank] != nil:
		problem = fmt.Sprintf("two processes claim rank %d: %v and one on host %s, pid %d", rank, s.members[rank].info, info.Host, info.Pid)
	}
	if problem != "" {
		c.send(newFrame(cFail).str("rendezvous failed: " + problem))
		s.failLocked("rendezvous failed: " + problem)
		return nil
	}
	m := &member{info: info, conn: c, lastSeen: time.Now()}
	s.members[rank] = m
	s.joined++
	if s.joined == len(s.members) {
		s.ready = true
		e := newFrame(cTable).str(s.token).int(len(s.members))
		for _, o := range s.members {
			o.info.encode(e)
		}
		frame := e.done()
		for _, o := range s.members {
			o.conn.send(&enc{b: append([]byte(nil), frame...)})
		}
	}
	return m
}

func (s *service) rendezvousTimeout() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready || s.failed || s.closed {
		return
	}
	var missing []string
	for r, m := range s.members {
		if m == nil {
			missing = append(missing, fmt.Sprint(r))
		}
	}
	s.failLocked(fmt.Sprintf("rendezvous timed out after %v: process %s never arrived (%d of %d did)",
		s.cfg.Timeout, strings.Join(missing, ", "), s.joined, len(s.members)))
}

// failLocked ends a rendezvous that cannot complete, telling every
// process that came.
func (s *service) failLocked(msg string) {
	s.failed, s.failure = true, msg
	// Process 0 last: once told, it returns from Join and may exit,
	// taking the service with it.
	for r := len(s.members) - 1; r >= 0; r-- {
		if m := s.members[r]; m != nil {
			m.conn.send(newFrame(cFail).str(msg))
		}
	}
}

// watch declares dead the processes that stopped sending heartbeats.
func (s *service) watch() {
	t := time.NewTicker(s.cfg.Heartbeat / 4)
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		var silent []*member
		for _, m := range s.members {
			if s.ready && m != nil && !m.gone && time.Since(m.lastSeen) > s.cfg.Heartbeat {
				silent = append(silent, m)
			}
		}
		s.mu.Unlock()
		for _, m := range silent {
			s.lost(m, fmt.Sprintf("sent no heartbeat for %v (stopped or hung)", s.cfg.Heartbeat))
		}
	}
}

// lost tells every other process that m failed.
func (s *service) lost(m *member, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.gone || s.closed {
		return
	}
	m.gone = true
	s.signalLeft()
	if !s.ready {
		if !s.failed {
			s.failLocked(fmt.Sprintf("rendezvous failed: %v %s", m.info, reason))
		}
		return
	}
	for _, o := range s.members {
		if o != m && !o.gone {
			go o.conn.send(newFrame(cDead).int(m.info.Rank).str(reason))
		}
	}
	// A process declared dead that still runs (it was only slow) learns
	// why the others gave up on it.
	go func() {
		m.conn.send(newFrame(cDead).int(m.info.Rank).str(reason))
		m.conn.Close()
	}()
}

func (s *service) bye(m *member) {
	s.mu.Lock()
	m.gone = true
	s.signalLeft()
	s.mu.Unlock()
}

func (s *service) signalLeft() {
	select {
	case s.left <- struct{}{}:
	default:
	}
}

func (s *service) set(m *member, id uint64, key string, value []byte) {
	s.mu.Lock()
	s.kv[key] = value
	ws := s.waiters[key]
	delete(s.waiters, key)
	s.mu.Unlock()
	m.conn.send(newFrame(cAck).u64(id))
	for _, w := range ws {
		w.m.conn.send(newFrame(cValue).u64(w.id).bytes(value))
	}
}

func (s *service) get(m *member, id uint64, key string) {
	s.mu.Lock()
	v, ok := s.kv[key]
	if !ok {
		s.waiters[key] = append(s.waiters[key], kvWaiter{m, id})
	}
	s.mu.Unlock()
	if ok {
		m.conn.send(newFrame(cValue).u64(id).bytes(v))
	}
}

// close waits, up to the timeout, for every process to leave or die, so
// that processes finishing later still reach the service, then stops it.
func (s *service) close() {
	deadline := time.After(s.cfg.Timeout)
	for {
		s.mu.Lock()
		remaining := 0
		for _, m := range s.members {
			if m != nil && !m.gone {
				remaining++
			}
		}
		done := remaining == 0 || !s.ready
		s.mu.Unlock()
		if done {
			break
		}
		select {
		case <-s.left:
		case <-deadline:
			done = true
		}
		if done {
			break
		}
	}
	s.mu.Lock()
	s.closed = true
	for _, m := range s.members {
		if m != nil {
			m.conn.send(newFrame(cShutdown))
			m.conn.Close()
		}
	}
	s.mu.Unlock()
	s.ln.Close()
}
