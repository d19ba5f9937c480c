package hlotext

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// uniquifyNames gives instructions whose names repeat across computations
// fresh names, as XLA's parser does (its NameUniquer): the first keeps its
// name, later ones take the next free numeric suffix of the same root
// ("x", "x" -> "x", "x.1"). Instruction names must be unique in a module.
func uniquifyNames(m *hlo.Module) {
	type ids struct {
		used map[int64]bool
		next int64
	}
	roots := map[string]*ids{}
	unique := func(name string) string {
		root, suffix, hasSuffix := name, int64(0), false
		if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
			if n, err := strconv.ParseInt(name[i+1:], 10, 64); err == nil && n >= 0 && strconv.FormatInt(n, 10) == name[i+1:] {
				root, suffix, hasSuffix = name[:i], n, true
			}
		}
		g := roots[root]
		if g == nil {
			g = &ids{used: map[int64]bool{}}
			roots[root] = g
		}
		if !g.used[suffix] {
			g.used[suffix] = true
			return name
		}
		for g.used[g.next] {
			g.next++
		}
		suffix = g.next
		g.used[suffix] = true
		if suffix == 0 && !hasSuffix {
			return root
		}
		return root + "." + strconv.FormatInt(suffix, 10)
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			in.Name = unique(in.Name)
		}
	}
}
