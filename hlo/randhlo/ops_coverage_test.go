package randhlo

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Reasons shared by several opcodes of notGenerated.
const (
	rounding  = "elementwise, left out on purpose: it amplifies rounding differences or leaves its domain (see unary)"
	notYet    = "not generated yet"
	types     = "needs element types the generator does not make (it makes f32, s32 and pred)"
	dynamic   = "dynamic dimensions: the generator makes static shapes"
	backend   = "made by passes or backends, never written by a front end"
	noEval    = "the evaluator, the fuzzers' oracle, does not run it (eval's notEvaluated)"
	oneDevice = "replica or partition identity: one device only in the fuzzers"
)

// excludedByFlags reports the opcodes left out by their flags in hlo's
// table: the differential fuzzers compare one replica's pure results, so
// collectives, async pairs and side effects have no place in them.
func excludedByFlags(op hlo.Opcode) bool {
	return op.Has(hlo.Collective) || op.Has(hlo.Async) || op.Has(hlo.SideEffecting)
}

// notGenerated are the opcodes the generator never emits, each with why.
// ADDING_AN_OP.md points here: a new opcode is fuzzed (a case in step or
// movement) or says here why not.
var notGenerated = map[hlo.Opcode]string{
	hlo.OpAcos: rounding, hlo.OpAcosh: rounding, hlo.OpAsin: rounding, hlo.OpAsinh: rounding,
	hlo.OpAtan: rounding, hlo.OpAtanh: rounding, hlo.OpAtan2: rounding, hlo.OpCbrt: rounding,
	hlo.OpCeil: rounding, hlo.OpFloor: rounding, hlo.OpCos: rounding, hlo.OpSin: rounding,
	hlo.OpTan: rounding, hlo.OpCosh: rounding, hlo.OpSinh: rounding, hlo.OpErf: rounding,
	hlo.OpExpm1: rounding, hlo.OpLog: rounding, hlo.OpLog1p: rounding, hlo.OpPower: rounding,
	hlo.OpRemainder: rounding, hlo.OpRsqrt: rounding, hlo.OpSqrt: rounding, hlo.OpSign: rounding,
	hlo.OpDivide: rounding, hlo.OpRoundNearestAfz: rounding, hlo.OpRoundNearestEven: rounding,
	hlo.OpReducePrecision: rounding,

	hlo.OpXor: notYet, hlo.OpNot: notYet, hlo.OpShiftLeft: notYet, hlo.OpShiftRightArithmetic: notYet,
	hlo.OpShiftRightLogical: notYet, hlo.OpClz: notYet, hlo.OpPopulationCount: notYet, hlo.OpMulhi: notYet,
	hlo.OpClamp: notYet, hlo.OpConvert: notYet, hlo.OpCopy: notYet, hlo.OpIsFinite: notYet,
	hlo.OpCall: notYet, hlo.OpConditional: notYet, hlo.OpMap: notYet,
	hlo.OpConvolution: notYet, hlo.OpDynamicSlice: notYet, hlo.OpScatter: notYet,
	hlo.OpReduceWindow: notYet, hlo.OpSelectAndScatter: notYet, hlo.OpTopK: notYet,
	hlo.OpCholesky: notYet, hlo.OpTriangularSolve: notYet,
	hlo.OpBatchNormGrad: notYet, hlo.OpBatchNormInference: notYet, hlo.OpBatchNormTraining: notYet,
	hlo.OpOptimizationBarrier: notYet, hlo.OpAddDependency: notYet, hlo.OpAfterAll: notYet,

	hlo.OpComplex: types, hlo.OpReal: types, hlo.OpImag: types, hlo.OpFft: types,
	hlo.OpBitcastConvert: types, hlo.OpRngBitGenerator: types,

	hlo.OpDynamicReshape: dynamic, hlo.OpGetDimensionSize: dynamic, hlo.OpSetDimensionSize: dynamic,
	hlo.OpBitcast: backend, hlo.OpFusion: backend, hlo.OpDomain: backend,
	hlo.OpPartitionID: oneDevice, hlo.OpReplicaID: oneDevice,

	hlo.OpRaggedDot: noEval, hlo.OpScaledDot: noEval, hlo.OpScan: noEval, hlo.OpShuffle: noEval,
	hlo.OpStochasticConvert: noEval,
}

// TestEveryOpcodeGenerated: every opcode of hlo's table appears in the
// modules of the first seeds (in any computation), is excluded by its
// flags, or has a reason in notGenerated; a listed opcode that the
// generator now emits fails too, so the list cannot go stale.
func TestEveryOpcodeGenerated(t *testing.T) {
	seen := map[hlo.Opcode]bool{}
	for seed := range uint64(300) {
		m, err := Module(seed, Options{Instructions: 40})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range m.Computations {
			for _, in := range c.Instructions {
				seen[in.Opcode] = true
			}
		}
	}
	for i := 1; i < hlo.NumOpcodes(); i++ {
		op := hlo.Opcode(i)
		reason, excused := notGenerated[op]
		switch {
		case !seen[op] && !excused && !excludedByFlags(op):
			t.Errorf("%s never appears in a generated module: generate it (a case in step or movement, gen.go) or say why in notGenerated", op)
		case seen[op] && excused:
			t.Errorf("%s is generated but notGenerated says %q: remove it from the list", op, reason)
		}
	}
}
