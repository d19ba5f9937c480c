package collective_test

import (
	"context"
	"strings"
	"testing"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

// A device in no replica group fails naming itself; the devices of the
// group still complete among themselves.
func TestDeviceInNoGroup(t *testing.T) {
	outs, errs := launch{replicas: 4, partitions: 1, name: "ar",
		text: module(4, 1, `p = f32[1] parameter(0)
  ROOT ar = f32[1] all-reduce(p), replica_groups={{0,1}}, to_apply=add`),
		inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{f32s(t, []float32{1}, 1)} },
	}.run(t)
	for _, d := range []int{2, 3} {
		if errs[d] == nil || !strings.Contains(errs[d].Error(), "is in no replica group") || !strings.Contains(errs[d].Error(), "ar") {
			t.Errorf("device %d: err = %v", d, errs[d])
		}
	}
	// Devices 0 and 1 either finished (sum 2) or were cancelled by the
	// failure of 2 or 3, as the runtime cancels a launch.
	for _, d := range []int{0, 1} {
		if errs[d] == nil {
			wantData(t, "group {0,1}", outs[d], []float32{2})
		}
	}
}

// Devices that disagree on an operand's size get the transport's error
// (naming the sizes), not a hang: device 1 runs f32[4] where the others
// run f32[8].
func TestMismatchedSizes(t *testing.T) {
	for _, op := range []string{
		`ROOT x = f32[%d] all-reduce(p), replica_groups={}, to_apply=add`,
		`ROOT x = f32[%d] collective-broadcast(p), replica_groups={}`,
		`ROOT x = f32[%d] collective-permute(p), source_target_pairs={{0,1},{1,0}}`,
	} {
		text := func(n int) string {
			return module(2, 1, strings.ReplaceAll("p = f32[%d] parameter(0)\n  "+op, "%d", string(rune('0'+n))))
		}
		_, errs := launch{replicas: 2, partitions: 1, name: "x",
			module: func(d int) string { return text(8 - 4*d) },
			inputs: func(d, _, _ int) []*hlo.Literal {
				return []*hlo.Literal{hlo.NewLiteral(hlo.ArrayShape(hlo.F32, int64(8-4*d)))}
			},
		}.run(t)
		found := false
		for _, err := range errs {
			found = found || err != nil && strings.Contains(err.Error(), "bytes")
		}
		if !found {
			t.Errorf("%s: no size error among %v", op, errs)
		}
	}
}

// A cancelled launch ends a device waiting for a peer that never comes.
func TestCancelledWait(t *testing.T) {
	a, _ := collective.DefaultAssignment(2, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := instruction(t, module(2, 1, `p = f32[1] parameter(0)
  ROOT ar = f32[1] all-reduce(p), replica_groups={}, to_apply=add`), "ar")
	p := &collective.Participant{Device: 0, Assign: a, Net: collective.NewLocal(), Ctx: ctx}
	err := collective.Do(p, in, []*hlo.Literal{f32s(t, []float32{1}, 1)}, hlo.NewLiteral(in.Shape), nil)
	if err == nil || !strings.Contains(err.Error(), "waited for device 1") {
		t.Fatalf("err = %v", err)
	}
}

// Bad inputs are errors naming the instruction, before any exchange.
func TestBadInputs(t *testing.T) {
	a, _ := collective.DefaultAssignment(2, 1)
	p := func() *collective.Participant {
		return &collective.Participant{Device: 0, Assign: a, Net: collective.NewLocal()}
	}
	cases := []struct {
		body, want string
		ops        []*hlo.Literal
		out        hlo.Shape
	}{
		{`p = f32[2] parameter(0)
  ROOT x = f32[2] all-reduce(p), replica_groups={}, to_apply=mul`,
			"no evaluator", []*hlo.Literal{f32s(t, []float32{1, 2}, 2)}, hlo.ArrayShape(hlo.F32, 2)},
		{`p = f32[2] parameter(0)
  ROOT x = f32[4] all-gather(p), replica_groups={}, dimensions={0}`,
			"want dimensions [4]", []*hlo.Literal{f32s(t, []float32{1, 2}, 2)}, hlo.ArrayShape(hlo.F32, 3)},
		{`p = f32[2] parameter(0)
  ROOT x = f32[2] all-reduce(p), replica_groups={}, to_apply=add`,
			"result is s32", []*hlo.Literal{f32s(t, []float32{1, 2}, 2)}, hlo.ArrayShape(hlo.S32, 2)},
		{`p = f32[3] parameter(0)
  ROOT x = f32[3] all-to-all(p), replica_groups={}, dimensions={0}`,
			"does not split", []*hlo.Literal{f32s(t, []float32{1, 2, 3}, 3)}, hlo.ArrayShape(hlo.F32, 3)},
		{`p = f32[2] parameter(0)
  ROOT x = f32[2] collective-permute(p), source_target_pairs={{0,1}}`,
			"2 operands for a result of 1", []*hlo.Literal{f32s(t, []float32{1, 2}, 2), f32s(t, []float32{1, 2}, 2)}, hlo.ArrayShape(hlo.F32, 2)},
	}
	for _, c := range cases {
		text := strings.Replace(module(2, 1, c.body), "ENTRY", "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  m = f32[] multiply(a, b)\n  ROOT n = f32[] negate(m)\n}\nENTRY", 1)
		in := instruction(t, text, "x")
		err := collective.Do(p(), in, c.ops, hlo.NewLiteral(c.out), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), " x:") {
			t.Errorf("%s: err = %v, want %q", c.body, err, c.want)
		}
	}
}

// An in-place permute (slice_sizes) is refused clearly.
func TestInPlacePermuteRefused(t *testing.T) {
	in := instruction(t, module(2, 1, `p = f32[2] parameter(0)
  ROOT x = f32[2] collective-permute(p), source_target_pairs={{0,1}}`), "x")
	in.SetAttr("slice_sizes", [][]int64{{1}})
	a, _ := collective.DefaultAssignment(2, 1)
	p := &collective.Participant{Device: 0, Assign: a, Net: collective.NewLocal()}
	err := collective.Do(p, in, []*hlo.Literal{f32s(t, []float32{1, 2}, 2)}, hlo.NewLiteral(in.Shape), nil)
	if err == nil || !strings.Contains(err.Error(), "in-place form") {
		t.Fatalf("err = %v", err)
	}
}
