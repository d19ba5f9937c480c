package eval_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

const sumComp = `
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
`

// operation_semantics, AllReduce: "the result is the reduction of the
// operands of all participants"; with one participant that is the operand.
// CollectivePermute: "if a replica is not a target in any pair, its output
// is zeros"; a pair {0,0} sends replica 0's value to itself.
func TestSingleReplicaCollectives(t *testing.T) {
	got := laRunHLO(t, "HloModule m"+sumComp+`
ENTRY e {
  p = f32[3] parameter(0)
  ar = f32[3] all-reduce(p), replica_groups={{0}}, to_apply=sum
  ag = f32[3] all-gather(ar), dimensions={0}, replica_groups={{0}}
  ROOT cp = f32[3] collective-permute(ag), source_target_pairs={{0,0}}
}`, laLit(t, []float32{1, 2, 3}, 3))
	laWant(t, got, float32(1), 2, 3)
	got = laRunHLO(t, `HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT cp = f32[2] collective-permute(p), source_target_pairs={{1,2}}
}`, laLit(t, []float32{5, 6}, 2))
	laWant(t, got, float32(0), 0)
	got = laRunHLO(t, `HloModule m
ENTRY e {
  ROOT r = u32[] replica-id()
}`)
	laWant(t, got, uint32(0))
}

// A group of two participants needs the other replica's data: refused.
func TestMultiReplicaCollectiveRefused(t *testing.T) {
	m, err := hlotext.Parse("HloModule m, replica_count=2\n"+`
ENTRY e {
  p = f32[2] parameter(0)
  ROOT ag = f32[4] all-gather(p), dimensions={0}, replica_groups={{0,1}}
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := hlo.LiteralFromSlice([]float32{1, 2}, 2)
	if _, err := eval.Run(m, p); err == nil || !strings.Contains(err.Error(), "on a single device") {
		t.Fatalf("err = %v", err)
	}
}

// custom-call: the documented targets run, any other is refused by name.
func TestCustomCallTargets(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT s = f32[2] custom-call(p), custom_call_target="Sharding", sharding={replicated}
}`, laLit(t, []float32{7, 8}, 2))
	laWant(t, got, float32(7), 8)
	got = laRunHLO(t, `HloModule m
ENTRY e {
  p = f32[5] parameter(0)
  t = (f32[2], s32[2]) custom-call(p), custom_call_target="TopK"
  ROOT i = s32[2] get-tuple-element(t), index=1
}`, laLit(t, []float32{3, 9, 1, 9, 4}, 5))
	laWant(t, got, int32(1), 3) // ties keep the lower index first
	m, err := hlotext.Parse(`HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT s = f32[2] custom-call(p), custom_call_target="my_kernel"
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eval.Run(m, laLit(t, []float32{1, 2}, 2))
	if err == nil || !strings.Contains(err.Error(), `unsupported custom-call target "my_kernel"`) || !errors.Is(err, eval.ErrUnimplemented) {
		t.Fatalf("err = %v", err)
	}
}
