package collective

import "github.com/axle-ml/axle/hlo"

// TEMPORARY until helper A's Do lands.
type ScalarApply func(comp *hlo.Computation, a, b *hlo.Literal) (*hlo.Literal, error)

func Do(p *Participant, in *hlo.Instruction, ops []*hlo.Literal, out *hlo.Literal, apply ScalarApply) error {
	panic("temp")
}
