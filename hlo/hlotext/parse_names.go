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
	used := map[string]bool{}
	next := map[string]int64{} // per root: no free suffix below this
	unique := func(name string) string {
		if !used[name] {
			used[name] = true
			return name
		}
		root := name
		if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
			if n, err := strconv.ParseInt(name[i+1:], 10, 64); err == nil && n >= 0 && strconv.FormatInt(n, 10) == name[i+1:] {
				root = name[:i]
			}
		}
		for k := max(next[root], 1); ; k++ {
			cand := root + "." + strconv.FormatInt(k, 10)
			if !used[cand] {
				next[root] = k + 1
				used[cand] = true
				return cand
			}
		}
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			in.Name = unique(in.Name)
		}
	}
}
