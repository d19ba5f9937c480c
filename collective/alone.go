package collective

import "context"

// Alone returns a participant that is the only device of its launch
// (one replica, one partition, its own transport), for an engine running
// a collective outside a multi-device launch: every group is this device
// alone, and a collective naming any other device fails.
func Alone(ctx context.Context) *Participant {
	a, _ := DefaultAssignment(1, 1) // cannot fail for 1×1
	return &Participant{Assign: a, Net: NewLocal(), Ctx: ctx}
}
