package onnxtest

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/ops"
)

// usage lists the op keys a model uses, subgraphs included, with their
// domain's opset, and its inputs' element types.
func usage(m *onnx.Model) (map[string]int, []string) {
	used := map[string]int{}
	var walk func(g *onnx.Graph)
	walk = func(g *onnx.Graph) {
		for _, n := range g.Nodes {
			key := n.Op
			if n.Domain != "" {
				key = n.Domain + ":" + n.Op
			}
			used[key] = m.Opsets[n.Domain]
			for _, sub := range n.Subgraphs() {
				walk(sub)
			}
		}
	}
	walk(m.Graph)
	var types []string
	for _, vi := range m.Graph.Inputs {
		if vi.Type != nil {
			types = append(types, vi.Type.Elem.String())
		}
	}
	return used, types
}

// WriteCoverage writes the coverage table in Markdown: for every op the
// tests use or Axle implements, how it is implemented (HLO lowering, host
// kernel), the opset versions its entries start at, the opsets and input
// types the tests use it at, and how many tests that use it pass.
func WriteCoverage(w io.Writer, results []Result) {
	type row struct {
		impl, since    string
		opsets, types  map[string]bool
		passed, total  int
		failedExamples []string
	}
	rows := map[string]*row{}
	get := func(k string) *row {
		r, ok := rows[k]
		if !ok {
			r = &row{opsets: map[string]bool{}, types: map[string]bool{}}
			rows[k] = r
		}
		return r
	}
	for _, e := range ops.All() {
		r := get(e.Key())
		var kinds []string
		if e.Lower != nil {
			kinds = append(kinds, "lowering")
		}
		if e.Host != nil {
			kinds = append(kinds, "host")
		}
		r.impl = strings.Join(kinds, "+")
		if r.since != "" {
			r.since += ", "
		}
		r.since += fmt.Sprint(e.Since)
	}
	for _, res := range results {
		for k, v := range res.Ops {
			r := get(k)
			r.total++
			r.opsets[fmt.Sprint(v)] = true
			for _, t := range res.Types {
				r.types[t] = true
			}
			if res.Status == Pass {
				r.passed++
			} else if len(r.failedExamples) < 3 {
				r.failedExamples = append(r.failedExamples, res.Name)
			}
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "| op | implementation | entries since opset | corpus opsets | corpus input types | tests passing | failing (examples) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, k := range keys {
		r := rows[k]
		impl := r.impl
		if impl == "" {
			impl = "**none**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d/%d | %s |\n", k, impl, r.since, setString(r.opsets), setString(r.types),
			r.passed, r.total, strings.Join(r.failedExamples, " "))
	}
}

// setString joins a set's members, numbers in numeric order.
func setString(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, errA := strconv.Atoi(out[i])
		b, errB := strconv.Atoi(out[j])
		if errA == nil && errB == nil {
			return a < b
		}
		return out[i] < out[j]
	})
	return strings.Join(out, " ")
}
