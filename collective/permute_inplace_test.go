package collective_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

// index is a start-index tuple of s32 scalars.
func index(vals ...int32) *hlo.Literal {
	els := make([]*hlo.Literal, len(vals))
	for i, v := range vals {
		els[i] = hlo.ScalarLiteral(v)
	}
	return hlo.MakeTupleLiteral(els...)
}

func filled[T int32 | float32](t *testing.T, v T, dims ...int64) *hlo.Literal {
	t.Helper()
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	l, err := hlo.LiteralFromSlice(slices.Repeat([]T{v}, n), dims...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// On 4 replicas, pairs {0→1, 1→2, 2→3} move a 2×2 box of each source's
// s32[2,3] input (device d holds 100d + [0..5]; it reads at (0, d%2))
// into a copy of the target's s32[3,4] output of -1s at (1,2); device 3
// writes at (5,-1), clamped to (1,0). Device 0, which no pair targets,
// returns its output unchanged.
func TestCollectivePermuteInPlace(t *testing.T) {
	outs := launch{replicas: 4, partitions: 1, name: "cp",
		text: module(4, 1, `in = s32[2,3] parameter(0)
  out = s32[3,4] parameter(1)
  ii = (s32[], s32[]) parameter(2)
  oi = (s32[], s32[]) parameter(3)
  ROOT cp = s32[3,4] collective-permute(in, out, ii, oi), source_target_pairs={{0,1},{1,2},{2,3}}, slice_sizes={{2,2}}`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			v := make([]int32, 6)
			for i := range v {
				v[i] = int32(100*d + i)
			}
			oi := index(1, 2)
			if d == 3 {
				oi = index(5, -1)
			}
			return []*hlo.Literal{s32s(t, v, 2, 3), filled(t, int32(-1), 3, 4), index(0, int32(d%2)), oi}
		},
	}.mustRun(t)
	want := [][]int32{
		{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
		{-1, -1, -1, -1, -1, -1, 0, 1, -1, -1, 3, 4},
		{-1, -1, -1, -1, -1, -1, 101, 102, -1, -1, 104, 105},
		{-1, -1, -1, -1, 200, 201, -1, -1, 203, 204, -1, -1},
	}
	for d, w := range want {
		wantData(t, "device", outs[d], w)
	}
}

// The tuple form with two start indices per buffer, as a -start op, on
// 2 replicas: the pairs are two blocks, a swap {0→1, 1→0} using index 0
// and self-sends {0→0, 1→1} using index 1. Buffer 0: f32[4] input
// 10d+[1..4] into f32[6] of 0.5; buffer 1: s32[2,2] input 100d+[1..4]
// into s32[2,3] of -1. slice_sizes are buffer-major: {2},{1} then
// {1,2},{1,1}.
func TestCollectivePermuteStartInPlaceTupleTwoIndices(t *testing.T) {
	outs := launch{replicas: 2, partitions: 1, name: "cps",
		text: module(2, 1, `in = (f32[4], s32[2,2]) parameter(0)
  out = (f32[6], s32[2,3]) parameter(1)
  ii = (((s32[]), (s32[])), ((s32[], s32[]), (s32[], s32[]))) parameter(2)
  oi = (((s32[]), (s32[])), ((s32[], s32[]), (s32[], s32[]))) parameter(3)
  cps = ((f32[4], s32[2,2]), (f32[6], s32[2,3]), u32[], u32[]) collective-permute-start(in, out, ii, oi), source_target_pairs={{0,1},{1,0},{0,0},{1,1}}, slice_sizes={{2},{1},{1,2},{1,1}}
  ROOT cpd = (f32[6], s32[2,3]) collective-permute-done(cps)`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			b := float32(10 * d)
			c := int32(100 * d)
			in := hlo.MakeTupleLiteral(f32s(t, []float32{b + 1, b + 2, b + 3, b + 4}, 4),
				s32s(t, []int32{c + 1, c + 2, c + 3, c + 4}, 2, 2))
			out := hlo.MakeTupleLiteral(filled(t, float32(0.5), 6), filled(t, int32(-1), 2, 3))
			ii := hlo.MakeTupleLiteral(hlo.MakeTupleLiteral(index(0), index(2)),
				hlo.MakeTupleLiteral(index(0, 0), index(1, 0)))
			oi := hlo.MakeTupleLiteral(hlo.MakeTupleLiteral(index(0), index(3)),
				hlo.MakeTupleLiteral(index(0, 1), index(1, 0)))
			return []*hlo.Literal{in, out, ii, oi}
		},
	}.mustRun(t)
	wantData(t, "device 0 buffer 0", outs[0].Elements()[0], []float32{11, 12, 0.5, 3, 0.5, 0.5})
	wantData(t, "device 0 buffer 1", outs[0].Elements()[1], []int32{-1, 101, 102, 3, -1, -1})
	wantData(t, "device 1 buffer 0", outs[1].Elements()[0], []float32{1, 2, 0.5, 13, 0.5, 0.5})
	wantData(t, "device 1 buffer 1", outs[1].Elements()[1], []int32{-1, 1, 2, 103, -1, -1})
}

// Pairs that do not split into one block per index, and a box larger
// than the input, are errors rather than guesses.
func TestCollectivePermuteInPlaceErrors(t *testing.T) {
	body := func(pairs, sizes string) string {
		return module(2, 1, `in = s32[4] parameter(0)
  out = s32[4] parameter(1)
  ii = ((s32[]), (s32[])) parameter(2)
  oi = ((s32[]), (s32[])) parameter(3)
  ROOT cp = s32[4] collective-permute(in, out, ii, oi), source_target_pairs=`+pairs+`, slice_sizes=`+sizes)
	}
	inputs := func(int, int, int) []*hlo.Literal {
		two := hlo.MakeTupleLiteral(index(0), index(1))
		return []*hlo.Literal{filled(t, int32(1), 4), filled(t, int32(0), 4), two, two}
	}
	for _, c := range []struct{ pairs, sizes, want string }{
		{"{{0,1},{1,0},{0,0}}", "{{1},{1}}", "do not split into 2 blocks"},
		{"{{0,1},{1,0}}", "{{5},{1}}", "does not fit"},
		{"{{0,1},{1,0}}", "{{1}}", "slice_sizes has 1 sizes"},
	} {
		_, errs := launch{replicas: 2, partitions: 1, name: "cp", text: body(c.pairs, c.sizes), inputs: inputs}.run(t)
		if errs[0] == nil || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("pairs %s sizes %s: error %v, want one saying %q", c.pairs, c.sizes, errs[0], c.want)
		}
	}
}

// A participant alone runs a permute from itself to itself.
func TestCollectivePermuteInPlaceAlone(t *testing.T) {
	in := instruction(t, module(1, 1, `in = s32[3] parameter(0)
  out = s32[4] parameter(1)
  ii = (s32[]) parameter(2)
  oi = (s32[]) parameter(3)
  ROOT cp = s32[4] collective-permute(in, out, ii, oi), source_target_pairs={{0,0}}, slice_sizes={{2}}`), "cp")
	out := hlo.NewLiteral(in.Shape)
	ops := []*hlo.Literal{s32s(t, []int32{7, 8, 9}, 3), filled(t, int32(-1), 4), index(1), index(2)}
	if err := collective.Do(collective.Alone(context.Background()), in, ops, out, nil); err != nil {
		t.Fatal(err)
	}
	wantData(t, "alone", out, []int32{-1, -1, 8, 9})
}
