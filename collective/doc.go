// Package collective runs XLA's collective operations across devices:
// which devices form each group (replica groups, channel ids,
// use_global_device_ids, iota groups, the device assignment), the
// operations' data movement and reductions, and the Transport that moves
// bytes between devices: in one process (Local) or between processes
// (package distributed implements it over TCP).
//
// Every engine (the evaluator and the CPU backend) performs a collective
// through Do, so that results are identical on both and deterministic
// for a given device count: an all-reduce folds the participants' values
// left to right in group order, element by element, whatever the
// transport or the number of processes.
package collective
