package collective_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// BenchmarkAllReduceLocal is a sum all-reduce of f32 among 4 in-process
// devices; bytes per op are one operand's.
func BenchmarkAllReduceLocal(b *testing.B) {
	for _, mib := range []int{1, 64} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			const devices = 4
			n := mib << 20 / 4
			m, err := hlotext.Parse(fmt.Sprintf(`HloModule m, replica_count=4
%s
ENTRY e {
  p = f32[%d] parameter(0)
  ROOT ar = f32[%d] all-reduce(p), replica_groups={}, to_apply=add
}`, addF32, n, n), hlotext.Options{})
			if err != nil {
				b.Fatal(err)
			}
			in := m.Entry.Instruction("ar")
			a, _ := collective.DefaultAssignment(devices, 1)
			net := collective.NewLocal()
			parts := make([]*collective.Participant, devices)
			ops, outs := make([]*hlo.Literal, devices), make([]*hlo.Literal, devices)
			for d := range devices {
				parts[d] = &collective.Participant{Device: d, Replica: d, Assign: a, Net: net, Ctx: context.Background()}
				ops[d] = hlo.NewLiteral(in.Shape)
				outs[d] = hlo.NewLiteral(in.Shape)
			}
			b.SetBytes(int64(n * 4))
			b.ResetTimer()
			for b.Loop() {
				var wg sync.WaitGroup
				for d := range devices {
					wg.Go(func() {
						if err := collective.Do(parts[d], in, ops[d:d+1], outs[d], nil); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
		})
	}
}
