package distributed

import (
	"fmt"
	"sync"

	"github.com/axle-ml/axle/collective"
)

// matchKey names one message: a key, its sending and receiving device.
type matchKey struct {
	key      collective.Key
	from, to int
}

// A recv is a posted receive: the reader fills buf straight from the
// connection (or the shared ring) and closes done.
type recv struct {
	buf  []byte
	done chan struct{}
	err  error
}

// fill completes r with a message that arrived before it was posted.
func (r *recv) fill(k matchKey, data []byte) {
	if err := sizeCheck(k, len(data), len(r.buf)); err != nil {
		r.err = err
	} else {
		copy(r.buf, data)
	}
	close(r.done)
}

func sizeCheck(k matchKey, got, want int) error {
	if got == want {
		return nil
	}
	return fmt.Errorf("device %d sent %d bytes at %s, device %d expected %d (different programs or shapes?)",
		k.from, got, k.key, k.to, want)
}

// matcher pairs arriving messages with posted receives. A message that
// arrives first is kept (the only extra copy) until its receive is
// posted; readers never wait for a receive, so one connection carries
// messages for any number of exchanges without head-of-line blocking.
type matcher struct {
	mu     sync.Mutex
	posted map[matchKey]*recv
	early  map[matchKey][]byte
}

func newMatcher() *matcher {
	return &matcher{posted: map[matchKey]*recv{}, early: map[matchKey][]byte{}}
}

func (m *matcher) post(k matchKey, buf []byte) *recv {
	r := &recv{buf: buf, done: make(chan struct{})}
	m.mu.Lock()
	if data, ok := m.early[k]; ok {
		delete(m.early, k)
		m.mu.Unlock()
		r.fill(k, data)
		return r
	}
	m.posted[k] = r
	m.mu.Unlock()
	return r
}

// withdraw removes a receive its exchange gave up on; false means a
// reader has claimed it and will close done shortly.
func (m *matcher) withdraw(k matchKey, r *recv) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.posted[k] == r {
		delete(m.posted, k)
		return true
	}
	return false
}

// claim takes the receive posted for k, if any: the reader then owns it.
func (m *matcher) claim(k matchKey) *recv {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.posted[k]
	delete(m.posted, k)
	return r
}

// arrive hands a message read before its receive was posted to the
// receive posted meanwhile, or keeps it.
func (m *matcher) arrive(k matchKey, data []byte) {
	m.mu.Lock()
	if r := m.posted[k]; r != nil {
		delete(m.posted, k)
		m.mu.Unlock()
		r.fill(k, data)
		return
	}
	m.early[k] = data
	m.mu.Unlock()
}

// failFrom fails the receives waiting on devices [lo, hi).
func (m *matcher) failFrom(lo, hi int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, r := range m.posted {
		if k.from >= lo && k.from < hi {
			delete(m.posted, k)
			r.err = err
			close(r.done)
		}
	}
}
