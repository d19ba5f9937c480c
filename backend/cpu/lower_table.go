package cpu

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// Lowering as one table: per opcode, an ordered list of named lowerings,
// tried in turn until one takes the instruction; the evaluator's, last in
// every list, takes anything. The names are what Executable.Lowering
// counts and `axle run` reports.

// lowered is what a lowering made of one instruction.
type lowered struct {
	k kernel // nil: nothing runs (a parameter, a constant, a view)
	// inPlace lists the operands whose buffer the kernel may compute over.
	inPlace []int
	// parts, for a multi-output fusion's tuple, the operands each
	// element's buffer may be (the tuple then has a buffer per element).
	parts [][]int
	// how names it finer than its lowering (jit-fusion rather than
	// tile-fusion, an epilogue's product, a collective's kind), or "".
	how string
}

// lowering is one way to compile an instruction to a kernel.
type lowering struct {
	name  string
	lower func(c *compiler, in *hlo.Instruction) (lowered, bool)
}

// loweringDecl is a lowering with the opcodes it takes (nil: any).
type loweringDecl struct {
	lowering
	ops []hlo.Opcode
}

const evaluatorLowering = "evaluator"

// loweringDecls are the lowerings in the order they are tried: an
// opcode's list is the declarations that take it, in this order.
var loweringDecls = []loweringDecl{
	{lowering{"multi-output-fusion", lowerMultiFusion}, opcodes(hlo.OpFusion)},
	{lowering{"gemm-int8", writes(lowerInt8DotFusion)}, opcodes(hlo.OpFusion)},
	{lowering{"conv-int8", writes(lowerInt8ConvFusion)}, opcodes(hlo.OpFusion)},
	{lowering{"gemm-transposed", writes(lowerDotTransposeFusion)}, opcodes(hlo.OpFusion)},
	{lowering{"parameter", func(*compiler, *hlo.Instruction) (lowered, bool) { return lowered{}, true }}, opcodes(hlo.OpParameter)},
	{lowering{"constant", lowerConstant}, opcodes(hlo.OpConstant)},
	{lowering{"output-fusion", lowerOutputFusionKernel}, opcodes(hlo.OpFusion)},
	{lowering{"reduce-select", lowerReduceSelectFusionKernel}, opcodes(hlo.OpFusion)},
	{lowering{"reduce-fusion", lowerReduceFusion}, opcodes(hlo.OpFusion)},
	{lowering{"tile-fusion", lowerLoopFusion}, opcodes(hlo.OpFusion)},
	{lowering{"fft", writes(lowerFFT)}, opcodes(hlo.OpFft)},
	{lowering{"triangular-solve", writes(lowerTriangularSolve)}, opcodes(hlo.OpTriangularSolve)},
	{lowering{"cholesky", writes(lowerCholesky)}, opcodes(hlo.OpCholesky)},
	{lowering{"gemm-bf16", writesC((*compiler).lowerDotBF16)}, opcodes(hlo.OpDot)},
	{lowering{"gemm", writesC((*compiler).lowerDot)}, opcodes(hlo.OpDot)},
	{lowering{"complex-dot", writes(lowerDotComplex)}, opcodes(hlo.OpDot)},
	{lowering{"dot", writes(lowerDotGeneric)}, opcodes(hlo.OpDot)},
	{lowering{"gather", writes(lowerGather)}, opcodes(hlo.OpGather)},
	{lowering{"scatter", inPlace(writes(lowerScatter), 0)}, opcodes(hlo.OpScatter)},
	{lowering{"conv-bf16", writesC((*compiler).lowerConvBF16)}, opcodes(hlo.OpConvolution)},
	{lowering{"conv", writesC((*compiler).lowerConv)}, opcodes(hlo.OpConvolution)},
	{lowering{"conv-loop", writes(lowerConvGeneric)}, opcodes(hlo.OpConvolution)},
	{lowering{"sort", returns(lowerSortKernel)}, opcodes(hlo.OpSort)},
	{lowering{"bitcast-convert", inPlace(writes(lowerBitcastConvert), 0)}, opcodes(hlo.OpBitcastConvert)},
	{lowering{"reduce-precision", inPlace(writes(lowerReducePrecision), 0)}, opcodes(hlo.OpReducePrecision)},
	{lowering{"select-and-scatter", writes(lowerSelectAndScatter)}, opcodes(hlo.OpSelectAndScatter)},
	{lowering{"tuple", lowerTuple}, opcodes(hlo.OpTuple)},
	{lowering{"tuple", lowerTupleElement}, opcodes(hlo.OpGetTupleElement)},
	{lowering{"while", lowerControlKernel}, opcodes(hlo.OpWhile)},
	{lowering{"call", lowerControlKernel}, opcodes(hlo.OpCall)},
	{lowering{"conditional", lowerControlKernel}, opcodes(hlo.OpConditional)},
	{lowering{"view", lowerView}, opcodes(hlo.OpReshape, hlo.OpBitcast)},
	{lowering{"movement", lowerMovementKernel}, movementOpcodes},
	{lowering{"reduce", writes(lowerReduce)}, opcodes(hlo.OpReduce, hlo.OpReduceWindow)},
	{lowering{"elementwise", lowerElementwiseKernel}, elementwiseOpcodes()},
	{lowering{"convert", writes(func(in *hlo.Instruction, _ int) (kernelFunc, bool) { return lowerConvertAny(in) })}, opcodes(hlo.OpConvert)},
	{lowering{"fusion-body", kernelOf((*compiler).fusionBody)}, opcodes(hlo.OpFusion)},
	{lowering{"rng-bit-generator", makes(lowerRandom)}, opcodes(hlo.OpRngBitGenerator)},
	{lowering{"rng", makes(lowerRandom)}, opcodes(hlo.OpRng)},
	{lowering{"rng-get-and-update-state", makes(lowerRandom)}, opcodes(hlo.OpRngGetAndUpdateState)},
	{lowering{"topk", makes(lowerTopK)}, opcodes(hlo.OpTopK)},
	{lowering{"async-start", lowerAsyncStartKernel}, opcodes(hlo.OpAsyncStart)},
	{lowering{"collective", lowerCollectiveKernel}, collectiveOpcodes},
	{lowering{"single-device", lowerSingleDeviceKernel}, singleDeviceOpcodes},
	{lowering{"scatter-lanes", returns(lowerScatterLanes)}, opcodes(hlo.OpScatter)},
	{lowering{"reduce-window-lanes", returns(lowerReduceWindowLanes)}, opcodes(hlo.OpReduceWindow)},
	{lowering{"reduce-select", returns(lowerReduceSelect)}, opcodes(hlo.OpReduce)},
	{lowering{"reduce-lanes", returns(lowerReduceLanes)}, opcodes(hlo.OpReduce)},
	{lowering{evaluatorLowering, lowerEvaluator}, nil},
}

// movementOpcodes are lowerMovement's opcodes.
var movementOpcodes = opcodes(hlo.OpCopy, hlo.OpReshape, hlo.OpBitcast, hlo.OpBroadcast, hlo.OpTranspose, hlo.OpReverse,
	hlo.OpSlice, hlo.OpConcatenate, hlo.OpPad, hlo.OpIota, hlo.OpDynamicSlice, hlo.OpDynamicUpdateSlice,
	hlo.OpSelect, hlo.OpConvert)

// singleDeviceOpcodes are lowerSingleDevice's opcodes but async-start,
// whose computation the compiler compiles (lowerAsyncStartKernel).
var singleDeviceOpcodes = opcodes(hlo.OpAllReduce, hlo.OpAllReduceStart, hlo.OpAllGather, hlo.OpReduceScatter,
	hlo.OpAllToAll, hlo.OpCollectiveBroadcast, hlo.OpAllGatherStart, hlo.OpCollectivePermute,
	hlo.OpCollectivePermuteStart, hlo.OpAllGatherDone, hlo.OpCollectivePermuteDone, hlo.OpAllReduceDone,
	hlo.OpOptimizationBarrier, hlo.OpDomain, hlo.OpAddDependency, hlo.OpAsyncUpdate, hlo.OpCopy,
	hlo.OpAsyncDone, hlo.OpCopyDone, hlo.OpCopyStart, hlo.OpAfterAll, hlo.OpReplicaID,
	hlo.OpPartitionID, hlo.OpGetDimensionSize, hlo.OpSetDimensionSize, hlo.OpDynamicReshape, hlo.OpCustomCall)

// elementwiseOpcodes are lowerElementwise's: the op table's elementwise ones.
func elementwiseOpcodes() []hlo.Opcode {
	var out []hlo.Opcode
	for op := hlo.Opcode(1); int(op) < hlo.NumOpcodes(); op++ {
		if op.IsElementwise() {
			out = append(out, op)
		}
	}
	return out
}

func opcodes(o ...hlo.Opcode) []hlo.Opcode { return o }

// lowerings is each opcode's ordered list, built from loweringDecls (at
// init: the lowerings lower called computations through it).
var lowerings [][]lowering

func init() { lowerings = buildLowerings(loweringDecls) }

func buildLowerings(decls []loweringDecl) [][]lowering {
	table := make([][]lowering, hlo.NumOpcodes())
	for _, d := range decls {
		for op := range table {
			if d.ops == nil || slices.Contains(d.ops, hlo.Opcode(op)) {
				table[op] = append(table[op], d.lowering)
			}
		}
	}
	if err := checkLowerings(table); err != nil {
		panic(err)
	}
	return table
}

// checkLowerings: every opcode's list ends in the evaluator (so lower
// always finds a kernel), and names are unique within a list (so the
// counts say which lowering ran).
func checkLowerings(table [][]lowering) error {
	for op, list := range table[1:] {
		name := hlo.Opcode(op + 1).String()
		if len(list) == 0 || list[len(list)-1].name != evaluatorLowering {
			return fmt.Errorf("cpu: the lowerings of %s do not end in the evaluator's", name)
		}
		seen := map[string]bool{}
		for _, l := range list {
			if seen[l.name] {
				return fmt.Errorf("cpu: two lowerings of %s are named %s", name, l.name)
			}
			seen[l.name] = true
		}
	}
	return nil
}

// writes adapts a lowerer of kernels writing into their output buffer.
func writes(f func(*hlo.Instruction, int) (kernelFunc, bool)) func(*compiler, *hlo.Instruction) (lowered, bool) {
	return func(c *compiler, in *hlo.Instruction) (lowered, bool) {
		k, ok := f(in, c.threads)
		if !ok {
			return lowered{}, false
		}
		return lowered{k: fromFunc(in, k)}, true
	}
}

// writesC is writes for the compiler's own lowerers.
func writesC(f func(*compiler, *hlo.Instruction) (kernelFunc, bool)) func(*compiler, *hlo.Instruction) (lowered, bool) {
	return func(c *compiler, in *hlo.Instruction) (lowered, bool) {
		k, ok := f(c, in)
		if !ok {
			return lowered{}, false
		}
		return lowered{k: fromFunc(in, k)}, true
	}
}

// returns adapts a lowerer of kernels building their own result.
func returns(f func(*hlo.Instruction, int) (func([]*hlo.Literal) (*hlo.Literal, error), bool)) func(*compiler, *hlo.Instruction) (lowered, bool) {
	return func(c *compiler, in *hlo.Instruction) (lowered, bool) {
		g, ok := f(in, c.threads)
		if !ok {
			return lowered{}, false
		}
		return lowered{k: func(_ *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return g(ops)
		}}, true
	}
}

// makes adapts a lowerer of kernels.
func makes(f func(*hlo.Instruction, int) (kernel, bool)) func(*compiler, *hlo.Instruction) (lowered, bool) {
	return func(c *compiler, in *hlo.Instruction) (lowered, bool) {
		k, ok := f(in, c.threads)
		return lowered{k: k}, ok
	}
}

// kernelOf is makes for the compiler's own lowerers.
func kernelOf(f func(*compiler, *hlo.Instruction) (kernel, bool)) func(*compiler, *hlo.Instruction) (lowered, bool) {
	return func(c *compiler, in *hlo.Instruction) (lowered, bool) {
		k, ok := f(c, in)
		return lowered{k: k}, ok
	}
}

// inPlace says the kernels of f may compute over operands ip.
func inPlace(f func(*compiler, *hlo.Instruction) (lowered, bool), ip ...int) func(*compiler, *hlo.Instruction) (lowered, bool) {
	return func(c *compiler, in *hlo.Instruction) (lowered, bool) {
		l, ok := f(c, in)
		l.inPlace = slices.Clone(ip)
		return l, ok
	}
}

// The table's own lowerings: those whose kernel shape or names the
// adapters do not cover.

func lowerMultiFusion(c *compiler, in *hlo.Instruction) (lowered, bool) {
	k, parts, ok := c.lowerMulti(in)
	return lowered{k: k, parts: parts}, ok
}

// lowerConstant: a constant's literal is its value; an elided one (no
// values) is left to the evaluator.
func lowerConstant(_ *compiler, in *hlo.Instruction) (lowered, bool) {
	return lowered{}, in.Literal != nil && !in.Literal.IsElided()
}

func isOutputFusion(in *hlo.Instruction) bool {
	kind, _ := in.EnumAttr("kind")
	return kind == kOutput
}

// reducesAtRoot: a fusion whose root is a reduce is a reduction fusion,
// which the loop program does not take.
func reducesAtRoot(in *hlo.Instruction) bool {
	fc := in.Computation("calls")
	return fc != nil && fc.Root != nil && fc.Root.Opcode == hlo.OpReduce
}

// lowerOutputFusionKernel names the product the epilogue finishes.
func lowerOutputFusionKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	if !isOutputFusion(in) {
		return lowered{}, false
	}
	k, how, err := c.lowerOutputFusion(in)
	if err != nil {
		return lowered{}, false
	}
	return lowered{k: fromFunc(in, k), how: how}, true
}

// An output fusion no epilogue kernel takes runs as its body: neither
// the reduction nor the loop programs take a dot or a convolution.
func lowerReduceSelectFusionKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	if isOutputFusion(in) {
		return lowered{}, false
	}
	return returns(lowerReduceSelectFusion)(c, in)
}

func lowerReduceFusion(c *compiler, in *hlo.Instruction) (lowered, bool) {
	if isOutputFusion(in) || !reducesAtRoot(in) {
		return lowered{}, false
	}
	p, err := tile.Reduce(in)
	if err != nil {
		return lowered{}, false
	}
	return lowered{k: func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil {
			out = hlo.NewLiteral(in.Shape)
		}
		return out, p.Run(ops, out, c.threads)
	}}, true
}

// lowerLoopFusion names the generated-code programs jit-fusion.
func lowerLoopFusion(c *compiler, in *hlo.Instruction) (lowered, bool) {
	if isOutputFusion(in) || reducesAtRoot(in) {
		return lowered{}, false
	}
	p, err := tile.Loop(in)
	if err != nil {
		return lowered{}, false
	}
	how := ""
	if p.RunsJIT() {
		how = "jit-fusion"
	}
	return lowered{k: func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if out == nil {
			out = hlo.NewLiteral(in.Shape)
		}
		return out, p.Run(ops, out, c.threads)
	}, inPlace: p.InPlace(), how: how}, true
}

func lowerTuple(*compiler, *hlo.Instruction) (lowered, bool) {
	return lowered{k: func(_ *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		return hlo.MakeTupleLiteral(slices.Clone(ops)...), nil
	}}, true
}

// lowerTupleElement: an array element is then copied into the value's
// buffer, so it does not depend on the tuple's storage.
func lowerTupleElement(_ *compiler, in *hlo.Instruction) (lowered, bool) {
	idx, _ := in.Int("index")
	return lowered{k: func(_ *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if e := ops[0].Elements(); idx >= 0 && int(idx) < len(e) {
			return e[idx], nil
		}
		return nil, fmt.Errorf("tuple index %d out of range", idx)
	}}, true
}

func lowerControlKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	k, ok := c.lowerControl(in)
	return lowered{k: k}, ok
}

func lowerView(_ *compiler, in *hlo.Instruction) (lowered, bool) {
	return lowered{}, isView(in)
}

func lowerMovementKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	l, ok := writes(lowerMovement)(c, in)
	if ok && in.Opcode == hlo.OpDynamicUpdateSlice {
		l.inPlace = []int{0} // writes only the update when out is operand 0's buffer
	}
	return l, ok
}

func lowerElementwiseKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	l, ok := writes(lowerElementwise)(c, in)
	if ok {
		l.inPlace = elementwiseInPlace(in)
	}
	return l, ok
}

// lowerSingleDeviceKernel names the kind of op (collective, copy, ...).
func lowerSingleDeviceKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	k, how, ok := lowerSingleDevice(in, c.threads)
	return lowered{k: k, how: how}, ok
}

// lowerEvaluator runs the evaluator's handler for the opcode. Its result
// is complete before the executor copies it into the buffer, so any
// operand's buffer may be that buffer.
func lowerEvaluator(_ *compiler, in *hlo.Instruction) (lowered, bool) {
	all := make([]int, len(in.Operands))
	for k := range all {
		all[k] = k
	}
	return lowered{k: func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		e, err := ev.evaluator()
		if err != nil {
			return nil, err
		}
		return e.Instruction(in, ops)
	}, inPlace: all}, true
}

// lowerAsyncStartKernel compiles the wrapped computation with the
// module's compiler, run at once as the evaluator does: ((operands),
// result, contexts...). A computation that would leave anything to the
// evaluator is declined whole, so what it leaves is reported (as this
// async-start) and not as well as its own instructions.
func lowerAsyncStartKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	comp := in.Computation("calls")
	if comp == nil || !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 {
		return lowered{}, false
	}
	n := len(c.fallbacks)
	sub, err := c.compiled(comp)
	if err != nil || len(sub.Fallbacks) > 0 {
		c.fallbacks = c.fallbacks[:n]
		return lowered{}, false
	}
	c.use(sub)
	contexts := in.Shape.Tuple[2:]
	return lowered{k: func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		r, err := sub.runSub(ev, ops...)
		if err != nil {
			return nil, fmt.Errorf("async computation %s: %w", comp.Name, err)
		}
		return withContexts(contexts, hlo.MakeTupleLiteral(ops...), r), nil
	}}, true
}
