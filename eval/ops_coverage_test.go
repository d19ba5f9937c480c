package eval

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// notEvaluated are the opcodes without a row in handlers, each with why.
// ADDING_AN_OP.md points here: a new opcode needs a handler or a line here.
var notEvaluated = map[hlo.Opcode]string{
	hlo.OpParameter: "bound to the arguments by the computation's plan, never dispatched",

	hlo.OpInfeed:   "host transfer: no host queue in the evaluator",
	hlo.OpOutfeed:  "host transfer: no host queue in the evaluator",
	hlo.OpSend:     "host transfer / cross-program channel: not implemented",
	hlo.OpSendDone: "host transfer / cross-program channel: not implemented",
	hlo.OpRecv:     "host transfer / cross-program channel: not implemented",
	hlo.OpRecvDone: "host transfer / cross-program channel: not implemented",

	hlo.OpCollectiveReduce: "collective not implemented yet (ErrUnimplemented)",

	hlo.OpRaggedDot:         "not implemented yet; its shape rule is cannotInfer too",
	hlo.OpScaledDot:         "not implemented yet (block-scaled dot)",
	hlo.OpScan:              "not implemented yet; its shape rule is cannotInfer too",
	hlo.OpShuffle:           "not implemented yet; its shape rule is cannotInfer too",
	hlo.OpStochasticConvert: "not implemented yet (needs the random-bits operand's rounding rule)",
}

// TestEveryOpcodeEvaluated: every opcode of hlo's table has an evaluator
// handler or a reason in notEvaluated, and no opcode has both (a stale
// exception would hide a later regression).
func TestEveryOpcodeEvaluated(t *testing.T) {
	for i := 1; i < hlo.NumOpcodes(); i++ {
		op := hlo.Opcode(i)
		reason, excused := notEvaluated[op]
		switch {
		case handlers[op] == nil && !excused:
			t.Errorf("%s has no evaluator handler: register one in the eval file of its family (register(fn, hlo.Op...)), or say why in notEvaluated", op)
		case handlers[op] != nil && excused:
			t.Errorf("%s has an evaluator handler but is listed in notEvaluated (%q): remove it from the list", op, reason)
		}
	}
}
