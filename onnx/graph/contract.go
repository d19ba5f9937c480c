package graph

import "slices"

// clusters returns each of n nodes' cluster, named by one of its nodes,
// and the successors of each cluster so named: along the edges froms[k]
// → tos[k], in order, the clusters of two nodes joinable says may share
// one merge, unless another path between them, through a cluster
// outside the pair, would make the merge a cycle.
func clusters(n int, froms, tos []int, joinable func(from, to int) bool) (rep []int, succ []map[int]bool) {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	g := newContracted(n, froms, tos)
	for k, from := range froms {
		a, b := find(from), find(tos[k])
		if a == b || !joinable(from, tos[k]) || g.otherPath(a, b) || g.otherPath(b, a) {
			continue
		}
		parent[b] = a
		g.merge(a, b)
	}
	rep = make([]int, n)
	for i := range rep {
		rep[i] = find(i)
	}
	return rep, g.succ
}

// contracted is the graph the clustering contracts: its nodes are
// clusters (union-find representatives), each with its successor and
// predecessor sets, and a rank that orders every edge (rank[u] < rank[v]
// for u → v), kept as edges move by Pearce and Kelly's dynamic
// topological sort, as TensorFlow's GraphCycles does for
// mark_for_compilation. A path between two clusters then only runs
// through ranks between theirs, and a search for one visits those alone:
// searching every successor for every edge made loading a graph of n
// nodes take time in n² (1.6 s of a 3,000-node graph's load).
type contracted struct {
	succ, pred []map[int]bool
	rank       []int
	mark       []int // the search that last visited each node
	search     int
	stack      []int
}

// newContracted returns the graph of n nodes with edges from → to for
// each pair of froms and tos, ranked in a topological order (Kahn's, the
// lowest index first among the ready).
func newContracted(n int, froms, tos []int) *contracted {
	g := &contracted{succ: make([]map[int]bool, n), pred: make([]map[int]bool, n), rank: make([]int, n), mark: make([]int, n)}
	for i := range n {
		g.succ[i], g.pred[i] = map[int]bool{}, map[int]bool{}
	}
	indeg := make([]int, n)
	for k, from := range froms {
		to := tos[k]
		if from != to && !g.succ[from][to] {
			g.succ[from][to], g.pred[to][from] = true, true
			indeg[to]++
		}
	}
	var ready []int
	for i := range n {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	next := 0
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		g.rank[i] = next
		next++
		for s := range g.succ[i] {
			if indeg[s]--; indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	return g
}

// otherPath reports whether b can be reached from a other than by the
// edge a → b: a path of two edges or more, which merging a and b would
// turn into a cycle through the clusters on it.
func (g *contracted) otherPath(a, b int) bool {
	g.search++
	g.stack = g.stack[:0]
	for s := range g.succ[a] {
		if s != b && g.rank[s] < g.rank[b] {
			g.mark[s] = g.search
			g.stack = append(g.stack, s)
		}
	}
	for len(g.stack) > 0 {
		x := g.stack[len(g.stack)-1]
		g.stack = g.stack[:len(g.stack)-1]
		if g.succ[x][b] {
			return true
		}
		for s := range g.succ[x] {
			if g.mark[s] != g.search && g.rank[s] < g.rank[b] {
				g.mark[s] = g.search
				g.stack = append(g.stack, s)
			}
		}
	}
	return false
}

// merge folds b into a across the edge a → b (otherPath(a, b) false):
// b's other edges become a's.
func (g *contracted) merge(a, b int) {
	delete(g.succ[a], b)
	delete(g.pred[b], a)
	preds, succs := g.pred[b], g.succ[b]
	g.pred[b], g.succ[b] = nil, nil
	for p := range preds {
		delete(g.succ[p], b)
		g.insert(p, a)
	}
	for s := range succs {
		delete(g.pred[s], b)
		g.insert(a, s)
	}
}

// insert adds the edge x → y (no cycle: merge's edges close none) and
// reorders the ranks between y's and x's where it goes against them.
func (g *contracted) insert(x, y int) {
	if x == y || g.succ[x][y] {
		return
	}
	g.succ[x][y], g.pred[y][x] = true, true
	lo, hi := g.rank[y], g.rank[x]
	if lo > hi {
		return
	}
	// Those reached from y with ranks up to x's must come after those
	// reaching x with ranks from y's: the same ranks, dealt out again.
	fwd := g.reach(y, g.succ, func(r int) bool { return r <= hi })
	back := g.reach(x, g.pred, func(r int) bool { return r >= lo })
	byRank := func(u, v int) int { return g.rank[u] - g.rank[v] }
	slices.SortFunc(back, byRank)
	slices.SortFunc(fwd, byRank)
	nodes := append(back, fwd...)
	ranks := make([]int, len(nodes))
	for i, n := range nodes {
		ranks[i] = g.rank[n]
	}
	slices.Sort(ranks)
	for i, n := range nodes {
		g.rank[n] = ranks[i]
	}
}

// reach returns from and the nodes reached from it along next whose
// ranks keep within.
func (g *contracted) reach(from int, next []map[int]bool, within func(rank int) bool) []int {
	g.search++
	g.mark[from] = g.search
	out := []int{from}
	for k := 0; k < len(out); k++ {
		for s := range next[out[k]] {
			if g.mark[s] != g.search && within(g.rank[s]) {
				g.mark[s] = g.search
				out = append(out, s)
			}
		}
	}
	return out
}
