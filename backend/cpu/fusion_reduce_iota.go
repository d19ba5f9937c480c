package cpu

import "github.com/axle-ml/axle/hlo"

// Index fusion: a selection reduce (argmax, argmin) whose second input is
// an iota, JAX's way of pairing values with their positions, becomes one
// fusion of kind kInput holding both, so the kernel computes each index
// as the fold reaches it (lowerReduceSelectFusion) instead of reading
// one array the size of the input that an earlier pass wrote. An iota
// with other readers is copied into the fusion and stays for them.
func fuseReduceIotas(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	users := c.Users()
	var groups []group
	for _, r := range c.Instructions {
		if r.Opcode != hlo.OpReduce || len(r.Operands) != 4 || len(r.ControlPredecessors) > 0 {
			continue
		}
		iota := r.Operands[1]
		if iota.Opcode != hlo.OpIota || !plainArray(iota.Shape) || len(iota.ControlPredecessors) > 0 ||
			r.Operands[0] == iota || r.Operands[2] == iota || r.Operands[3] == iota {
			continue
		}
		if _, ok := newReduceSelect(r, []int{0, -1, 2, 3}, 1); !ok {
			continue
		}
		groups = append(groups, group{members: []*hlo.Instruction{r, iota}, kind: "kInput",
			copied: map[*hlo.Instruction]bool{iota: len(users[iota]) > 1 || iota == c.Root}, elem: r.Operands[0].Shape})
	}
	for _, g := range groups {
		if err := buildFusion(m, c, g, names); err != nil {
			return 0, err
		}
	}
	return len(groups), nil
}
