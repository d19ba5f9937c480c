package stablehlo

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// resolve computes each waiting process's results of one collective
// (reqs in process order; all at the same op kind, or send/recv pairs).
func resolve(reqs []*request) ([][]*hlo.Instruction, error) {
	name := reqs[0].op.Name
	if name == "stablehlo.send" || name == "stablehlo.recv" {
		return resolveSendRecv(reqs)
	}
	for _, r := range reqs[1:] {
		if r.op.Name != name {
			return nil, fmt.Errorf("%s: processes meet at different collectives (%s, %s): %w", r.op.Pos, name, r.op.Name, ErrUnsupported)
		}
	}
	groups, err := processGroups(reqs[0])
	if err != nil {
		return nil, err
	}
	byProc := map[[2]int]*request{}
	for _, r := range reqs {
		byProc[[2]int{r.p.replica, r.p.partition}] = r
	}
	out := make([][]*hlo.Instruction, len(reqs))
	index := map[*request]int{}
	for i, r := range reqs {
		index[r] = i
	}
	inGroup := map[*request]bool{}
	for _, g := range groups {
		members := make([]*request, len(g))
		for k, id := range g {
			if members[k] = byProc[id]; members[k] == nil {
				return nil, fmt.Errorf("%s: process %v of a group is not running: %w", reqs[0].op.Pos, id, ErrUnsupported)
			}
		}
		for k, m := range members {
			res, err := groupResult(m, members, k)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", m.op.Pos, m.op.Name, err)
			}
			if res != nil { // a permute's source gets nothing from its pair
				out[index[m]] = res
				inGroup[m] = true
			}
		}
	}
	for i, r := range reqs {
		if !inGroup[r] {
			res, err := outsideResult(r)
			if err != nil {
				return nil, err
			}
			out[i] = res
		}
	}
	return out, nil
}

// channelID reads channel_handle's handle (0 when absent).
func channelID(op *mlir.Op) int64 {
	v, _ := intOf(field(op.Attr("channel_handle"), "handle"))
	return v
}

// processGroups splits the grid as the op's replica_groups (or
// source_target_pairs), channel and use_global_device_ids say.
func processGroups(r *request) ([][][2]int, error) {
	op, g := r.op, r.p.grid
	attr := op.Attr("replica_groups")
	if op.Name == "stablehlo.collective_permute" {
		attr = op.Attr("source_target_pairs")
	}
	var lists [][]int64
	if d, ok := attr.(mlir.DenseAttr); ok {
		flat, err := denseInts(d)
		if err != nil {
			return nil, err
		}
		tt, _ := d.Type.(mlir.TensorType)
		if len(tt.Dims) == 2 && tt.Dims[1] > 0 {
			for i := int64(0); i < tt.Dims[0]; i++ {
				lists = append(lists, flat[i*tt.Dims[1]:(i+1)*tt.Dims[1]])
			}
		}
	}
	if attr == nil {
		all := make([]int64, g.replicas)
		for i := range all {
			all[i] = int64(i)
		}
		lists = [][]int64{all}
	}
	channel := channelID(op)
	global := boolOf(op.Attr("use_global_device_ids"))
	var out [][][2]int
	for _, l := range lists {
		l = slices.DeleteFunc(slices.Clone(l), func(v int64) bool { return v < 0 }) // -1 pads ragged groups
		switch {
		case channel > 0 && global:
			var grp [][2]int
			for _, id := range l {
				grp = append(grp, [2]int{int(id) / g.partitions, int(id) % g.partitions})
			}
			out = append(out, grp)
		case channel > 0 && crossPartition(op.Name):
			for r := range g.replicas {
				var grp [][2]int
				for _, p := range l {
					grp = append(grp, [2]int{r, int(p)})
				}
				out = append(out, grp)
			}
		case channel > 0:
			var grp [][2]int
			for p := range g.partitions {
				for _, r := range l {
					grp = append(grp, [2]int{int(r), p})
				}
			}
			out = append(out, grp)
		default:
			for p := range g.partitions {
				var grp [][2]int
				for _, r := range l {
					grp = append(grp, [2]int{int(r), p})
				}
				out = append(out, grp)
			}
		}
	}
	return out, nil
}

// crossPartition ops group partitions, not replicas and partitions, when
// they have a channel.
func crossPartition(name string) bool {
	switch name {
	case "stablehlo.all_to_all", "stablehlo.collective_permute", "stablehlo.collective_broadcast":
		return true
	}
	return false
}

// groupResult is member k's results of a collective over members.
func groupResult(m *request, members []*request, k int) ([]*hlo.Instruction, error) {
	s, op := m.s, m.op
	switch op.Name {
	case "stablehlo.collective_reduce":
		// The reduction lands on the root (the group's first process, or
		// the one the last operand names); the others get zeros.
		n := len(op.Results)
		root := 0
		if boolOf(op.Attr("has_dynamic_root")) {
			roots, err := s.foldInts(m.ins[n])
			if err != nil || len(roots) == 0 {
				return nil, fmt.Errorf("collective_reduce root: %w", ErrUnsupported)
			}
			root = int(roots[0])
		}
		if k != root {
			out := make([]*hlo.Instruction, n)
			for j := range out {
				out[j] = s.splat(m.ins[j].Shape, 0)
			}
			return out, nil
		}
		return reduceMembers(m, members, n)
	case "stablehlo.all_reduce", "stablehlo.reduce_scatter":
		out, err := reduceMembers(m, members, len(m.ins))
		if err != nil {
			return nil, err
		}
		if op.Name == "stablehlo.reduce_scatter" {
			for j := range out {
				out[j] = chunk(s, out[j], opInt(op, "scatter_dimension", 0), len(members), k)
			}
		}
		return out, nil
	case "stablehlo.all_gather":
		d := opInt(op, "all_gather_dim", 0)
		out := make([]*hlo.Instruction, len(m.ins))
		for j := range m.ins {
			parts := make([]*hlo.Instruction, len(members))
			for i, o := range members {
				parts[i] = o.ins[j]
			}
			out[j] = concat(s, parts, d)
		}
		return out, nil
	case "stablehlo.all_to_all":
		split, cat := opInt(op, "split_dimension", 0), opInt(op, "concat_dimension", 0)
		out := make([]*hlo.Instruction, len(m.ins))
		for j := range m.ins {
			parts := make([]*hlo.Instruction, len(members))
			for i, o := range members {
				parts[i] = chunk(s, o.ins[j], split, len(members), k)
			}
			out[j] = concat(s, parts, cat)
		}
		return out, nil
	case "stablehlo.collective_broadcast":
		n := len(op.Results)
		if !boolOf(op.Attr("has_dynamic_root")) {
			return members[0].ins[:n], nil
		}
		// The last operand holds, per result, the index of its source.
		roots, err := s.foldInts(m.ins[n])
		if err != nil {
			return nil, err
		}
		out := make([]*hlo.Instruction, n)
		for j := range out {
			if j >= len(roots) || roots[j] < 0 || int(roots[j]) >= len(members) {
				return nil, fmt.Errorf("dynamic root out of range")
			}
			out[j] = members[roots[j]].ins[j]
		}
		return out, nil
	case "stablehlo.collective_permute":
		// A group is a (source, target) pair.
		if len(members) == 2 && k == 1 {
			return members[0].ins, nil
		}
		if k == 1 || len(members) != 2 {
			return nil, fmt.Errorf("bad source_target_pairs")
		}
		return nil, nil
	}
	return nil, fmt.Errorf("collective %s: %w", op.Name, ErrUnsupported)
}

// reduceMembers folds the members' first n operands with the op's
// reducer, elementwise (a map), in group order.
func reduceMembers(m *request, members []*request, n int) ([]*hlo.Instruction, error) {
	s, op := m.s, m.op
	if len(op.Regions) != 1 {
		return nil, fmt.Errorf("want one region")
	}
	comp, err := s.regionComp("reducer", op.Regions[0])
	if err != nil {
		return nil, err
	}
	out := make([]*hlo.Instruction, n)
	for j := range out {
		acc := members[0].ins[j]
		for _, o := range members[1:] {
			acc = s.add(hlo.OpMap, acc.Shape, []*hlo.Instruction{acc, o.ins[j]},
				hlo.Attr{Name: "dimensions", Value: iotaDims(acc.Shape.Rank())}, hlo.Attr{Name: "to_apply", Value: comp})
		}
		out[j] = acc
	}
	return out, nil
}

// outsideResult is the result of a process in no group: collective_permute
// targets of no pair and collective_broadcast outsiders get zeros; every
// other collective needs its process in a group.
func outsideResult(r *request) ([]*hlo.Instruction, error) {
	switch r.op.Name {
	case "stablehlo.collective_permute", "stablehlo.collective_broadcast", "stablehlo.collective_reduce":
		out := make([]*hlo.Instruction, len(r.op.Results))
		for i := range out {
			out[i] = r.s.splat(r.ins[i].Shape, 0)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: process (%d, %d) is in no group of %s: %w", r.op.Pos, r.p.replica, r.p.partition, r.op.Name, ErrUnsupported)
}

// chunk is part k of n equal parts of x along dimension d.
func chunk(s *scope, x *hlo.Instruction, d int64, n, k int) *hlo.Instruction {
	size := x.Shape.Dims[d] / int64(n)
	dims := make([]hlo.SliceDim, x.Shape.Rank())
	out := slices.Clone(x.Shape.Dims)
	for i := range dims {
		dims[i] = hlo.SliceDim{Start: 0, Limit: x.Shape.Dims[i], Stride: 1}
	}
	dims[d] = hlo.SliceDim{Start: int64(k) * size, Limit: int64(k+1) * size, Stride: 1}
	out[d] = size
	return s.add(hlo.OpSlice, hlo.ArrayShape(x.Shape.DType, out...), []*hlo.Instruction{x}, hlo.Attr{Name: "slice", Value: dims})
}

// concat concatenates parts along dimension d.
func concat(s *scope, parts []*hlo.Instruction, d int64) *hlo.Instruction {
	if len(parts) == 1 {
		return parts[0]
	}
	out := slices.Clone(parts[0].Shape.Dims)
	out[d] = 0
	for _, p := range parts {
		out[d] += p.Shape.Dims[d]
	}
	return s.add(hlo.OpConcatenate, hlo.ArrayShape(parts[0].Shape.DType, out...), parts, hlo.Attr{Name: "dimensions", Value: []int64{d}})
}

// resolveSendRecv pairs each send with the recv of its channel: the send
// gives a token, the recv the sent values and a token.
func resolveSendRecv(reqs []*request) ([][]*hlo.Instruction, error) {
	sends := map[int64]*request{}
	for _, r := range reqs {
		if r.op.Name == "stablehlo.send" {
			sends[channelID(r.op)] = r
		}
	}
	out := make([][]*hlo.Instruction, len(reqs))
	for i, r := range reqs {
		token := r.s.add(hlo.OpAfterAll, hlo.TokenShape(), nil)
		switch r.op.Name {
		case "stablehlo.send":
			out[i] = []*hlo.Instruction{token}
		case "stablehlo.recv":
			snd := sends[channelID(r.op)]
			if snd == nil {
				return nil, fmt.Errorf("%s: recv without a send on channel %d: %w", r.op.Pos, channelID(r.op), ErrUnsupported)
			}
			vals := snd.ins[:len(snd.ins)-1] // the send's last operand is its token
			out[i] = append(append([]*hlo.Instruction(nil), vals...), token)
		default:
			return nil, fmt.Errorf("%s: %s meets send/recv: %w", r.op.Pos, r.op.Name, ErrUnsupported)
		}
	}
	return out, nil
}

func iotaDims(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
