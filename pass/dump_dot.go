package pass

import (
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// DOT renders a module as a Graphviz graph: one cluster per computation
// (fusion bodies and other called computations included), a node per
// instruction labelled name, opcode and shape, an edge per operand
// labelled with the operand's shape, and a dashed edge from each calling
// instruction to the root of every computation it calls.
func DOT(m *hlo.Module) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  compound=true;\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=8];\n", m.Name)
	ids := map[*hlo.Instruction]string{}
	for ci, c := range m.Computations {
		for ii, in := range c.Instructions {
			ids[in] = fmt.Sprintf("n%d_%d", ci, ii)
		}
	}
	for ci, c := range m.Computations {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%q;\n    style=rounded;\n", ci, c.Name)
		if c.IsEntry {
			b.WriteString("    color=blue;\n")
		}
		for _, in := range c.Instructions {
			fill := opColor(in.Opcode)
			if in == c.Root {
				fill = "lightgoldenrod1"
			}
			fmt.Fprintf(&b, "    %s [label=%q, fillcolor=%q];\n", ids[in], in.Name+"\n"+in.Opcode.String()+"\n"+in.Shape.HumanString(), fill)
		}
		b.WriteString("  }\n")
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			for _, o := range in.Operands {
				fmt.Fprintf(&b, "  %s -> %s [label=%q];\n", ids[o], ids[in], o.Shape.HumanString())
			}
			for _, cc := range in.CalledComputations() {
				if cc.Root != nil {
					fmt.Fprintf(&b, "  %s -> %s [style=dashed, arrowhead=none, lhead=%q];\n", ids[cc.Root], ids[in], clusterOf(m, cc))
				}
			}
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func clusterOf(m *hlo.Module, c *hlo.Computation) string {
	for i, x := range m.Computations {
		if x == c {
			return fmt.Sprintf("cluster_%d", i)
		}
	}
	return ""
}

// opColor groups opcodes the way XLA's graph dumps do: parameters and
// constants, data movement, heavy compute, control.
func opColor(op hlo.Opcode) string {
	switch op {
	case hlo.OpParameter:
		return "lightblue"
	case hlo.OpConstant, hlo.OpIota:
		return "gray90"
	case hlo.OpDot, hlo.OpConvolution, hlo.OpFft, hlo.OpCholesky, hlo.OpTriangularSolve:
		return "salmon"
	case hlo.OpReduce, hlo.OpReduceWindow, hlo.OpSelectAndScatter, hlo.OpScatter, hlo.OpSort:
		return "plum"
	case hlo.OpFusion, hlo.OpCall, hlo.OpWhile, hlo.OpConditional:
		return "palegreen"
	case hlo.OpBroadcast, hlo.OpReshape, hlo.OpTranspose, hlo.OpSlice, hlo.OpConcatenate, hlo.OpPad,
		hlo.OpGather, hlo.OpDynamicSlice, hlo.OpDynamicUpdateSlice, hlo.OpBitcast, hlo.OpCopy:
		return "khaki1"
	}
	return "white"
}
