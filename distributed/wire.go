package distributed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Control frames (the coordination protocol, and the data connections'
// greeting) are a 4-byte little-endian length, a kind byte and a body
// of fixed-width integers and length-prefixed strings.
const (
	cRegister  byte = iota + 1 // rank, size, local devices, data address, host, pid
	cTable                     // job token, then per process its info
	cFail                      // rendezvous failed: message
	cHeartbeat                 // either way
	cSet                       // id, key, value → cAck id
	cGet                       // id, key → cValue id, value
	cAck
	cValue
	cDead     // rank, reason
	cBye      // a process leaves cleanly
	cShutdown // the service closes
	cHello    // data connection greeting: rank, shared-memory segment name
	cHelloAck // mapped the peer's segment (1) or not (0)
)

const maxFrame = 1 << 30

type enc struct{ b []byte }

func newFrame(kind byte) *enc { return &enc{b: []byte{0, 0, 0, 0, kind}} }

func (e *enc) u32(v uint32) *enc { e.b = binary.LittleEndian.AppendUint32(e.b, v); return e }
func (e *enc) u64(v uint64) *enc { e.b = binary.LittleEndian.AppendUint64(e.b, v); return e }
func (e *enc) int(v int) *enc    { return e.u64(uint64(v)) }
func (e *enc) str(s string) *enc { e.u32(uint32(len(s))); e.b = append(e.b, s...); return e }
func (e *enc) bytes(p []byte) *enc {
	e.u32(uint32(len(p)))
	e.b = append(e.b, p...)
	return e
}

func (e *enc) done() []byte {
	binary.LittleEndian.PutUint32(e.b, uint32(len(e.b)-4))
	return e.b
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) need(n int) bool {
	if d.err == nil && len(d.b) < n {
		d.err = errors.New("distributed: short control frame")
	}
	return d.err == nil
}

func (d *dec) u32() uint32 {
	if !d.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *dec) u64() uint64 {
	if !d.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *dec) int() int { return int(d.u64()) }

func (d *dec) bytes() []byte {
	n := int(d.u32())
	if !d.need(n) {
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) str() string { return string(d.bytes()) }

// readFrame reads one control frame: its kind and a decoder over its body.
func readFrame(r io.Reader) (byte, *dec, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(h[:4])
	if n == 0 || n > maxFrame {
		return 0, nil, fmt.Errorf("distributed: control frame of %d bytes", n)
	}
	// The body grows as it arrives: a header claiming a gigabyte costs
	// nothing until the bytes come.
	body, err := io.ReadAll(io.LimitReader(r, int64(n-1)))
	if err != nil {
		return 0, nil, err
	}
	if len(body) != int(n-1) {
		return 0, nil, io.ErrUnexpectedEOF
	}
	return h[4], &dec{b: body}, nil
}

// framedConn serializes the frames written to one connection; a write
// that cannot finish within timeout (a peer that stopped reading) fails
// instead of blocking its writer.
type framedConn struct {
	net.Conn
	mu      sync.Mutex
	timeout time.Duration
}

func (c *framedConn) send(e *enc) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timeout > 0 {
		c.SetWriteDeadline(time.Now().Add(c.timeout))
	}
	_, err := c.Write(e.done())
	return err
}

// ProcessInfo is what a process told the coordinator when it joined.
type ProcessInfo struct {
	Rank int
	Host string
	Pid  int
	// Addr is where the process accepts data connections.
	Addr string
	// Devices is its local device count.
	Devices int
}

func (p ProcessInfo) encode(e *enc) {
	e.int(p.Rank).str(p.Host).int(p.Pid).str(p.Addr).int(p.Devices)
}

func decodeInfo(d *dec) ProcessInfo {
	return ProcessInfo{Rank: d.int(), Host: d.str(), Pid: d.int(), Addr: d.str(), Devices: d.int()}
}

func (p ProcessInfo) String() string {
	return fmt.Sprintf("process %d (host %s, pid %d)", p.Rank, p.Host, p.Pid)
}

// ProcessError reports a process of the job that failed: it died, hung
// or left while others still needed it.
type ProcessError struct {
	Process ProcessInfo
	Reason  string
}

func (e *ProcessError) Error() string {
	return fmt.Sprintf("distributed: %v %s", e.Process, e.Reason)
}
