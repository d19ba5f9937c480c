package collective

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Groups lists every group of devices a collective instruction forms
// under an assignment, each in group order, as XLA's
// GetParticipatingDevicesGroups does: the written replica groups (all
// participants in one group when none are written) read as replica ids,
// partition ids or flattened ids by the instruction's group mode.
func Groups(in *hlo.Instruction, a *Assignment) ([][]int, error) {
	mode, err := hlo.CollectiveGroupMode(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	written, err := hlo.CollectiveReplicaGroups(in)
	if err != nil {
		return nil, err
	}
	if len(written) == 0 {
		if mode == hlo.FlattenedID {
			return nil, fmt.Errorf("%s: replica groups must be written with use_global_device_ids", in.Name)
		}
		n := a.Replicas
		if mode == hlo.CrossPartition {
			n = a.Partitions
		}
		written = [][]int64{iota64(n)}
	}
	var groups [][]int
	for _, g := range written {
		ds, err := groupDevices(in, mode, g, a)
		if err != nil {
			return nil, err
		}
		groups = append(groups, ds...)
	}
	return groups, nil
}

// groupDevices is one written group's device groups under mode.
func groupDevices(in *hlo.Instruction, mode hlo.GroupMode, g []int64, a *Assignment) ([][]int, error) {
	check := func(id int64, limit int, what string) error {
		if id < 0 || id >= int64(limit) {
			return fmt.Errorf("%s: %s id %d in replica groups is outside 0..%d", in.Name, what, id, limit-1)
		}
		return nil
	}
	var out [][]int
	switch mode {
	case hlo.CrossReplica:
		for p := range a.Partitions {
			var ds []int
			for _, r := range g {
				if err := check(r, a.Replicas, "replica"); err != nil {
					return nil, err
				}
				ds = append(ds, a.Device(int(r), p))
			}
			out = append(out, ds)
		}
	case hlo.CrossPartition:
		for r := range a.Replicas {
			var ds []int
			for _, p := range g {
				if err := check(p, a.Partitions, "partition"); err != nil {
					return nil, err
				}
				ds = append(ds, a.Device(r, int(p)))
			}
			out = append(out, ds)
		}
	case hlo.CrossReplicaAndPartition:
		var ds []int
		for _, r := range g {
			if err := check(r, a.Replicas, "replica"); err != nil {
				return nil, err
			}
			for p := range a.Partitions {
				ds = append(ds, a.Device(int(r), p))
			}
		}
		out = append(out, ds)
	case hlo.FlattenedID:
		var ds []int
		for _, id := range g {
			if err := check(id, a.Size(), "flattened device"); err != nil {
				return nil, err
			}
			ds = append(ds, a.Device(int(id)/a.Partitions, int(id)%a.Partitions))
		}
		out = append(out, ds)
	}
	return out, nil
}

// GroupOf returns the group device belongs to for in, and its index in
// the group.
func GroupOf(in *hlo.Instruction, a *Assignment, device int) ([]int, int, error) {
	groups, err := Groups(in, a)
	if err != nil {
		return nil, 0, err
	}
	var found []int
	at := -1
	for _, g := range groups {
		if i := slices.Index(g, device); i >= 0 {
			if found != nil {
				return nil, 0, fmt.Errorf("%s: device %d appears in two replica groups", in.Name, device)
			}
			found, at = g, i
		}
	}
	if found == nil {
		return nil, 0, fmt.Errorf("%s: device %d is in no replica group", in.Name, device)
	}
	return found, at, nil
}

// PermutePeers returns, for a collective-permute on device, the device
// it sends to and the device it receives from (-1 for none): its
// source_target_pairs name replicas of the same partition, or with a
// channel id partitions of the same replica.
func PermutePeers(in *hlo.Instruction, a *Assignment, device int) (to, from int, err error) {
	r, p, ok := a.Logical(device)
	if !ok {
		return -1, -1, fmt.Errorf("%s: device %d is not in the device assignment", in.Name, device)
	}
	mode, err := hlo.CollectiveGroupMode(in)
	if err != nil {
		return -1, -1, fmt.Errorf("%s: %w", in.Name, err)
	}
	self, limit := r, a.Replicas
	dev := func(id int) int { return a.Device(id, p) }
	if mode != hlo.CrossReplica {
		self, limit = p, a.Partitions
		dev = func(id int) int { return a.Device(r, id) }
	}
	v, _ := in.Attr("source_target_pairs")
	pairs, _ := v.([][]int64)
	to, from = -1, -1
	for _, pr := range pairs {
		if len(pr) != 2 || pr[0] < 0 || pr[1] < 0 || pr[0] >= int64(limit) || pr[1] >= int64(limit) {
			return -1, -1, fmt.Errorf("%s: source_target_pairs entry %v is outside 0..%d", in.Name, pr, limit-1)
		}
		if int(pr[0]) == self {
			if to >= 0 {
				return -1, -1, fmt.Errorf("%s: id %d is a source twice", in.Name, self)
			}
			to = dev(int(pr[1]))
		}
		if int(pr[1]) == self {
			if from >= 0 {
				return -1, -1, fmt.Errorf("%s: id %d is a target twice", in.Name, self)
			}
			from = dev(int(pr[0]))
		}
	}
	return to, from, nil
}

func iota64(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
