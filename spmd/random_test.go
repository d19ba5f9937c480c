package spmd_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/hlo/randhlo"
	"github.com/axle-ml/axle/spmd"
)

// TestRandomModules annotates random modules with random shardings over
// 2, 3 or 4 devices (by seed), even and uneven, and checks the
// partitioned program against the evaluator on the whole module.
func TestRandomModules(t *testing.T) {
	seeds := 150
	if testing.Short() {
		seeds = 30
	}
	ran := 0
	for seed := range uint64(seeds) {
		m, err := randhlo.Module(seed, randhlo.Options{MaxDim: 7})
		if err != nil {
			t.Fatal(err)
		}
		n := int64(2 + seed%3)
		m.NumPartitions = n
		annotate(m, rand.New(rand.NewPCG(seed, 3)), n)
		text := hlotext.Print(m, hlotext.PrintOptions{})
		args := eval.RandomArguments(m, seed)
		want, err := eval.Run(m, args...)
		if err != nil {
			continue // the evaluator refuses it (e.g. an unsupported op): nothing to compare
		}
		pm, st, err := spmd.PartitionWithStats(m)
		if err != nil {
			t.Errorf("seed %d: %v\n%s", seed, err, text)
			continue
		}
		for _, name := range st.Fallbacks {
			if in := m.Entry.Instruction(name); in != nil && in.Opcode == hlo.OpWhile {
				t.Errorf("seed %d: the loop %s took the fallback", seed, name)
			}
		}
		if err := hlo.Verify(pm); err != nil {
			t.Errorf("seed %d: partitioned module does not verify: %v\n%s", seed, err, hlotext.Print(pm, hlotext.PrintOptions{}))
			continue
		}
		got := runDevices(t, "interp", pm, args, int(n), m.Entry.Root.Shape)
		wants := []*hlo.Literal{want}
		if want.Shape().IsTuple() {
			wants = want.Elements()
		}
		for i := range wants {
			closeLiterals(t, fmt.Sprintf("seed %d: result %d", seed, i), got[i], wants[i], text)
		}
		ran++
	}
	if ran < seeds/2 {
		t.Errorf("only %d of %d random modules ran", ran, seeds)
	}
}

// annotate gives some instructions a sharding: replicated, or tiled over
// n devices along one dimension, of any size (5 or 7 over 2–4 devices
// pads the last tiles; 1 over 4 leaves three tiles all padding); tuples
// (loop states) get one per element. Instructions of loop bodies and
// conditions are annotated too, as JAX annotates them (a called
// computation's parameters take its caller's placement whatever they
// say).
func annotate(m *hlo.Module, rng *rand.Rand, n int64) {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if rng.IntN(3) == 0 {
				continue
			}
			in.SetAttr("sharding", hlo.Raw(randomSharding(in.Shape, rng, n)))
		}
	}
}

// randomSharding is a random sharding of sh over n devices.
func randomSharding(sh hlo.Shape, rng *rand.Rand, n int64) string {
	if sh.IsTuple() {
		parts := make([]string, len(sh.Tuple))
		for i, e := range sh.Tuple {
			parts[i] = randomSharding(e, rng, n)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	var dims []int
	for i, d := range sh.Dims {
		if d > 0 && !sh.IsDynamicDim(i) {
			dims = append(dims, i)
		}
	}
	if len(dims) == 0 || rng.IntN(4) == 0 {
		return "{replicated}"
	}
	tiles := make([]string, sh.Rank())
	for i := range tiles {
		tiles[i] = "1"
	}
	tiles[dims[rng.IntN(len(dims))]] = fmt.Sprint(n)
	return fmt.Sprintf("{devices=[%s]<=[%d]}", strings.Join(tiles, ","), n)
}

// FuzzPartition is TestRandomModules for any seed and device count:
// go test ./spmd -run XXX -fuzz FuzzPartition.
func FuzzPartition(f *testing.F) {
	for s := range uint64(4) {
		f.Add(s, uint8(2))
	}
	f.Add(uint64(7), uint8(4))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		devices := int64(2 + n%3) // 2, 3 or 4
		m, err := randhlo.Module(seed, randhlo.Options{MaxDim: 7})
		if err != nil {
			t.Skip()
		}
		m.NumPartitions = devices
		annotate(m, rand.New(rand.NewPCG(seed, 3)), devices)
		args := eval.RandomArguments(m, seed)
		want, err := eval.Run(m, args...)
		if err != nil {
			t.Skip()
		}
		pm, err := spmd.Partition(m)
		if err != nil {
			return // a refusal is an answer; a panic or a wrong value is not
		}
		if err := hlo.Verify(pm); err != nil {
			t.Fatalf("partitioned module does not verify: %v", err)
		}
		got := runDevices(t, "interp", pm, args, int(devices), m.Entry.Root.Shape)
		wants := []*hlo.Literal{want}
		if want.Shape().IsTuple() {
			wants = want.Elements()
		}
		for i := range wants {
			closeLiterals(t, fmt.Sprintf("seed %d: result %d", seed, i), got[i], wants[i], hlotext.Print(m, hlotext.PrintOptions{}))
		}
	})
}
