package kernels

import (
	"sync"
	"sync/atomic"
)

// claims hands out n chunks of work to threads that may run at different
// speeds. Thread t owns the chunks [t·n/threads, (t+1)·n/threads) and
// takes them from the front, in order; once its own are gone it takes
// another thread's from the back. While every thread keeps pace each
// takes exactly the static share, in the static order, at the cost of
// one uncontended atomic operation a chunk; when one falls behind the
// others take over its last chunks instead of waiting for it.
//
// Why: on a host whose vCPUs do not all run at full speed at all times
// (a vCPU woken from idle ran the FMA probe at half rate for about 0.75
// ms here), a static split makes every two-thread call as slow as its
// slower thread: a 256³ product took 0.19 ms instead of 0.105.
type claims struct {
	ranges []claimRange
}

// claimRange is one thread's chunks [lo, hi), packed as lo<<32 | hi so
// the owner (taking lo) and a thief (taking hi-1) agree with one
// compare-and-swap; padded to its own cache line.
type claimRange struct {
	v atomic.Uint64
	_ [56]byte
}

var claimsPool = sync.Pool{New: func() any { return new(claims) }}

// newClaims splits n chunks over threads; release it with put when every
// thread is done.
func newClaims(n, threads int) *claims {
	q := claimsPool.Get().(*claims)
	if cap(q.ranges) < threads {
		q.ranges = make([]claimRange, threads)
	}
	q.ranges = q.ranges[:threads]
	for t := range q.ranges {
		lo, hi := uint64(t*n/threads), uint64((t+1)*n/threads)
		q.ranges[t].v.Store(lo<<32 | hi)
	}
	return q
}

func (q *claims) put() { claimsPool.Put(q) }

// next returns the next chunk for thread t, or false when none is left.
func (q *claims) next(t int) (int, bool) {
	if c, ok := q.ranges[t].takeFront(); ok {
		return c, true
	}
	// Steal from the thread with the most chunks left (the lowest
	// numbered of those).
	for {
		victim, most := -1, uint64(0)
		for u := range q.ranges {
			v := q.ranges[u].v.Load()
			if left := v&0xffffffff - v>>32; v&0xffffffff > v>>32 && left > most {
				victim, most = u, left
			}
		}
		if victim < 0 {
			return 0, false
		}
		if c, ok := q.ranges[victim].takeBack(); ok {
			return c, true
		}
	}
}

func (r *claimRange) takeFront() (int, bool) {
	for {
		v := r.v.Load()
		lo, hi := v>>32, v&0xffffffff
		if lo >= hi {
			return 0, false
		}
		if r.v.CompareAndSwap(v, (lo+1)<<32|hi) {
			return int(lo), true
		}
	}
}

func (r *claimRange) takeBack() (int, bool) {
	for {
		v := r.v.Load()
		lo, hi := v>>32, v&0xffffffff
		if lo >= hi {
			return 0, false
		}
		if r.v.CompareAndSwap(v, lo<<32|(hi-1)) {
			return int(hi - 1), true
		}
	}
}
