package spmd_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/spmd"
)

// The oracle: the evaluator runs the global module on whole random
// inputs (shardings are annotations only; the evaluator treats the
// partitioner's custom-calls as the identity). The partitioned module
// runs on each device's shards through the runtime, and the devices'
// result shards are put back together and compared.

// parseCase fills $N (partitions) into a module template.
func parseCase(t *testing.T, text string, n int) *hlo.Module {
	t.Helper()
	m, err := hlotext.Parse(strings.ReplaceAll(text, "$N", fmt.Sprint(n)), hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkPartitioned partitions text for n devices and compares the
// devices' results with the evaluator's on the whole module. It returns
// the partitioned module's text for further checks.
func checkPartitioned(t *testing.T, text string, n int) string {
	t.Helper()
	return checkPartitionedWith(t, text, n, eval.Run)
}

// checkPartitionedWith is checkPartitioned with another oracle, for
// modules the evaluator cannot run whole (shard_map regions are written
// on per-device shapes).
func checkPartitionedWith(t *testing.T, text string, n int, oracle func(*hlo.Module, ...*hlo.Literal) (*hlo.Literal, error)) string {
	t.Helper()
	m := parseCase(t, text, n)
	args := eval.RandomArguments(m, 11)
	want, err := oracle(m, args...)
	if err != nil {
		t.Fatalf("evaluating the global module: %v", err)
	}
	pm, err := spmd.Partition(m)
	if err != nil {
		t.Fatal(err)
	}
	out := hlotext.Print(pm, hlotext.PrintOptions{})
	if err := hlo.Verify(pm); err != nil {
		t.Fatalf("partitioned module does not verify: %v\n%s", err, out)
	}
	if spmd.NeedsPartitioning(pm) && strings.Contains(out, "all-") {
		t.Errorf("the partitioned module still needs partitioning")
	}
	for _, backend := range []string{"interp", "cpu"} {
		got := runDevices(t, backend, pm, args, n, m.Entry.Root.Shape)
		wants := []*hlo.Literal{want}
		if want.Shape().IsTuple() {
			wants = want.Elements()
		}
		for i := range wants {
			closeLiterals(t, fmt.Sprintf("%s/%d devices: result %d", backend, n, i), got[i], wants[i], out)
		}
	}
	return out
}

// runDevices splits the whole arguments by the partitioned parameters'
// shardings, runs every device, and reassembles each result (of the
// global module's result shape global).
func runDevices(t *testing.T, backend string, pm *hlo.Module, args []*hlo.Literal, n int, global hlo.Shape) []*hlo.Literal {
	t.Helper()
	c, err := axle.NewClient(axle.ClientOptions{Backend: backend, Devices: n})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	x, err := c.Compile(pm, axle.CompileOptions{})
	if err != nil {
		t.Fatalf("%s: %v", backend, err)
	}
	devArgs := make([][]*axle.Buffer, n)
	for i, p := range pm.Entry.Params {
		s := shardingOf(t, p)
		for d := range n {
			b, err := c.BufferFromLiteral(shardOf(t, args[i], s, int64(d)))
			if err != nil {
				t.Fatal(err)
			}
			devArgs[d] = append(devArgs[d], b)
		}
	}
	outs, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, devArgs)
	if err != nil {
		t.Fatalf("%s: %v", backend, err)
	}
	rs := shardingOf(t, pm.Entry.Root)
	shapes := []hlo.Shape{global}
	if global.IsTuple() {
		shapes = global.Tuple
	}
	var got []*hlo.Literal
	for i := range shapes {
		es := rs
		if rs.IsTuple() {
			es = rs.Elements[i]
		}
		pieces := make([]*hlo.Literal, n)
		for d := range n {
			if pieces[d], err = outs[d][i].ToLiteral(); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, assemble(t, pieces, es, shapes[i].Dims))
	}
	return got
}

func shardingOf(t *testing.T, in *hlo.Instruction) spmd.Sharding {
	t.Helper()
	s, ok, err := spmd.Of(in)
	if err != nil || !ok {
		t.Fatalf("%s: sharding %v, %v", in.Name, ok, err)
	}
	return s
}

// tileOrigin is where device d's tile starts in a value of dims, how
// many elements of the value it holds, and its padded size (XLA's rule:
// ceil(dim/tiles) each, the last tiles short or empty).
func tileOrigin(t *testing.T, s spmd.Sharding, d int64, dims []int64) (start, size, padded []int64) {
	t.Helper()
	idx, err := s.TileIndex(d, len(dims))
	if err != nil {
		t.Fatal(err)
	}
	start, size, padded = make([]int64, len(dims)), append([]int64(nil), dims...), append([]int64(nil), dims...)
	if s.Kind == spmd.Tiled {
		for i, k := range s.Tiles {
			padded[i] = (dims[i] + k - 1) / k
			start[i] = min(idx[i]*padded[i], dims[i])
			size[i] = min(padded[i], dims[i]-start[i])
		}
	}
	return start, size, padded
}

// shardOf cuts device d's tile out of a whole value, padded with NaN (77
// for integers) so that a rule reading padding unmasked shows.
func shardOf(t *testing.T, whole *hlo.Literal, s spmd.Sharding, d int64) *hlo.Literal {
	t.Helper()
	start, size, padded := tileOrigin(t, s, d, whole.Shape().Dims)
	out := hlo.NewLiteral(hlo.ArrayShape(whole.DType(), padded...))
	junk := 77.0
	if whole.DType().IsFloat() || whole.DType().IsComplex() {
		junk = math.NaN()
	}
	forEachIndex(padded, func(i []int64) {
		out.SetFloat64(out.LinearIndex(i), junk)
	})
	forEachIndex(size, func(i []int64) {
		out.SetFloat64(out.LinearIndex(i), whole.GetFloat64(whole.LinearIndex(offset(start, i))))
	})
	return out
}

// assemble puts the devices' tiles back into one value of dims, leaving
// the padding out; devices holding the same tile must agree exactly (they
// computed the same thing).
func assemble(t *testing.T, pieces []*hlo.Literal, s spmd.Sharding, dims []int64) *hlo.Literal {
	t.Helper()
	out := hlo.NewLiteral(hlo.ArrayShape(pieces[0].DType(), dims...))
	set := make([]bool, out.Len())
	for d, p := range pieces {
		start, size, padded := tileOrigin(t, s, int64(d), dims)
		if got := p.Shape().Dims; fmt.Sprint(got) != fmt.Sprint(padded) {
			t.Fatalf("device %d's result piece is %v, want %v", d, got, padded)
		}
		forEachIndex(size, func(i []int64) {
			at := out.LinearIndex(offset(start, i))
			v := p.GetFloat64(p.LinearIndex(i))
			if set[at] && out.GetFloat64(at) != v && !(math.IsNaN(v) && math.IsNaN(out.GetFloat64(at))) {
				t.Fatalf("device %d's copy of element %v is %v, another device's %v", d, offset(start, i), v, out.GetFloat64(at))
			}
			out.SetFloat64(at, v)
			set[at] = true
		})
	}
	return out
}

func offset(start, i []int64) []int64 {
	out := make([]int64, len(i))
	for k := range i {
		out[k] = start[k] + i[k]
	}
	return out
}

func forEachIndex(dims []int64, f func([]int64)) {
	for _, d := range dims {
		if d == 0 {
			return
		}
	}
	idx := make([]int64, len(dims))
	for {
		f(idx)
		k := len(dims) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < dims[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// closeLiterals compares within f32 reassociation error (sums regrouped
// across devices: a sum of 1800 values split in two differed by 1.6e-5
// relative); NaN matches only NaN.
func closeLiterals(t *testing.T, what string, got, want *hlo.Literal, module string) {
	t.Helper()
	if !got.Shape().SameDims(want.Shape()) {
		t.Fatalf("%s: shape %s, want %s", what, got.Shape().HumanString(), want.Shape().HumanString())
	}
	for i := range want.Len() {
		g, w := got.GetFloat64(i), want.GetFloat64(i)
		if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > 1e-5+1e-4*math.Abs(w) {
			t.Fatalf("%s: element %d is %v, the global module gives %v\n%s", what, i, g, w, module)
		}
	}
}
