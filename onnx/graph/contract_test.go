package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// clustersByDefinition is clusters as first written: the same merges in
// the same order, each checked by searching every successor of the
// contracted graph, which it updates by scanning every cluster.
func clustersByDefinition(n int, froms, tos []int, joinable func(from, to int) bool) []int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	succ := make([]map[int]bool, n)
	for i := range succ {
		succ[i] = map[int]bool{}
	}
	for k := range froms {
		succ[froms[k]][tos[k]] = true
	}
	reaches := func(from, to int) bool { // a path of two edges or more
		seen := map[int]bool{from: true}
		var stack []int
		for s := range succ[from] {
			if s != to {
				stack, seen[s] = append(stack, s), true
			}
		}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for s := range succ[x] {
				if s == to {
					return true
				}
				if !seen[s] {
					stack, seen[s] = append(stack, s), true
				}
			}
		}
		return false
	}
	for k := range froms {
		a, b := find(froms[k]), find(tos[k])
		if a == b || !joinable(froms[k], tos[k]) || reaches(a, b) || reaches(b, a) {
			continue
		}
		parent[b] = a
		for s := range succ[b] {
			if s != a {
				succ[a][s] = true
			}
		}
		delete(succ[a], b)
		succ[b] = nil
		for r := range succ {
			if succ[r] != nil && succ[r][b] {
				delete(succ[r], b)
				if r != a {
					succ[r][a] = true
				}
			}
		}
	}
	rep := make([]int, n)
	for i := range rep {
		rep[i] = find(i)
	}
	return rep
}

// TestClustersAsDefined: on random graphs (nodes in topological order,
// edges forward, some nodes not compiled, two devices), clusters makes
// exactly the clusters of the definition, and its successor sets are the
// contracted graph's edges.
func TestClustersAsDefined(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 2 + rng.IntN(60)
		var froms, tos []int
		for j := 1; j < n; j++ {
			for range rng.IntN(4) {
				i := j - 1 - rng.IntN(min(j, 1+rng.IntN(12)))
				froms, tos = append(froms, i), append(tos, j)
			}
		}
		// Edges in the order a graph's consumers list their inputs.
		order := make([]int, len(froms))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(x, y int) int { return tos[x] - tos[y] })
		f, to := make([]int, len(order)), make([]int, len(order))
		for k, o := range order {
			f[k], to[k] = froms[o], tos[o]
		}
		dev := make([]int, n) // 0: not compiled
		for i := range dev {
			dev[i] = []int{0, 1, 1, 1, 1, 2}[rng.IntN(6)]
		}
		joinable := func(a, b int) bool { return dev[a] != 0 && dev[a] == dev[b] }
		rep, succ := clusters(n, f, to, joinable)
		want := clustersByDefinition(n, f, to, joinable)
		if !slices.Equal(rep, want) {
			t.Fatalf("trial %d (%d nodes, edges %v → %v, devices %v): clusters %v, by the definition %v", trial, n, f, to, dev, rep, want)
		}
		for k := range f {
			a, b := rep[f[k]], rep[to[k]]
			if a != b && !succ[a][b] {
				t.Fatalf("trial %d: no edge %d → %d between the clusters of edge %d → %d", trial, a, b, f[k], to[k])
			}
		}
		for a, ss := range succ {
			for b := range ss {
				if rep[a] != a || rep[b] != b {
					t.Fatalf("trial %d: edge %d → %d from or to a merged node", trial, a, b)
				}
			}
		}
	}
}
