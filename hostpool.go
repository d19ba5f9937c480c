package axle

import (
	"slices"
	"sync"

	"github.com/axle-ml/axle/hlo"
)

// hostPool keeps the storage of released buffers that were made from Go
// slices, by shape, for the next BufferFromSlice of that shape: a training
// loop makes a batch buffer of one shape every step, and fresh memory
// (allocated, zeroed, and faulted in on first touch) cost more than the
// copy into it.
type hostPool struct {
	mu     sync.Mutex
	free   map[string][]*hlo.Literal
	closed bool // the client was closed: keep nothing
}

// hostPoolDepth bounds the literals kept per shape: a loop alternates a
// few buffers at most.
const hostPoolDepth = 4

func (p *hostPool) get(s hlo.Shape) *hlo.Literal {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := s.String()
	l := p.free[k]
	if len(l) == 0 {
		return nil
	}
	lit := l[len(l)-1]
	p.free[k] = l[:len(l)-1]
	return lit
}

func (p *hostPool) put(lit *hlo.Literal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.free == nil {
		p.free = map[string][]*hlo.Literal{}
	}
	k := lit.Shape().String()
	if len(p.free[k]) < hostPoolDepth {
		p.free[k] = append(p.free[k], lit)
	}
}

// drain drops every pooled literal, and those put later.
func (p *hostPool) drain() {
	p.mu.Lock()
	p.free, p.closed = nil, true
	p.mu.Unlock()
}

// fromSlice returns a literal of data with dims, reusing pooled storage
// of that shape when there is some.
func fromSlice[T hlo.Native](p *hostPool, data []T, dims []int64) (*hlo.Literal, error) {
	if dims == nil {
		dims = []int64{int64(len(data))}
	}
	if lit := p.get(hlo.ArrayShape(hlo.NativeDType[T](), dims...)); lit != nil {
		if d, ok := lit.Data().([]T); ok && len(d) == len(data) {
			copy(d, data)
			return lit, nil
		}
	}
	return hlo.LiteralFromSlice(slices.Clip(data), dims...)
}
