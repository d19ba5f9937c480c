package cpu

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// Output (epilogue) fusion, after loop fusion: a dot or convolution
// whose only reader is a kLoop fusion reading it element for element
// (bias, activation) moves into that fusion, which becomes a kOutput
// fusion as XLA names it: its fused computation holds the product and
// the elementwise chain. The lowering (lower_epilogue.go) runs the GEMM
// into the fusion's buffer and applies the chain's tile program to each
// block of it as soon as the block is final, while it is in cache, so
// the product is never written out and read back.
//
// The product is folded only when
//   - it runs on the (batched) GEMM in f32, on the convolution kernel
//     with a channels-last output, or on a channels-first (NCHW)
//     convolution kernel, whose C is the output's [batch·channels,
//     pixels] rows as they lie (a per-channel bias is a per-row value),
//     so the fusion's flat index is the kernel's C index;
//   - the fusion is its only reader (its value is not needed elsewhere,
//     and nothing computes it twice) and has its dimensions and type f32,
//     so the fusion's buffer can be C;
//   - the fusion reads it only at the output's own position (not through
//     a broadcast, transpose or slice), and if the fusion is a row
//     program (softmax), its rows are the kernel's rows and the kernel
//     hands over whole rows;
//   - the epilogue would not lose threads: a product small enough to run
//     on one thread keeps a big epilogue as its own parallel fusion.
//
// The fused computation is ordinary HLO: it prints, verifies and runs on
// the evaluator.

// fuseEpilogues folds products into their epilogue fusions in c,
// returning how many it folded. threads is the executable's thread count.
func fuseEpilogues(c *hlo.Computation, names *hlo.NameSet, threads int) (int, error) {
	users := c.Users()
	controls := map[*hlo.Instruction]bool{}
	for _, in := range c.Instructions {
		for _, p := range in.ControlPredecessors {
			controls[p] = true
		}
	}
	folded := 0
	for _, d := range slices.Clone(c.Instructions) {
		if controls[d] || d == c.Root || len(users[d]) != 1 {
			continue
		}
		u := users[d][0]
		k, ok := epilogueOperand(d, u, threads)
		if !ok {
			continue
		}
		if err := foldProducer(c, d, u, k, names); err != nil {
			return folded, err
		}
		folded++
	}
	if folded == 0 {
		return 0, nil
	}
	return folded, c.SortTopologically()
}

// epilogueOperand reports whether u is an epilogue d can fold into, and
// which of u's operands d is.
func epilogueOperand(d, u *hlo.Instruction, threads int) (int, bool) {
	if !outputProducer(d) || len(d.ControlPredecessors) > 0 || len(u.ControlPredecessors) > 0 {
		return 0, false
	}
	if kind, _ := u.EnumAttr("kind"); u.Opcode != hlo.OpFusion || kind != "kLoop" {
		return 0, false
	}
	if u.Shape.DType != hlo.F32 || !u.Shape.SameDims(d.Shape) || hasDuplicates(u.Operands) {
		return 0, false
	}
	k := slices.Index(u.Operands, d)
	p, err := tile.CompileLoop(u)
	if k < 0 || err != nil || !epilogueFits(d, p, k) {
		return 0, false
	}
	// Whether the product runs on one thread is judged as within an
	// execution, whose workers poll and whose kernels split from a
	// hotShare of their cold sizes on (runsInline): a depthwise layer of
	// MobileNetV2 (28²×144, 2 MFLOP) runs on both threads there, and so
	// would the epilogue folded into it; judged cold, the two ran apart,
	// 10-25% slower (0.053-0.059 → 0.046-0.052 ms; 14²×576 0.049-0.054
	// → 0.037-0.044; two threads, alternated).
	if threads > 1 && runsInline(d, threads) && p.Work() >= kernels.MinParallelWork {
		return 0, false // the fusion alone would run on all threads
	}
	return k, true
}

func hasDuplicates(xs []*hlo.Instruction) bool {
	for i, x := range xs {
		if slices.Contains(xs[:i], x) {
			return true
		}
	}
	return false
}

// foldProducer moves d, operand k of fusion u, into u's fused
// computation in place of parameter k. u's operands become d's operands
// followed by its others (each once), and u becomes a kOutput fusion.
func foldProducer(c *hlo.Computation, d, u *hlo.Instruction, k int, names *hlo.NameSet) error {
	fc := u.Computation("calls")
	old := map[*hlo.Instruction]*hlo.Instruction{} // u's operands' parameters
	for i, o := range u.Operands {
		if i != k {
			old[o] = fc.Param(i)
		}
	}
	pd := fc.Param(k)
	var operands, params []*hlo.Instruction
	param := func(o *hlo.Instruction) *hlo.Instruction {
		if i := slices.Index(operands, o); i >= 0 {
			return params[i]
		}
		p := old[o]
		if p == nil {
			p = fc.AddInstruction(&hlo.Instruction{Name: names.Unique("param_" + o.Name), Opcode: hlo.OpParameter,
				Shape: o.Shape.Clone()})
		}
		p.ParamNumber = int64(len(operands))
		operands, params = append(operands, o), append(params, p)
		return p
	}
	dOps := make([]*hlo.Instruction, len(d.Operands))
	for i, o := range d.Operands {
		dOps[i] = param(o)
	}
	for i, o := range u.Operands {
		if i != k {
			param(o)
		}
	}
	c.RemoveInstructions(map[*hlo.Instruction]bool{d: true})
	d.Operands = dOps
	fc.AddInstruction(d)
	fc.ReplaceAllUses(pd, d)
	fc.RemoveInstructions(map[*hlo.Instruction]bool{pd: true})
	fc.Params = params
	u.Operands = operands
	u.SetAttr("kind", hlo.Enum(kOutput))
	return fc.SortTopologically() // d, appended, goes before its readers
}
