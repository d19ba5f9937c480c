package kernels

import (
	"slices"
	"sync"
	"testing"
)

// A thread alone takes its own chunks in order, then the others' from
// their backs, from the one with most left (the lower-numbered on a tie);
// none twice.
func TestClaimsOrder(t *testing.T) {
	q := newClaims(10, 3) // ranges [0,3) [3,6) [6,10)
	defer q.put()
	var got []int
	for c, ok := q.next(1); ok; c, ok = q.next(1) {
		got = append(got, c)
	}
	want := []int{3, 4, 5, 9, 2, 8, 1, 7, 0, 6}
	if !slices.Equal(got, want) {
		t.Fatalf("thread 1 alone took %v, want %v", got, want)
	}
}

// Threads claiming at once get every chunk exactly once (run with -race).
func TestClaimsConcurrent(t *testing.T) {
	for _, n := range []int{0, 1, 7, 64, 1000} {
		for _, threads := range []int{1, 2, 5} {
			q := newClaims(n, threads)
			seen := make([][]int, threads)
			var wg sync.WaitGroup
			for th := range threads {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for c, ok := q.next(th); ok; c, ok = q.next(th) {
						seen[th] = append(seen[th], c)
					}
				}()
			}
			wg.Wait()
			q.put()
			all := slices.Concat(seen...)
			slices.Sort(all)
			if len(all) != n {
				t.Fatalf("n=%d threads=%d: %d chunks handed out", n, threads, len(all))
			}
			for i, c := range all {
				if c != i {
					t.Fatalf("n=%d threads=%d: chunk %d handed out twice or not at all", n, threads, i)
				}
			}
		}
	}
}
