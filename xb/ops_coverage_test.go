package xb

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Reasons shared by several opcodes of the lists below.
const (
	viaEmit       = "no builder function: reachable through Builder.Emit"
	backendOnly   = "made by passes or backends, never by a front end"
	hostTransfer  = "host transfer or side effect: the builder makes pure programs"
	notYet        = "differentiable, no rule yet"
	intResult     = "integer, predicate or token result: nothing to differentiate"
	leaf          = "no operands: backward stops there"
	randomValues  = "random values: no derivative with respect to their operands"
	complexValues = "complex values: Grad differentiates real floating point only"
)

// distributed reports opcodes left out of both lists by their flags in
// hlo's table: xb builds one program for one device, with no async pairs.
func distributed(op hlo.Opcode) bool {
	return op.Has(hlo.Collective) || op.Has(hlo.Async)
}

// notBuilt are the opcodes no builder function of xb emits, each with why.
var notBuilt = map[hlo.Opcode]string{
	hlo.OpAcos: viaEmit, hlo.OpAcosh: viaEmit, hlo.OpAsin: viaEmit, hlo.OpAsinh: viaEmit,
	hlo.OpAtan: viaEmit, hlo.OpAtanh: viaEmit, hlo.OpCosh: viaEmit, hlo.OpSinh: viaEmit,
	hlo.OpMulhi: viaEmit, hlo.OpRoundNearestAfz: viaEmit, hlo.OpBitcast: viaEmit,
	hlo.OpBatchNormGrad: viaEmit, hlo.OpBatchNormInference: viaEmit, hlo.OpBatchNormTraining: viaEmit,
	hlo.OpCholesky: viaEmit, hlo.OpTriangularSolve: viaEmit, hlo.OpFft: viaEmit,
	hlo.OpSelectAndScatter: viaEmit, hlo.OpRng: viaEmit,
	hlo.OpRngGetAndUpdateState: viaEmit, hlo.OpStochasticConvert: viaEmit,
	hlo.OpCustomCall: viaEmit, hlo.OpOptimizationBarrier: viaEmit, hlo.OpAddDependency: viaEmit,
	hlo.OpAfterAll: viaEmit, hlo.OpPartitionID: viaEmit, hlo.OpReplicaID: viaEmit,
	hlo.OpDynamicReshape: viaEmit, hlo.OpGetDimensionSize: viaEmit, hlo.OpSetDimensionSize: viaEmit,
	hlo.OpRaggedDot: viaEmit, hlo.OpScaledDot: viaEmit, hlo.OpScan: viaEmit, hlo.OpShuffle: viaEmit,
	hlo.OpFusion: backendOnly, hlo.OpDomain: backendOnly,
	hlo.OpInfeed: hostTransfer, hlo.OpOutfeed: hostTransfer, hlo.OpSend: hostTransfer,
	hlo.OpSendDone: hostTransfer, hlo.OpRecv: hostTransfer, hlo.OpRecvDone: hostTransfer,
}

// notDifferentiated are the opcodes without a rule in gradRules, each
// with why; Grad reports an error naming such an op on a path to y.
var notDifferentiated = map[hlo.Opcode]string{
	hlo.OpAcos: notYet, hlo.OpAcosh: notYet, hlo.OpAsin: notYet, hlo.OpAsinh: notYet,
	hlo.OpAtan: notYet, hlo.OpAtanh: notYet, hlo.OpCosh: notYet, hlo.OpSinh: notYet,
	hlo.OpBatchNormGrad: notYet, hlo.OpBatchNormInference: notYet, hlo.OpBatchNormTraining: notYet,
	hlo.OpCholesky: notYet, hlo.OpTriangularSolve: notYet, hlo.OpFft: notYet,
	hlo.OpConditional: notYet, hlo.OpWhile: notYet, hlo.OpMap: notYet, hlo.OpScan: notYet,
	hlo.OpSort: notYet, hlo.OpTopK: notYet, hlo.OpSelectAndScatter: notYet,
	hlo.OpDynamicReshape: notYet, hlo.OpSetDimensionSize: notYet, hlo.OpOptimizationBarrier: notYet,
	hlo.OpRaggedDot: notYet, hlo.OpScaledDot: notYet, hlo.OpShuffle: notYet,

	hlo.OpAnd: intResult, hlo.OpOr: intResult, hlo.OpXor: intResult, hlo.OpNot: intResult,
	hlo.OpShiftLeft: intResult, hlo.OpShiftRightArithmetic: intResult, hlo.OpShiftRightLogical: intResult,
	hlo.OpClz: intResult, hlo.OpPopulationCount: intResult, hlo.OpMulhi: intResult,
	hlo.OpCompare: intResult, hlo.OpIsFinite: intResult, hlo.OpGetDimensionSize: intResult,
	hlo.OpBitcastConvert: "reinterprets bits: no derivative",
	hlo.OpAddDependency:  intResult, hlo.OpAfterAll: intResult,

	hlo.OpParameter: leaf, hlo.OpConstant: leaf, hlo.OpIota: leaf,
	hlo.OpPartitionID: leaf, hlo.OpReplicaID: leaf, hlo.OpRngGetAndUpdateState: leaf,
	hlo.OpTuple:           "backward hands a tuple's per-element adjoints to its operands itself",
	hlo.OpGetTupleElement: "backward adds the adjoint to its tuple's element itself",

	hlo.OpRng: randomValues, hlo.OpRngBitGenerator: randomValues, hlo.OpStochasticConvert: randomValues,
	hlo.OpComplex: complexValues, hlo.OpReal: complexValues, hlo.OpImag: complexValues,
	hlo.OpCustomCall: "opaque target: no rule can know its derivative",
	hlo.OpFusion:     backendOnly, hlo.OpDomain: backendOnly,
	hlo.OpInfeed: hostTransfer, hlo.OpOutfeed: hostTransfer, hlo.OpSend: hostTransfer,
	hlo.OpSendDone: hostTransfer, hlo.OpRecv: hostTransfer, hlo.OpRecvDone: hostTransfer,
}

// builtOpcodes are the opcodes named (hlo.OpX) in xb's builder files:
// every non-test file but the grad_*.go rules. A builder function is what
// names the opcode it emits; this is the source, not a copy of it.
func builtOpcodes(t *testing.T) map[hlo.Opcode]bool {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	names := opcodeNames(t)
	built := map[hlo.Opcode]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "grad") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "hlo" {
				if op, ok := names[sel.Sel.Name]; ok {
					built[op] = true
				}
			}
			return true
		})
	}
	if len(built) == 0 {
		t.Fatal("no hlo.Op... names found in xb's builder files: is the test running in xb's directory?")
	}
	return built
}

// opcodeNames maps the Go names of hlo's opcode constants (OpAdd, ...)
// to their values, read from the iota block of hlo/opcode.go.
func opcodeNames(t *testing.T) map[string]hlo.Opcode {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../hlo/opcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]hlo.Opcode{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || len(g.Specs) == 0 {
			continue
		}
		if first := g.Specs[0].(*ast.ValueSpec); first.Names[0].Name != "OpInvalid" {
			continue
		}
		for i, s := range g.Specs {
			names[s.(*ast.ValueSpec).Names[0].Name] = hlo.Opcode(i)
		}
	}
	if names["OpAbs"] != hlo.OpAbs || names["OpXor"] != hlo.OpXor {
		t.Fatal("hlo/opcode.go's opcode block is not the one iota counts (OpAbs, OpXor out of place)")
	}
	if n, ok := names["numOpcodes"]; !ok || int(n) != hlo.NumOpcodes() {
		t.Fatalf("hlo/opcode.go's opcode block does not end in numOpcodes = %d", hlo.NumOpcodes())
	}
	return names
}

// TestEveryOpcodeBuilt: every opcode of hlo's table is emitted by a
// builder function, is Collective or Async, or has a reason in notBuilt;
// a listed opcode that a builder function now emits fails too.
func TestEveryOpcodeBuilt(t *testing.T) {
	built := builtOpcodes(t)
	for i := 1; i < hlo.NumOpcodes(); i++ {
		op := hlo.Opcode(i)
		reason, excused := notBuilt[op]
		switch {
		case !built[op] && !excused && !distributed(op):
			t.Errorf("%s: no builder function in xb emits it: add one (elementwise.go, shape_ops.go, linalg.go, ...) or say why in notBuilt", op)
		case built[op] && excused:
			t.Errorf("%s: a builder function emits it but notBuilt says %q: remove it from the list", op, reason)
		}
	}
}

// TestEveryOpcodeDifferentiated: every opcode of hlo's table has a
// gradient rule, is Collective or Async, or has a reason in
// notDifferentiated; a listed opcode that has a rule fails too.
func TestEveryOpcodeDifferentiated(t *testing.T) {
	for i := 1; i < hlo.NumOpcodes(); i++ {
		op := hlo.Opcode(i)
		reason, excused := notDifferentiated[op]
		switch {
		case gradRules[op] == nil && !excused && !distributed(op):
			t.Errorf("%s has no gradient rule: add one with registerGrad in xb/grad_*.go, or say why in notDifferentiated", op)
		case gradRules[op] != nil && excused:
			t.Errorf("%s has a gradient rule but notDifferentiated says %q: remove it from the list", op, reason)
		}
	}
}
