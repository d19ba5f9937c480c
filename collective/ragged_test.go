package collective_test

import (
	"context"
	"strings"
	"testing"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

func s64s(t *testing.T, vals []int64, dims ...int64) *hlo.Literal {
	t.Helper()
	l, err := hlo.LiteralFromSlice(vals, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// raggedModule is a ragged-all-to-all of s32 rows, data[rows] or
// data[rows,2], metadata meta (e.g. s32[2]).
func raggedModule(n int, data, meta, groups string) string {
	return module(n, 1, `in = `+data+` parameter(0)
  out = `+data+` parameter(1)
  io = `+meta+` parameter(2)
  ss = `+meta+` parameter(3)
  oo = `+meta+` parameter(4)
  rs = `+meta+` parameter(5)
  ROOT ra = `+data+` ragged-all-to-all(in, out, io, ss, oo, rs), replica_groups=`+groups)
}

// JAX's test_ragged_all_to_all (tests/ragged_collective_test.py) on 2
// devices: output offsets are offsets in the receiver's output.
func TestRaggedAllToAllJAX(t *testing.T) {
	meta := [][4][]int32{ // input_offsets, send_sizes, output_offsets, recv_sizes
		{{0, 1}, {1, 2}, {0, 0}, {1, 1}},
		{{0, 1}, {1, 1}, {1, 2}, {2, 1}},
	}
	data := [][]int32{{1, 2, 2}, {3, 4, 0}}
	outs := launch{replicas: 2, partitions: 1, name: "ra",
		text: module(2, 1, `in = s32[3] parameter(0)
  out = s32[4] parameter(1)
  io = s32[2] parameter(2)
  ss = s32[2] parameter(3)
  oo = s32[2] parameter(4)
  rs = s32[2] parameter(5)
  ROOT ra = s32[4] ragged-all-to-all(in, out, io, ss, oo, rs), replica_groups={{0,1}}`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			ops := []*hlo.Literal{s32s(t, data[d], 3), s32s(t, make([]int32, 4), 4)}
			for _, m := range meta[d] {
				ops = append(ops, s32s(t, m, 2))
			}
			return ops
		},
	}.mustRun(t)
	wantData(t, "device 0", outs[0], []int32{1, 3, 0, 0})
	wantData(t, "device 1", outs[1], []int32{2, 2, 4, 0})
}

// Four devices, rows of 2, one update per member, the result written
// over the input's own buffer: device d sends member j its row (j+d)%4
// into row d of j's output, except device 3 sends device 0 nothing, so
// device 0's row 3 keeps the output operand's -7s.
func TestRaggedAllToAllFourDevicesInPlace(t *testing.T) {
	outs := launch{replicas: 4, partitions: 1, name: "ra", inPlace: true,
		text: raggedModule(4, "s32[4,2]", "s32[4]", "{}"),
		inputs: func(d, _, _ int) []*hlo.Literal {
			rows := make([]int32, 0, 8)
			for r := range 4 {
				rows = append(rows, int32(10*d+r), int32(1000+10*d+r))
			}
			io, ss, oo, rs := make([]int32, 4), []int32{1, 1, 1, 1}, make([]int32, 4), []int32{1, 1, 1, 1}
			for j := range 4 {
				io[j], oo[j] = int32((j+d)%4), int32(d)
			}
			if d == 3 {
				ss[0] = 0
			}
			if d == 0 {
				rs[3] = 0
			}
			return []*hlo.Literal{s32s(t, rows, 4, 2), filled(t, int32(-7), 4, 2),
				s32s(t, io, 4), s32s(t, ss, 4), s32s(t, oo, 4), s32s(t, rs, 4)}
		},
	}.mustRun(t)
	for j := range 4 {
		var want []int32
		for d := range 4 {
			r := int32(10*d + (j+d)%4)
			if j == 0 && d == 3 {
				want = append(want, -7, -7)
				continue
			}
			want = append(want, r, 1000+r)
		}
		wantData(t, "device", outs[j], want)
	}
}

// Two updates per member, s64 metadata of shape [2,2], and a group
// {{1,0}} whose member 0 is device 1: entry j*2+i is update i to (or
// from) member j. Outputs start as -1s.
func TestRaggedAllToAllTwoUpdates(t *testing.T) {
	meta := [][4][]int64{ // by device: input_offsets, send_sizes, output_offsets, recv_sizes
		{{0, 1, 3, 4}, {1, 2, 1, 0}, {0, 4, 5, 0}, {1, 3, 1, 0}},
		{{0, 0, 2, 3}, {2, 0, 1, 3}, {1, 0, 0, 1}, {2, 0, 1, 2}},
	}
	data := [][]int32{{1, 2, 3, 4, 5, 6}, {10, 20, 30, 40, 50, 60}}
	outs := launch{replicas: 2, partitions: 1, name: "ra",
		text: raggedModule(2, "s32[6]", "s64[2,2]", "{{1,0}}"),
		inputs: func(d, _, _ int) []*hlo.Literal {
			ops := []*hlo.Literal{s32s(t, data[d], 6), filled(t, int32(-1), 6)}
			for _, m := range meta[d] {
				ops = append(ops, s64s(t, m, 2, 2))
			}
			return ops
		},
	}.mustRun(t)
	wantData(t, "device 0", outs[0], []int32{30, 40, 50, 60, -1, 4})
	wantData(t, "device 1", outs[1], []int32{1, 10, 20, -1, 2, 3})
}

// recv_sizes that disagree with what the sender sends, with the same
// total, are caught by the header rather than splitting rows wrongly;
// a send past the input's rows is refused before anything moves.
func TestRaggedAllToAllErrors(t *testing.T) {
	run := func(rs0 []int32, ss1 []int32) []error {
		_, errs := launch{replicas: 2, partitions: 1, name: "ra",
			text: raggedModule(2, "s32[4]", "s32[4]", "{{0,1}}"),
			inputs: func(d, _, _ int) []*hlo.Literal {
				io, ss, oo, rs := []int32{0, 0, 1, 0}, []int32{1, 0, 1, 0}, []int32{0, 0, 2, 0}, []int32{1, 0, 1, 0}
				if d == 0 {
					rs = rs0
				} else if ss1 != nil {
					ss = ss1
				}
				return []*hlo.Literal{filled(t, int32(d), 4), filled(t, int32(-1), 4),
					s32s(t, io, 4), s32s(t, ss, 4), s32s(t, oo, 4), s32s(t, rs, 4)}
			},
		}.run(t)
		return errs
	}
	errs := run([]int32{1, 0, 0, 1}, nil)
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "recv_sizes expects") {
		t.Errorf("mismatched recv_sizes: device 0 error %v", errs[0])
	}
	errs = run([]int32{1, 0, 1, 0}, []int32{1, 0, 4, 0})
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "sends rows [1, 1+4)") {
		t.Errorf("send past the input: device 1 error %v", errs[1])
	}
}

// JAX's test_ragged_all_to_all_degenerate_groups: a group of one sends
// to itself only; here on a participant alone.
func TestRaggedAllToAllAlone(t *testing.T) {
	in := instruction(t, raggedModule(1, "s32[4]", "s32[1]", "{{0}}"), "ra")
	for _, c := range []struct {
		data       []int32
		off, n, to int32
		want       []int32
	}{
		{[]int32{1, 0, 0, 0}, 0, 1, 2, []int32{0, 0, 1, 0}},
		{[]int32{2, 3, 4, 0}, 0, 3, 1, []int32{0, 2, 3, 4}},
	} {
		ops := []*hlo.Literal{s32s(t, c.data, 4), s32s(t, make([]int32, 4), 4),
			s32s(t, []int32{c.off}, 1), s32s(t, []int32{c.n}, 1), s32s(t, []int32{c.to}, 1), s32s(t, []int32{c.n}, 1)}
		out := hlo.NewLiteral(in.Shape)
		if err := collective.Do(collective.Alone(context.Background()), in, ops, out, nil); err != nil {
			t.Fatal(err)
		}
		wantData(t, "alone", out, c.want)
	}
}
