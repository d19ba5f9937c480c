package distributed

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/axle-ml/axle/collective"
)

// Data frames on a pair's connection.
const (
	dMsg    byte = iota + 1 // header, then the payload
	dShm                    // header; the payload follows in dChunk frames
	dChunk                  // message id, ring slot, byte count
	dCredit                 // a ring slot the receiver has emptied
	dBye                    // the sender closes its node
	dFail                   // the sender's job failed: rank, reason
)

// headerSize is a message header's fixed part: kind, Program, Launch,
// Seq, Phase, from, to, length, message id, op length; the op follows.
const headerSize = 1 + 8 + 8 + 8 + 4 + 4 + 4 + 8 + 8 + 2

// The shared ring: messages of at least shmMin bytes between processes
// on one host are copied through slots of slotSize bytes, the sender
// filling slot i while the receiver empties slot i-1.
const (
	shmMin   = 64 << 10
	slotSize = 2 << 20
	numSlots = 4
)

// peer is this process's connection to another process.
type peer struct {
	node *Node
	info ProcessInfo
	conn net.Conn
	br   *bufio.Reader

	wmu    sync.Mutex // one frame at a time
	broken bool       // a write failed midway: no whole frame can follow
	out    *segment   // this process's ring to the peer, nil for TCP
	in     *segment   // the peer's ring to this process
	slots  chan int   // free slots of out
	credit chan int   // slots of in to hand back
	nextID atomic.Uint64
	left   atomic.Bool   // the peer said goodbye
	ended  chan struct{} // the reader returned
}

// shmRecv is a message arriving through the ring.
type shmRecv struct {
	k    matchKey
	r    *recv  // the posted receive, or nil
	dest []byte // r.buf, the early buffer, or a discard buffer
	off  int
	err  error
}

func putHeader(kind byte, key collective.Key, from, to, n int, id uint64) []byte {
	h := make([]byte, headerSize, headerSize+len(key.Op))
	h[0] = kind
	le := binary.LittleEndian
	le.PutUint64(h[1:], key.Program)
	le.PutUint64(h[9:], key.Launch)
	le.PutUint64(h[17:], key.Seq)
	le.PutUint32(h[25:], key.Phase)
	le.PutUint32(h[29:], uint32(from))
	le.PutUint32(h[33:], uint32(to))
	le.PutUint64(h[37:], uint64(n))
	le.PutUint64(h[45:], id)
	le.PutUint16(h[53:], uint16(len(key.Op)))
	return append(h, key.Op...)
}

// readHeader reads the rest of a header whose kind byte was read.
func (p *peer) readHeader() (matchKey, int, uint64, error) {
	var h [headerSize - 1]byte
	if _, err := io.ReadFull(p.br, h[:]); err != nil {
		return matchKey{}, 0, 0, err
	}
	le := binary.LittleEndian
	k := matchKey{key: collective.Key{Program: le.Uint64(h[0:]), Launch: le.Uint64(h[8:]),
		Seq: le.Uint64(h[16:]), Phase: le.Uint32(h[24:])},
		from: int(le.Uint32(h[28:])), to: int(le.Uint32(h[32:]))}
	n, id := int(le.Uint64(h[36:])), le.Uint64(h[44:])
	op := make([]byte, le.Uint16(h[52:]))
	if _, err := io.ReadFull(p.br, op); err != nil {
		return k, 0, 0, err
	}
	k.key.Op = string(op)
	return k, n, id, nil
}

func (p *peer) write(bufs ...[]byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.broken {
		return errBroken
	}
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(p.conn)
	p.broken = err != nil
	return err
}

var errBroken = errors.New("connection broken")

// abort passes this process's verdict on the job's failure to the peer,
// so that every process names the process that failed first rather than
// the one whose connection closed next, and closes the connection.
func (p *peer) abort(rank int, reason string) {
	p.conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	p.write([]byte{dFail}, newFrame(cDead).int(rank).str(reason).done())
	p.conn.Close()
}

// send writes one message: inline, or through the ring when it is
// large and the peer shares this host. It returns once the bytes are
// written to the socket or the ring.
func (p *peer) send(ctx context.Context, key collective.Key, from, to int, data []byte) error {
	if p.out == nil || len(data) < shmMin {
		return p.write(putHeader(dMsg, key, from, to, len(data), 0), data)
	}
	id := p.nextID.Add(1)
	if err := p.write(putHeader(dShm, key, from, to, len(data), id)); err != nil {
		return err
	}
	var chunk [17]byte
	chunk[0] = dChunk
	binary.LittleEndian.PutUint64(chunk[1:], id)
	for off := 0; off < len(data); {
		var s int
		select {
		case s = <-p.slots:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		n := copy(p.out.data[s*slotSize:(s+1)*slotSize], data[off:])
		binary.LittleEndian.PutUint32(chunk[9:], uint32(s))
		binary.LittleEndian.PutUint32(chunk[13:], uint32(n))
		if err := p.write(chunk[:]); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// giveCredits hands emptied slots back; a goroutine of its own so that
// the reader never waits on a write.
func (p *peer) giveCredits() {
	var f [5]byte
	f[0] = dCredit
	for s := range p.credit {
		binary.LittleEndian.PutUint32(f[1:], uint32(s))
		if p.write(f[:]) != nil {
			return
		}
	}
}

// read receives the peer's frames until it says goodbye or the
// connection fails.
func (p *peer) read() {
	defer close(p.ended)
	inflight := map[uint64]*shmRecv{}
	err := p.readFrames(inflight)
	for _, s := range inflight {
		if s.r != nil {
			s.r.err = p.brokeErr(err)
			close(s.r.done)
		}
	}
	if p.in != nil {
		close(p.credit)
	}
}

// brokeErr is the error of the receives cut off by the end of the
// connection: the job's failure if there is one (it may be what closed
// the connection), the peer's goodbye when err is nil.
func (p *peer) brokeErr(err error) error {
	if err == nil {
		if e := p.node.Err(); e != nil {
			return e
		}
		return &ProcessError{Process: p.info, Reason: "closed its node during an exchange"}
	}
	p.node.fail(p.info.Rank, fmt.Sprintf("broke its connection to process %d (%v)", p.node.rank, err))
	if e := p.node.Err(); e != nil {
		return e
	}
	return &ProcessError{Process: p.info, Reason: fmt.Sprintf("broke its connection (%v)", err)}
}

func (p *peer) readFrames(inflight map[uint64]*shmRecv) error {
	var b [16]byte
	for {
		kind, err := p.br.ReadByte()
		if err != nil {
			return err
		}
		switch kind {
		case dMsg:
			err = p.readMsg()
		case dShm:
			err = p.startShm(inflight)
		case dChunk:
			if _, err = io.ReadFull(p.br, b[:16]); err == nil {
				err = p.readChunk(inflight, binary.LittleEndian.Uint64(b[:]),
					int(binary.LittleEndian.Uint32(b[8:])), int(binary.LittleEndian.Uint32(b[12:])))
			}
		case dCredit:
			if _, err = io.ReadFull(p.br, b[:4]); err == nil {
				err = p.takeCredit(int(binary.LittleEndian.Uint32(b[:])))
			}
		case dFail:
			if _, d, err := readFrame(p.br); err == nil {
				p.node.fail(d.int(), d.str())
			}
			return errors.New("the peer's job failed")
		case dBye:
			p.left.Store(true)
			lo := p.info.Rank * p.node.local
			p.node.match.failFrom(lo, lo+p.node.local, p.brokeErr(nil))
			return nil
		default:
			err = fmt.Errorf("unknown frame kind %d", kind)
		}
		if err != nil {
			return err
		}
	}
}

// readMsg reads an inline payload straight into its posted receive, or
// into a new buffer kept until the receive is posted.
func (p *peer) readMsg() error {
	k, n, _, err := p.readHeader()
	if err != nil {
		return err
	}
	r := p.node.match.claim(k)
	if r == nil {
		data := make([]byte, n)
		if _, err := io.ReadFull(p.br, data); err != nil {
			return err
		}
		p.node.match.arrive(k, data)
		return nil
	}
	dest := r.buf
	if r.err = sizeCheck(k, n, len(r.buf)); r.err != nil {
		dest = make([]byte, n)
	}
	_, err = io.ReadFull(p.br, dest)
	if err != nil {
		r.err = p.brokeErr(err)
	}
	close(r.done)
	return err
}

func (p *peer) startShm(inflight map[uint64]*shmRecv) error {
	k, n, id, err := p.readHeader()
	if err != nil {
		return err
	}
	if p.in == nil {
		return fmt.Errorf("a ring message from a process without a ring")
	}
	s := &shmRecv{k: k, r: p.node.match.claim(k)}
	switch {
	case s.r == nil:
		s.dest = make([]byte, n)
	case sizeCheck(k, n, len(s.r.buf)) != nil:
		s.err = sizeCheck(k, n, len(s.r.buf))
		s.dest = make([]byte, n)
	default:
		s.dest = s.r.buf
	}
	inflight[id] = s
	return nil
}

func (p *peer) readChunk(inflight map[uint64]*shmRecv, id uint64, slot, n int) error {
	s := inflight[id]
	if s == nil || slot >= numSlots || n > slotSize || s.off+n > len(s.dest) {
		return fmt.Errorf("a ring chunk that fits no message")
	}
	copy(s.dest[s.off:s.off+n], p.in.data[slot*slotSize:])
	s.off += n
	p.credit <- slot
	if s.off < len(s.dest) {
		return nil
	}
	delete(inflight, id)
	if s.r == nil {
		p.node.match.arrive(s.k, s.dest)
		return nil
	}
	s.r.err = s.err
	close(s.r.done)
	return nil
}

// setup readies a greeted connection: its reader's buffer and, for each
// direction that has a ring, the ring's slots.
func (p *peer) setup(out *segment, peerMapped bool) {
	p.br = bufio.NewReaderSize(p.conn, 256<<10)
	if out != nil && peerMapped {
		p.out = out
		p.slots = make(chan int, numSlots)
		for s := range numSlots {
			p.slots <- s
		}
	}
	if p.in != nil {
		p.credit = make(chan int, numSlots)
	}
}

func (p *peer) takeCredit(slot int) error {
	if p.slots == nil || slot >= numSlots || len(p.slots) == numSlots {
		return fmt.Errorf("a credit for slot %d of no ring", slot)
	}
	p.slots <- slot
	return nil
}
