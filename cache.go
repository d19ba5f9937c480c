package axle

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"sync"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
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
	if c == nil {
		return nil, errBadClient
	}
	if m == nil {
		return nil, errors.New("axle: nil module")
	}
	if m.Entry == nil {
		return nil, fmt.Errorf("axle: module %s has no entry computation", m.Name)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	key := cacheKey{fingerprint(m), opts}
	return c.cache.get(key, func() (*Executable, error) { return c.compile(m, opts) })
}

// CompileText parses one module in HLO text and compiles it.
func (c *Client) CompileText(text string, opts CompileOptions) (*Executable, error) {
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	return c.Compile(m, opts)
}

// compile runs the backend's compiler; a panic in it (a compiler bug)
// becomes an error rather than crossing the API.
func (c *Client) compile(m *hlo.Module, opts CompileOptions) (x *Executable, err error) {
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, fmt.Errorf("axle: compiling %s: internal error: %v", m.Name, r)
		}
	}()
	x = &Executable{client: c, entry: m.Entry.Name, tuple: m.Entry.ResultShape().IsTuple()}
	x.params = hlo.CloneShapes(m.Entry.ParamShapes())
	for _, p := range m.Entry.Params {
		x.names = append(x.names, p.Name)
	}
	if c.backend == "interp" {
		if err := eval.CheckSupported(m); err != nil {
			return nil, fmt.Errorf("axle: %w", err)
		}
		x.module = m.Clone()
		x.prog = interpProgram{x.module}
		return x, nil
	}
	cx, err := cpu.Compile(m, cpu.Options{Threads: c.threads, NoOptimize: opts.NoOptimize, Profile: opts.Profile,
		ExpectedRuns: opts.ExpectedRuns})
	if err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	x.cpu, x.prog, x.module = cx, cx, cx.Module()
	return x, nil
}

// cacheKey identifies a compilation: the module's fingerprint and the
// options (the client fixes the backend and threads).
type cacheKey struct {
	module [sha256.Size]byte
	opts   CompileOptions
}

// fingerprint hashes the module's canonical text, which names nothing, with
// what the executable shows of names (the entry's and its parameters', in
// errors) and the parameter shapes with their layouts.
func fingerprint(m *hlo.Module) [sha256.Size]byte {
	h := sha256.New()
	// Large constants are hashed as raw bytes, not printed: printing a
	// model's weights as decimal text took seconds.
	opts := hlotext.CanonicalForm
	opts.ElideLargeConstants = true
	h.Write([]byte(hlotext.Print(m, opts)))
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpConstant && in.Literal != nil {
				hashLiteral(h, in.Literal)
			}
		}
	}
	fmt.Fprintf(h, "\x00entry %s\x00", m.Entry.Name)
	for _, p := range m.Entry.Params {
		fmt.Fprintf(h, "%s %s\x00", p.Name, p.Shape.String())
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func hashLiteral(h hash.Hash, l *hlo.Literal) {
	for _, e := range l.Elements() {
		hashLiteral(h, e)
	}
	h.Write(l.RawBytes())
}

// compileCache keeps the most recently used executables. A compilation
// running for a key makes later requests for the key wait for it rather
// than compile again.
type compileCache struct {
	mu           sync.Mutex
	size         int
	entries      map[cacheKey]*cacheEntry
	lru          list.List // of *cacheEntry, most recently used first
	hits, misses int64
}

type cacheEntry struct {
	key  cacheKey
	elem *list.Element
	done chan struct{} // closed when x and err are set
	x    *Executable
	err  error
}

func (c *compileCache) init(size int) {
	c.size = size
	c.entries = map[cacheKey]*cacheEntry{}
}

func (c *compileCache) get(key cacheKey, compile func() (*Executable, error)) (*Executable, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.hits++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		<-e.done
		return e.x, e.err
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
	close(e.done)
	if e.err != nil {
		c.mu.Lock()
		c.forget(e) // let a later request try again
		c.mu.Unlock()
	}
	return e.x, e.err
}

// evict drops the least recently used entries beyond the size; waiters on
// a dropped entry still get its result.
func (c *compileCache) evict() {
	for c.lru.Len() > c.size {
		c.forget(c.lru.Back().Value.(*cacheEntry))
	}
}

// forget removes e if it is still cached. c.mu must be held.
func (c *compileCache) forget(e *cacheEntry) {
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
		c.lru.Remove(e.elem)
	}
}

func (c *compileCache) stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Entries: len(c.entries)}
}
