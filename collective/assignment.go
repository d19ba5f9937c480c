package collective

import "fmt"

// Assignment maps each (replica, partition) pair of a computation to a
// global device id, as XLA's DeviceAssignment does.
type Assignment struct {
	Replicas, Partitions int
	ids                  []int // [replica*Partitions+partition]
	logical              map[int][2]int
}

// DefaultAssignment is XLA's ComputationPlacer::AssignDevices: replica r
// of partition p runs on device p*replicas + r.
func DefaultAssignment(replicas, partitions int) (*Assignment, error) {
	if replicas < 1 || partitions < 1 {
		return nil, fmt.Errorf("collective: %d replicas and %d partitions: both must be at least 1", replicas, partitions)
	}
	ids := make([]int, replicas*partitions)
	for r := range replicas {
		for p := range partitions {
			ids[r*partitions+p] = p*replicas + r
		}
	}
	return NewAssignment(replicas, partitions, ids)
}

// NewAssignment takes ids[replica*partitions+partition], the device of
// each pair; every id must be distinct and non-negative.
func NewAssignment(replicas, partitions int, ids []int) (*Assignment, error) {
	if replicas < 1 || partitions < 1 || len(ids) != replicas*partitions {
		return nil, fmt.Errorf("collective: an assignment of %d replicas × %d partitions needs %d device ids, got %d",
			replicas, partitions, replicas*partitions, len(ids))
	}
	a := &Assignment{Replicas: replicas, Partitions: partitions, ids: append([]int(nil), ids...),
		logical: make(map[int][2]int, len(ids))}
	for i, d := range ids {
		if d < 0 {
			return nil, fmt.Errorf("collective: negative device id %d in the assignment", d)
		}
		if _, dup := a.logical[d]; dup {
			return nil, fmt.Errorf("collective: device %d assigned twice", d)
		}
		a.logical[d] = [2]int{i / partitions, i % partitions}
	}
	return a, nil
}

// Device is the device of replica r, partition p.
func (a *Assignment) Device(r, p int) int { return a.ids[r*a.Partitions+p] }

// Logical returns the replica and partition device d runs, if any.
func (a *Assignment) Logical(d int) (replica, partition int, ok bool) {
	rp, ok := a.logical[d]
	return rp[0], rp[1], ok
}

// Devices lists every assigned device, by replica then partition.
func (a *Assignment) Devices() []int { return append([]int(nil), a.ids...) }

// Size is the number of devices: replicas × partitions.
func (a *Assignment) Size() int { return len(a.ids) }
