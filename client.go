package axle

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/collective"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// Backend is "cpu" (the default: the compiled CPU backend) or
	// "interp" (the reference evaluator).
	Backend string
	// Threads bounds the goroutines one execution uses on the cpu backend
	// (0: GOMAXPROCS). The evaluator runs on the calling goroutine.
	Threads int
	// CacheSize is how many compiled executables the compile cache keeps
	// (0: DefaultCacheSize; negative: no caching).
	CacheSize int
	// CacheBytes bounds the memory of the executables the compile cache
	// keeps: each counts its arena (MemoryStats.Peak) and its constants
	// (0: DefaultCacheBytes; negative: no bound but CacheSize). The least
	// recently used go first; one executable larger than the bound is
	// kept alone.
	CacheBytes int64
	// MemoryLimit bounds, in bytes, the memory the client's executions and
	// new buffers may take (see ErrMemoryLimit): 0 is 3/4 of the
	// machine's physical memory (MemTotal on Linux, 4 GiB on WebAssembly;
	// no limit where it is unknown), negative no limit.
	MemoryLimit int64
	// Devices is how many CPU devices the client has (0: one). Each has
	// an equal share of Threads; a module with replica_count ×
	// num_partitions > 1 runs one program per device (ExecuteDevices),
	// exchanging values through in-process collectives.
	Devices int
	// Cluster, when set, joins the client to other processes (package
	// distributed): the client's devices are the cluster's, numbered
	// globally, of which this process runs the cluster's local devices.
	// Devices must then be 0 or the local device count.
	Cluster collective.Cluster
}

// DefaultCacheSize is the compile cache's size when ClientOptions leave it 0.
const DefaultCacheSize = 128

// DefaultCacheBytes is the compile cache's memory bound when
// ClientOptions leave CacheBytes 0: 1 GiB.
const DefaultCacheBytes = 1 << 30

// Client is a connection to one platform: its devices, the buffers placed
// on them and the executables compiled for them.
type Client struct {
	backend string
	threads int
	devices []*Device
	cache   compileCache
	host    hostPool
	closed  atomic.Bool
	mem     memAccount // the memory limit (memory.go)
	// net carries collectives between devices (devices.go); cluster is
	// set when they span processes.
	net      collective.Transport
	cluster  collective.Cluster
	launches atomic.Uint64
}

// Device is one device of a client's platform: a share of the machine's
// threads (its executions use up to Threads goroutines), in this process
// or, in a cluster, in process Process.
type Device struct {
	ID      int
	Kind    string
	Threads int
	Process int
	// Local says whether this process runs the device's programs.
	Local bool
}

// String names the device as PJRT's debug strings do ("cpu:0").
func (d *Device) String() string {
	if d == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s:%d", d.Kind, d.ID)
}

// Threads is how many goroutines one execution of the client's
// executables uses (ClientOptions.Threads resolved: GOMAXPROCS for 0, one
// on the evaluator; 0 for a nil Client).
func (c *Client) Threads() int {
	if c == nil {
		return 0
	}
	return c.threads
}

// L2Bytes is one core's level-2 cache on the machine the client's
// executables run on, in bytes: 0 where unknown, and on the evaluator,
// whose speed does not turn on it.
func (c *Client) L2Bytes() int {
	if c == nil || c.backend != "cpu" {
		return 0
	}
	return cpu.L2Bytes()
}

// NewClient returns a client of the backend opts names.
func NewClient(opts ClientOptions) (*Client, error) {
	backend := opts.Backend
	if backend == "" {
		backend = "cpu"
	}
	if backend != "cpu" && backend != "interp" {
		return nil, fmt.Errorf("axle: unknown backend %q (available: cpu, interp)", opts.Backend)
	}
	if opts.Threads < 0 {
		return nil, fmt.Errorf("axle: negative thread count %d", opts.Threads)
	}
	threads := opts.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if backend == "interp" {
		threads = 1
	}
	size := opts.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	budget := opts.CacheBytes
	if budget == 0 {
		budget = DefaultCacheBytes
	}
	c := &Client{backend: backend, threads: threads}
	c.mem.limit = opts.MemoryLimit
	if c.mem.limit == 0 {
		c.mem.limit = defaultMemoryLimit()
	}
	if err := c.makeDevices(opts, threads); err != nil {
		return nil, err
	}
	c.cache.init(size, budget)
	return c, nil
}

// Platform is the backend's name: "cpu" or "interp" ("" for a nil or
// zero Client).
func (c *Client) Platform() string {
	if c == nil {
		return ""
	}
	return c.backend
}

// Devices lists the client's devices, across every process of a
// cluster, by id. The caller must not modify them.
func (c *Client) Devices() []*Device {
	if c == nil {
		return nil
	}
	return c.devices
}

// CacheStats counts the compile cache's lookups since the client was made.
type CacheStats struct {
	// Hits are compilations answered from the cache (including those that
	// waited for the same compilation running in another goroutine);
	// Misses are the ones that compiled.
	Hits, Misses int64
	// Entries is the number of executables the cache holds now, Bytes
	// their memory as CacheBytes counts it.
	Entries int
	Bytes   int64
}

// CacheStats reports the compile cache's hits and misses.
func (c *Client) CacheStats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	return c.cache.stats()
}

// Close ends the client's life: it closes the executables its compile
// cache holds (see Executable.Close) and drops its pool of host storage.
// Compiling, making buffers and executing on a closed client fail with
// ErrClosed; buffers already made stay readable. Closing twice does
// nothing.
func (c *Client) Close() error {
	if err := c.valid(); err != nil {
		return err
	}
	if c.closed.Swap(true) {
		return nil
	}
	for _, x := range c.cache.drain() {
		x.Close()
	}
	c.host.drain()
	return nil
}

// errBadClient is what methods called on a nil or zero client return.
var errBadClient = errors.New("axle: nil or zero Client (clients come from NewClient)")

// ErrClosed is what using a closed client or executable returns (errors
// name which: errors.Is(err, ErrClosed) tests for either).
var ErrClosed = errors.New("axle: closed")

type closedError string

func (e closedError) Error() string        { return "axle: " + string(e) + " is closed" }
func (e closedError) Is(target error) bool { return target == ErrClosed }

// valid checks that c was made by NewClient.
func (c *Client) valid() error {
	if c == nil || len(c.devices) == 0 {
		return errBadClient
	}
	return nil
}

// usable checks that c was made by NewClient and is not closed.
func (c *Client) usable() error {
	if err := c.valid(); err != nil {
		return err
	}
	if c.closed.Load() {
		return closedError("client")
	}
	return nil
}
