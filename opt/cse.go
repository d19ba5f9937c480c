package opt

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// CSE merges instructions that compute the same value (XLA's HloCSE): same
// opcode, shape with layout, attributes, operands and, for called
// computations, equal bodies. Instructions with side effects (rng
// included) are never merged, nor are parameters or instructions with
// control edges; constants merge when their literals are equal.
var CSE = pass.Func("cse", runCSE)

func runCSE(m *hlo.Module) (bool, error) {
	fx := newEffects()
	keys := newCSEKeys()
	changed := false
	for _, c := range m.Computations {
		changed = cseComputation(c, fx, keys) || changed
	}
	if changed {
		// Merged-away instructions are now unused.
		for _, c := range m.Computations {
			removeDeadInstructions(c, fx)
		}
	}
	return changed, nil
}

func cseComputation(c *hlo.Computation, fx *effects, keys *cseKeys) bool {
	rough := make(map[roughKey][]*hlo.Instruction, len(c.Instructions))
	full := map[*hlo.Instruction]string{}
	fullKey := func(in *hlo.Instruction) string {
		k, ok := full[in]
		if !ok {
			k = keys.key(in)
			full[in] = k
		}
		return k
	}
	uses := c.UseIndex()
	changed := false
	for _, in := range c.Instructions {
		if !cseCandidate(in, fx) {
			continue
		}
		rk := roughKeyOf(in)
		found := false
		for _, prev := range rough[rk] {
			if fullKey(prev) == fullKey(in) && (in.Opcode != hlo.OpConstant || prev.Literal.Equal(in.Literal)) {
				changed = uses.ReplaceAllUses(in, prev) || changed
				found = true
				break
			}
		}
		if !found {
			rough[rk] = append(rough[rk], in)
		}
	}
	return changed
}

// roughKey is what two instructions computing the same value must share
// and is cheap to take: opcode, element type, element count, the first
// operands and a hash of the integer attributes (a slice's bounds, a
// tuple index, dimensions). Only instructions sharing one are compared
// by their full keys (canonical text), which most never need: printing
// every instruction's text cost a GRU unrolled over 100 steps an eighth
// of its compile.
type roughKey struct {
	op       hlo.Opcode
	dtype    hlo.DType
	elems    int64
	nops     int
	op0, op1 *hlo.Instruction
	ints     uint64
}

func roughKeyOf(in *hlo.Instruction) roughKey {
	k := roughKey{op: in.Opcode, dtype: in.Shape.DType, nops: len(in.Operands)}
	if !in.Shape.IsTuple() {
		k.elems = in.Shape.NumElements()
	}
	if len(in.Operands) > 0 {
		k.op0 = in.Operands[0]
	}
	if len(in.Operands) > 1 {
		k.op1 = in.Operands[1]
	}
	k.ints = intAttrsHash(in.Attrs)
	return k
}

// intAttrsHash mixes the integer-valued attributes (FNV-1a over their
// values); the others are left to the full key.
func intAttrsHash(attrs []hlo.Attr) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v int64) { h = (h ^ uint64(v)) * 1099511628211 }
	for _, a := range attrs {
		switch v := a.Value.(type) {
		case int64:
			mix(v)
		case []int64:
			for _, x := range v {
				mix(x)
			}
		case []hlo.SliceDim:
			for _, d := range v {
				mix(d.Start)
				mix(d.Limit)
				mix(d.Stride)
			}
		}
	}
	return h
}

func cseCandidate(in *hlo.Instruction, fx *effects) bool {
	switch {
	case in.Opcode == hlo.OpParameter, len(in.ControlPredecessors) > 0, fx.instruction(in):
		return false
	case in.Opcode == hlo.OpConstant:
		return in.Literal != nil && !in.Literal.IsElided()
	}
	return true
}
