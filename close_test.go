package axle_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle"
)

// TestExecutableClose: a closed executable refuses executions with
// ErrClosed and leaves the compile cache, so compiling the text again
// gives a live one; its earlier results stay readable.
func TestExecutableClose(t *testing.T) {
	for _, backend := range []string{"cpu", "interp"} {
		c := newClient(t, backend)
		x := compile(t, c, twoParams)
		a := buffer(t, c, []float32{1, 2})
		outs, err := x.Execute(a, a)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Errorf("closing twice: %v", err)
		}
		if _, err := x.Execute(a, a); !errors.Is(err, axle.ErrClosed) || !strings.Contains(err.Error(), "executable main is closed") {
			t.Errorf("%s: executing a closed executable: %v", backend, err)
		}
		if _, err := x.ExecuteLiterals(nil, nil); !errors.Is(err, axle.ErrClosed) {
			t.Errorf("%s: ExecuteLiterals on a closed executable: %v", backend, err)
		}
		if got := fmt.Sprint(floats(t, outs[0])); got != "[2 4]" {
			t.Errorf("%s: an earlier result reads %s", backend, got)
		}
		outs[0].Release() // its pool is gone: dropped, no panic
		if s := c.CacheStats(); s.Entries != 0 {
			t.Errorf("%s: the closed executable is still cached: %+v", backend, s)
		}
		y := compile(t, c, twoParams)
		if y == x {
			t.Fatalf("%s: compiling again gave the closed executable", backend)
		}
		outs, err = y.Execute(a, a)
		if err != nil || fmt.Sprint(floats(t, outs[0])) != "[2 4]" {
			t.Errorf("%s: the recompiled executable: %v", backend, err)
		}
	}
}

// TestCloseWhileExecuting: executions running when Close is called
// finish with right results; later ones fail with ErrClosed.
func TestCloseWhileExecuting(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	a := buffer(t, c, []float32{1, 2})
	var wg sync.WaitGroup
	started := make(chan struct{}, 8)
	for range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				outs, err := x.Execute(a, a)
				if i == 0 {
					started <- struct{}{}
				}
				if errors.Is(err, axle.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if v, err := axle.ToSlice[float32](outs[0]); err != nil || fmt.Sprint(v) != "[2 4]" {
					t.Errorf("result %v (%v) while closing", v, err)
					return
				}
				outs[0].Release()
			}
		})
	}
	for range 8 {
		<-started
	}
	x.Close()
	wg.Wait()
}

// bigArena keeps a 16 MiB intermediate (the dot's result) in its arena.
const bigArena = `HloModule big
add {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT s = f32[] add(l, r)
}
ENTRY main {
  a = f32[4096,8] parameter(0)
  b = f32[8,1024] parameter(1)
  d = f32[4096,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  ROOT r = f32[4096] reduce(d, z), dimensions={1}, to_apply=add
}`

// TestCloseFreesArena: closing an executable the caller still holds
// gives its arena back to the garbage collector.
func TestCloseFreesArena(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, bigArena)
	const arena = 16 << 20
	if p := x.Memory().Peak; p < arena {
		t.Skipf("the arena is %d bytes, not the 16 MiB dot this test frees", p)
	}
	a := buffer(t, c, make([]float32, 4096*8), 4096, 8)
	b := buffer(t, c, make([]float32, 8*1024), 8, 1024)
	outs, err := x.Execute(a, b)
	if err != nil {
		t.Fatal(err)
	}
	outs[0].Release()
	before := heapInUse()
	x.Close()
	after := heapInUse()
	if before-after < arena*3/4 {
		t.Errorf("closing freed %d bytes, want the 16 MiB arena", before-after)
	}
	runtime.KeepAlive(x)
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestClientClose: a closed client refuses compilations, new buffers and
// executions (of executables compiled before) with ErrClosed; buffers
// made before stay readable.
func TestClientClose(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	a := buffer(t, c, []float32{1, 2})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("closing twice: %v", err)
	}
	if _, err := c.CompileText(twoParams, axle.CompileOptions{}); !errors.Is(err, axle.ErrClosed) {
		t.Errorf("compiling: %v", err)
	}
	if _, err := axle.BufferFromSlice(c, []float32{1}); !errors.Is(err, axle.ErrClosed) {
		t.Errorf("BufferFromSlice: %v", err)
	}
	if _, err := c.BufferFromLiteral(vec(t, 1)); !errors.Is(err, axle.ErrClosed) {
		t.Errorf("BufferFromLiteral: %v", err)
	}
	if _, err := x.Execute(a, a); !errors.Is(err, axle.ErrClosed) || !strings.Contains(err.Error(), "client is closed") {
		t.Errorf("executing: %v", err)
	}
	if got := fmt.Sprint(floats(t, a)); got != "[1 2]" {
		t.Errorf("a buffer of the closed client reads %s", got)
	}
	a.Release()
}

// constModule's only memory is its f32[1000] constant: 4000 bytes.
const constModule = `HloModule k%d
ENTRY main {
  p = f32[1000] parameter(0)
  k = f32[1000] constant({%s})
  ROOT a = f32[1000] add(p, k)
}`

// TestCacheBytes: the compile cache keeps executables within CacheBytes,
// counting their constants (4000 bytes each here, on the evaluator,
// which has no arena), least recently used out first.
func TestCacheBytes(t *testing.T) {
	c, err := axle.NewClient(axle.ClientOptions{Backend: "interp", CacheBytes: 9000})
	if err != nil {
		t.Fatal(err)
	}
	text := func(i int) string {
		return fmt.Sprintf(constModule, i, strings.TrimSuffix(strings.Repeat(fmt.Sprint(i)+", ", 1000), ", "))
	}
	compile(t, c, text(1))
	compile(t, c, text(2))
	if s := c.CacheStats(); s.Entries != 2 || s.Bytes != 8000 {
		t.Fatalf("two modules: %+v, want 2 entries of 8000 bytes", s)
	}
	compile(t, c, text(1)) // a hit: 2 is now the oldest
	compile(t, c, text(3))
	if s := c.CacheStats(); s.Entries != 2 || s.Bytes != 8000 || s.Misses != 3 {
		t.Fatalf("three modules: %+v, want 2 entries of 8000 bytes, 3 misses", s)
	}
	compile(t, c, text(1))
	compile(t, c, text(2))
	if s := c.CacheStats(); s.Hits != 2 || s.Misses != 4 {
		t.Fatalf("after the eviction of 2: %+v, want 2 hits, 4 misses", s)
	}
	// Alone over the bound, an executable is still kept.
	small, _ := axle.NewClient(axle.ClientOptions{Backend: "interp", CacheBytes: 100})
	x := compile(t, small, text(1))
	if y := compile(t, small, text(1)); y != x {
		t.Error("an executable over the bound was not kept alone")
	}
}

// TestCloseWhileExecutingFreesArenas: the executions running at Close
// put their frames back after Close emptied the pools; once they have
// finished, none of their arenas may be left reachable from the closed
// executable the caller still holds.
func TestCloseWhileExecutingFreesArenas(t *testing.T) {
	c := newClient(t, "cpu")
	a := buffer(t, c, make([]float32, 4096*8), 4096, 8)
	b := buffer(t, c, make([]float32, 8*1024), 8, 1024)
	const arena = 16 << 20
	base := heapInUse()
	x := compile(t, c, bigArena)
	if p := x.Memory().Peak; p < arena {
		t.Skipf("the arena is %d bytes, not the 16 MiB dot this test frees", p)
	}
	var wg sync.WaitGroup
	started := make(chan struct{}, 4)
	for range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				outs, err := x.Execute(a, b)
				if i == 1 {
					started <- struct{}{}
				}
				if err != nil {
					if !errors.Is(err, axle.ErrClosed) {
						t.Error(err)
					}
					return
				}
				outs[0].Release()
			}
		})
	}
	for range 4 {
		<-started
	}
	x.Close()
	wg.Wait()
	heapInUse() // the kernels' scratch pools (sync.Pool) outlive one collection
	if kept := heapInUse() - base; kept > arena*3/4 {
		t.Errorf("%d bytes still reachable after the executions running at Close finished, want no 16 MiB arena", kept)
	}
	runtime.KeepAlive(x)
}
