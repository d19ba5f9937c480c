package axle

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
)

// CompileOptions control compilation. They are part of the compile
// cache's key.
type CompileOptions struct {
	// NoOptimize skips the cpu backend's standard pass pipeline (for a
	// module already optimized).
	NoOptimize bool
	// Profile times every kernel of the cpu backend (see
	// Executable.Profile) and labels it for pprof.
	Profile bool
	// ExpectedRuns is how many times the caller expects to execute the
	// executable (0: many). For a tiny module run a few times, the cpu
	// backend's cost model may run it on the evaluator rather than
	// compile it; Executable.Engine says which it chose.
	ExpectedRuns int
}

// Compile compiles m for the client's device, or returns the executable
// compiled earlier for a module of the same text and options. m itself is
// neither kept nor modified.
func (c *Client) Compile(m *hlo.Module, opts CompileOptions) (*Executable, error) {
	return c.CompileContext(context.Background(), m, opts)
}

// CompileText parses one module in HLO text and compiles it. It takes
// HLO text only; CompileBytes and CompileFile take every format Axle
// reads (HloModuleProto, StableHLO) by name or content.
func (c *Client) CompileText(text string, opts CompileOptions) (*Executable, error) {
	return c.CompileTextContext(context.Background(), text, opts)
}

// compile runs the backend's compiler; a panic in it (a compiler bug)
// becomes an error rather than crossing the API.
func (c *Client) compile(ctx context.Context, m *hlo.Module, fp [sha256.Size]byte, opts CompileOptions) (x *Executable, err error) {
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, fmt.Errorf("axle: compiling %s: internal error: %v", m.Name, r)
		}
	}()
	x = &Executable{client: c, entry: m.Entry.Name, tuple: m.Entry.ResultShape().IsTuple()}
	if err := x.place(m, fp); err != nil {
		return nil, err
	}
	x.params = hlo.CloneShapes(m.Entry.ParamShapes())
	for _, p := range m.Entry.Params {
		x.names = append(x.names, p.Name)
	}
	if c.backend == "interp" {
		x.module = m.Clone()
		// The evaluator runs GPU library calls as the HLO they stand for;
		// what it cannot run fails here, not at the first execution.
		if _, err := opt.GPULibraryCalls.Run(x.module); err != nil {
			return nil, fmt.Errorf("axle: %w", err)
		}
		if err := eval.CheckSupported(x.module); err != nil {
			return nil, fmt.Errorf("axle: %w", err)
		}
		x.prog, x.copyResult = &interpProgram{m: x.module}, true
		x.need = executionNeed(x)
		return x, nil
	}
	cx, err := cpu.Compile(m, cpu.Options{Threads: x.threads(), NoOptimize: opts.NoOptimize, Profile: opts.Profile, Verified: true,
		ExpectedRuns: opts.ExpectedRuns, Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	x.cpu, x.prog, x.module, x.copyResult = cx, cx, cx.Module(), cx.Interpreted()
	x.contained = !cx.Interpreted()
	x.need = executionNeed(x)
	return x, nil
}

// cacheKey identifies a compilation: the module's fingerprint and the
// options (the client fixes the backend and threads).
type cacheKey struct {
	module [sha256.Size]byte
	opts   CompileOptions
}

// compileCache keeps the most recently used executables, within a count
// and a memory bound. A compilation running for a key makes later
// requests for the key wait for it rather than compile again.
type compileCache struct {
	mu           sync.Mutex
	size         int
	budget       int64 // bytes; negative: none
	bytes        int64 // of the finished entries
	entries      map[cacheKey]*cacheEntry
	lru          list.List // of *cacheEntry, most recently used first
	hits, misses int64
}

type cacheEntry struct {
	key   cacheKey
	elem  *list.Element
	done  chan struct{} // closed when x and err are set
	x     *Executable
	err   error
	bytes int64 // counted in compileCache.bytes once done
}

func (c *compileCache) init(size int, budget int64) {
	c.size, c.budget = size, budget
	c.entries = map[cacheKey]*cacheEntry{}
}

func (c *compileCache) get(key cacheKey, compile func() (*Executable, error)) (*Executable, error) {
	for {
		c.mu.Lock()
		e, ok := c.entries[key]
		if !ok {
			break
		}
		c.hits++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		<-e.done
		if e.x == nil || !e.x.isClosed() {
			return e.x, e.err
		}
		// Closed after we found it: its Close takes it out; compile anew.
		c.mu.Lock()
		c.forget(e)
		c.mu.Unlock()
	}
	c.misses++
	if c.size < 0 {
		c.mu.Unlock()
		return compile()
	}
	e := &cacheEntry{key: key, done: make(chan struct{})}
	e.elem = c.lru.PushFront(e)
	c.entries[key] = e
	c.evict()
	c.mu.Unlock()

	e.x, e.err = compile()
	if e.x != nil {
		e.x.cached = key
		e.bytes = e.x.footprint()
	}
	c.mu.Lock()
	close(e.done)
	if e.err != nil {
		c.forget(e) // let a later request try again
	} else if c.entries[key] == e {
		c.bytes += e.bytes
		c.evict()
	}
	c.mu.Unlock()
	return e.x, e.err
}

// evict drops the least recently used entries beyond the count and the
// memory bound, keeping at least the newest; waiters on a dropped entry
// still get its result. c.mu must be held.
func (c *compileCache) evict() {
	for c.lru.Len() > c.size || c.budget >= 0 && c.bytes > c.budget && c.lru.Len() > 1 {
		c.forget(c.lru.Back().Value.(*cacheEntry))
	}
}

// forget removes e if it is still cached. c.mu must be held.
func (c *compileCache) forget(e *cacheEntry) {
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
		c.lru.Remove(e.elem)
		if isDone(e) {
			c.bytes -= e.bytes
		}
	}
}

func isDone(e *cacheEntry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// remove takes a closing executable out of the cache.
func (c *compileCache) remove(x *Executable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[x.cached]; e != nil && isDone(e) && e.x == x {
		c.forget(e)
	}
}

// drain empties the cache, returning the executables it held (those
// still compiling are closed by their compiler when it sees the client
// closed).
func (c *compileCache) drain() []*Executable {
	c.mu.Lock()
	defer c.mu.Unlock()
	var xs []*Executable
	for _, e := range c.entries {
		if isDone(e) && e.x != nil {
			xs = append(xs, e.x)
		}
	}
	clear(c.entries)
	c.lru.Init()
	c.bytes = 0
	return xs
}

func (c *compileCache) stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Entries: len(c.entries), Bytes: c.bytes}
}
