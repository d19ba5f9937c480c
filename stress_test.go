package axle_test

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/axle-ml/axle"
)

// The stress tests run for 30 s each (skipped with -short) to give rare
// interleavings a chance; run them under -race. AXLE_STRESS_SECONDS=N
// runs them N seconds instead, for development:
//
//	AXLE_STRESS_SECONDS=3 go test . -race -run Stress -count=1
func stressDuration(t *testing.T) time.Duration {
	t.Helper()
	if testing.Short() {
		t.Skip("stress test: 30 s, skipped with -short")
	}
	if s := os.Getenv("AXLE_STRESS_SECONDS"); s != "" {
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("AXLE_STRESS_SECONDS=%q: %v", s, err)
		}
		return time.Duration(n * float64(time.Second))
	}
	return 30 * time.Second
}

const identity1024 = `HloModule id
ENTRY main {
  ROOT p = f32[1024] parameter(0)
}`

// TestStressReleaseDuringExecute: an execution whose result is its
// argument, with the argument released concurrently and other goroutines
// recycling host storage, returns either ErrReleased or exactly the
// argument's values — never junk or another buffer's values.
func TestStressReleaseDuringExecute(t *testing.T) {
	d := stressDuration(t)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			c := newClient(t, e.backend)
			x := compileRuns(t, c, identity1024, e.runs)
			deadline := time.Now().Add(d / time.Duration(len(engines)))
			var stop atomic.Bool
			var wg sync.WaitGroup
			junk := make([]float32, 1024)
			for i := range junk {
				junk[i] = -1
			}
			wg.Go(func() {
				for !stop.Load() {
					b, _ := axle.BufferFromSlice(c, junk)
					b.Release()
				}
			})
			var runs, bad int
			vals := make([]float32, 1024)
			for n := 1; time.Now().Before(deadline); n++ {
				for i := range vals {
					vals[i] = float32(n)
				}
				a, _ := axle.BufferFromSlice(c, vals)
				go a.Release()
				outs, err := x.Execute(a)
				if errors.Is(err, axle.ErrReleased) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				runs++
				got := floats(t, outs[0])
				if got[0] != float32(n) || got[1023] != float32(n) {
					bad++
				}
				outs[0].Release()
			}
			stop.Store(true)
			wg.Wait()
			if bad > 0 {
				t.Errorf("%d of %d results were another buffer's values", bad, runs)
			}
		})
	}
}

// TestStressRejectedDonation: calls whose donation is rejected (their
// other argument is released) change nothing observable: concurrent
// reads of the buffer never see ErrDonated, and a concurrent Release is
// never lost.
func TestStressRejectedDonation(t *testing.T) {
	d := stressDuration(t)
	c := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	released := buffer(t, c, []float32{1, 2})
	released.Release()
	deadline := time.Now().Add(d)
	var lost, spurious, iters int
	for time.Now().Before(deadline) {
		iters++
		b := buffer(t, c, []float32{1, 2})
		var wg sync.WaitGroup
		var sawDonated atomic.Bool
		wg.Go(func() {
			for range 20 {
				if _, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, b, released); !errors.Is(err, axle.ErrReleased) && !errors.Is(err, axle.ErrInUse) {
					t.Errorf("rejected call: %v", err)
				}
			}
		})
		wg.Go(func() {
			for range 20 {
				if _, err := axle.ToSlice[float32](b); errors.Is(err, axle.ErrDonated) {
					sawDonated.Store(true)
				}
			}
		})
		time.Sleep(time.Duration(iters%3) * time.Microsecond)
		b.Release()
		wg.Wait()
		if sawDonated.Load() {
			spurious++
		}
		if _, err := axle.ToSlice[float32](b); !errors.Is(err, axle.ErrReleased) {
			lost++
		}
	}
	if lost > 0 || spurious > 0 {
		t.Errorf("in %d rounds: %d releases lost, %d with reads failing ErrDonated", iters, lost, spurious)
	}
}
