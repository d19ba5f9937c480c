package distributed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// coordClient is a process's connection to the coordination service.
type coordClient struct {
	cfg  Config
	conn *framedConn

	mu     sync.Mutex
	nextID uint64
	calls  map[uint64]chan []byte

	table     chan tableMsg
	lastHeard atomic.Int64
	shutdown  atomic.Bool // the service said it closes
	leaving   atomic.Bool // this process said goodbye
	dead      chan struct{}
	// fail reports a failed process once the job runs; set before the
	// table arrives, called from the reader.
	fail func(rank int, reason string)
}

type tableMsg struct {
	token string
	procs []ProcessInfo
	err   error
}

// dialCoordinator connects to the service, retrying while process 0
// starts, until the timeout.
func dialCoordinator(ctx context.Context, cfg Config) (net.Conn, error) {
	deadline := time.Now().Add(cfg.Timeout)
	wait := 20 * time.Millisecond
	for {
		var d net.Dialer
		dctx, cancel := context.WithDeadline(ctx, deadline)
		c, err := d.DialContext(dctx, "tcp", cfg.Coordinator)
		cancel()
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("distributed: process %d could not reach the coordinator at %s within %v: %w",
				cfg.Process, cfg.Coordinator, cfg.Timeout, err)
		}
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// register announces this process and starts reading the service's
// frames; the table (or the rendezvous's failure) arrives on c.table.
func register(conn net.Conn, cfg Config, dataAddr string, fail func(int, string)) (*coordClient, error) {
	host, _ := os.Hostname()
	c := &coordClient{cfg: cfg, conn: &framedConn{Conn: conn, timeout: cfg.Heartbeat},
		calls: map[uint64]chan []byte{}, table: make(chan tableMsg, 1), dead: make(chan struct{}), fail: fail}
	c.lastHeard.Store(time.Now().UnixNano())
	e := newFrame(cRegister).int(cfg.Process).int(cfg.Processes).int(cfg.LocalDevices).
		str(dataAddr).str(host).int(os.Getpid())
	if err := c.conn.send(e); err != nil {
		return nil, fmt.Errorf("distributed: registering with the coordinator: %w", err)
	}
	go c.read()
	return c, nil
}

func (c *coordClient) read() {
	defer close(c.dead)
	ready := false
	for {
		kind, d, err := readFrame(c.conn)
		if err != nil {
			if !ready {
				c.table <- tableMsg{err: fmt.Errorf("distributed: the coordinator closed the connection during the rendezvous (%v)", err)}
			} else if !c.shutdown.Load() && !c.leaving.Load() {
				c.fail(0, fmt.Sprintf("closed the coordination service's connection (%v)", err))
			}
			return
		}
		c.lastHeard.Store(time.Now().UnixNano())
		switch kind {
		case cTable:
			ready = true
			c.table <- decodeTable(d)
		case cFail:
			if !ready {
				ready = true // the error below is the one to report
				c.table <- tableMsg{err: errors.New("distributed: " + d.str())}
			}
		case cAck, cValue:
			c.answer(d.u64(), d.bytes())
		case cDead:
			c.fail(d.int(), d.str())
		case cShutdown:
			c.shutdown.Store(true)
		}
	}
}

func decodeTable(d *dec) tableMsg {
	t := tableMsg{token: d.str()}
	n := d.int()
	for i := 0; i < n && d.err == nil; i++ {
		t.procs = append(t.procs, decodeInfo(d))
	}
	t.err = d.err
	return t
}

func (c *coordClient) answer(id uint64, v []byte) {
	c.mu.Lock()
	ch := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- v
	}
}

// beat sends heartbeats and declares the coordinator dead when it has
// not answered for a heartbeat period.
func (c *coordClient) beat(stop <-chan struct{}) {
	t := time.NewTicker(c.cfg.Heartbeat / 4)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-c.dead:
			return
		case <-t.C:
		}
		c.conn.send(newFrame(cHeartbeat))
		if silent := time.Since(time.Unix(0, c.lastHeard.Load())); silent > c.cfg.Heartbeat {
			c.fail(0, fmt.Sprintf("(the coordinator) answered no heartbeat for %v (stopped or hung)", c.cfg.Heartbeat))
			return
		}
	}
}

// call sends a request built with id and waits for its answer.
func (c *coordClient) call(ctx context.Context, build func(id uint64) *enc) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.calls[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}()
	if err := c.conn.send(build(id)); err != nil {
		return nil, fmt.Errorf("distributed: coordinator: %w", err)
	}
	select {
	case v := <-ch:
		return v, nil
	case <-c.dead:
		return nil, errors.New("distributed: the coordination service is gone")
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (c *coordClient) close() {
	c.leaving.Store(true)
	c.conn.send(newFrame(cBye))
}

// KV is the job's key-value store, held by the coordination service:
// processes publish small values (addresses, ids, fingerprints) for the
// others to read.
type KV struct {
	c       *coordClient
	timeout time.Duration
}

// Set stores value under key, replacing any earlier value, and wakes the
// Gets waiting for it.
func (kv *KV) Set(ctx context.Context, key string, value []byte) error {
	_, err := kv.c.call(ctx, func(id uint64) *enc { return newFrame(cSet).u64(id).str(key).bytes(value) })
	if err != nil {
		return fmt.Errorf("distributed: setting %q: %w", key, err)
	}
	return nil
}

// Get returns the value under key, waiting for some process to set it
// until ctx ends or Config.Timeout passes.
func (kv *KV) Get(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, kv.timeout,
		fmt.Errorf("no process set it within %v", kv.timeout))
	defer cancel()
	v, err := kv.c.call(ctx, func(id uint64) *enc { return newFrame(cGet).u64(id).str(key) })
	if err != nil {
		return nil, fmt.Errorf("distributed: getting %q: %w", key, err)
	}
	return v, nil
}
