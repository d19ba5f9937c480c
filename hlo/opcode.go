package hlo

import "fmt"

// Opcode identifies an HLO operation.
type Opcode uint8

// Variadic is the arity of opcodes that take any number of operands.
const Variadic = -1

// OpFlags are properties of an opcode that passes and backends query.
type OpFlags uint16

const (
	// Elementwise ops apply the same scalar function at every index.
	Elementwise OpFlags = 1 << iota
	// Commutative binary ops may swap their operands.
	Commutative
	// SideEffecting ops must not be removed or duplicated.
	SideEffecting
	// Collective ops communicate between replicas or partitions.
	Collective
	// Async ops start, update or finish an asynchronous operation.
	Async
	// Transcendental unary ops accept result_accuracy.
	Transcendental
)

// OpInfo is one row of the opcode table: everything the rest of the
// system needs to know about an opcode without a switch statement.
type OpInfo struct {
	Name  string // as written in HLO text
	Arity int    // fixed operand count, or Variadic
	// Attrs are the opcode's own attributes in the order XLA prints them.
	// Generic attributes (sharding, metadata, ...) are in GenericAttrs.
	Attrs []string
	Flags OpFlags
}

// The opcodes: one per row of XLA's HLO_OPCODE_LIST.
const (
	OpInvalid Opcode = iota
	OpAbs
	OpAcos
	OpAcosh
	OpAdd
	OpAddDependency
	OpAfterAll
	OpAllGather
	OpAllGatherDone
	OpAllGatherStart
	OpAllReduce
	OpAllReduceDone
	OpAllReduceStart
	OpAllToAll
	OpAnd
	OpAsin
	OpAsinh
	OpAsyncDone
	OpAsyncStart
	OpAsyncUpdate
	OpAtan
	OpAtan2
	OpAtanh
	OpBatchNormGrad
	OpBatchNormInference
	OpBatchNormTraining
	OpBitcast
	OpBitcastConvert
	OpBroadcast
	OpCall
	OpCbrt
	OpCeil
	OpCholesky
	OpClamp
	OpClz
	OpCollectiveBroadcast
	OpCollectivePermute
	OpCollectivePermuteDone
	OpCollectivePermuteStart
	OpCollectiveReduce
	OpCompare
	OpComplex
	OpConcatenate
	OpConditional
	OpConstant
	OpConvert
	OpConvolution
	OpCopy
	OpCopyDone
	OpCopyStart
	OpCos
	OpCosh
	OpCustomCall
	OpDivide
	OpDomain
	OpDot
	OpDynamicReshape
	OpDynamicSlice
	OpDynamicUpdateSlice
	OpErf
	OpExp
	OpExpm1
	OpFft
	OpFloor
	OpFusion
	OpGather
	OpGetDimensionSize
	OpGetTupleElement
	OpImag
	OpInfeed
	OpIota
	OpIsFinite
	OpLog
	OpLog1p
	OpLogistic
	OpMap
	OpMaximum
	OpMinimum
	OpMulhi
	OpMultiply
	OpNegate
	OpNot
	OpOptimizationBarrier
	OpOr
	OpOutfeed
	OpPad
	OpParameter
	OpPartitionID
	OpPopulationCount
	OpPower
	OpRaggedAllToAll
	OpRaggedDot
	OpReal
	OpRecv
	OpRecvDone
	OpReduce
	OpReducePrecision
	OpReduceScatter
	OpReduceWindow
	OpRemainder
	OpReplicaID
	OpReshape
	OpReverse
	OpRng
	OpRngBitGenerator
	OpRngGetAndUpdateState
	OpRoundNearestAfz
	OpRoundNearestEven
	OpRsqrt
	OpScaledDot
	OpScan
	OpScatter
	OpSelect
	OpSelectAndScatter
	OpSend
	OpSendDone
	OpSetDimensionSize
	OpShiftLeft
	OpShiftRightArithmetic
	OpShiftRightLogical
	OpShuffle
	OpSign
	OpSin
	OpSinh
	OpSlice
	OpSort
	OpSqrt
	OpStochasticConvert
	OpSubtract
	OpTan
	OpTanh
	OpTopK
	OpTranspose
	OpTriangularSolve
	OpTuple
	OpWhile
	OpXor
	numOpcodes
)

const (
	ew  = Elementwise
	ewc = Elementwise | Commutative
	ewt = Elementwise | Transcendental
)

// Attribute lists shared by several rows.
var (
	collectiveAttrs = []string{"channel_id", "replica_groups", "constrain_layout", "use_global_device_ids", "to_apply"}
	gatherAttrs     = []string{"channel_id", "replica_groups", "constrain_layout", "dimensions", "use_global_device_ids"}
	permuteAttrs    = []string{"channel_id", "source_target_pairs", "slice_sizes"}
	convAttrs       = []string{"window", "dim_labels", "feature_group_count", "batch_group_count", "operand_precision", "conv_kind"}
	dotAttrs        = []string{"lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims", "lhs_ragged_dims", "rhs_group_dims", "operand_precision", "algorithm", "sparsity"}
	sendRecvAttrs   = []string{"channel_id", "is_host_transfer"}
	asyncAttrs      = []string{"calls", "async_execution_thread", "output_to_operand_aliasing"}
)

func attrs(names ...string) []string { return names }

// opTable drives the enum's String, the parser's opcode lookup, attribute
// validation and printing order, and operand-count checks.
var opTable = [numOpcodes]OpInfo{
	OpInvalid:                {Name: "invalid"},
	OpAbs:                    {Name: "abs", Arity: 1, Flags: ew},
	OpAcos:                   {Name: "acos", Arity: 1, Flags: ewt},
	OpAcosh:                  {Name: "acosh", Arity: 1, Flags: ewt},
	OpAdd:                    {Name: "add", Arity: 2, Flags: ewc},
	OpAddDependency:          {Name: "add-dependency", Arity: 2},
	OpAfterAll:               {Name: "after-all", Arity: Variadic},
	OpAllGather:              {Name: "all-gather", Arity: Variadic, Attrs: gatherAttrs, Flags: Collective},
	OpAllGatherDone:          {Name: "all-gather-done", Arity: 1, Flags: Collective | Async},
	OpAllGatherStart:         {Name: "all-gather-start", Arity: Variadic, Attrs: gatherAttrs, Flags: Collective | Async},
	OpAllReduce:              {Name: "all-reduce", Arity: Variadic, Attrs: attrs("channel_id", "replica_groups", "constrain_layout", "use_global_device_ids", "mode", "to_apply"), Flags: Collective},
	OpAllReduceDone:          {Name: "all-reduce-done", Arity: 1, Flags: Collective | Async},
	OpAllReduceStart:         {Name: "all-reduce-start", Arity: Variadic, Attrs: collectiveAttrs, Flags: Collective | Async},
	OpAllToAll:               {Name: "all-to-all", Arity: Variadic, Attrs: attrs("channel_id", "replica_groups", "constrain_layout", "dimensions"), Flags: Collective},
	OpAnd:                    {Name: "and", Arity: 2, Flags: ewc},
	OpAsin:                   {Name: "asin", Arity: 1, Flags: ewt},
	OpAsinh:                  {Name: "asinh", Arity: 1, Flags: ewt},
	OpAsyncDone:              {Name: "async-done", Arity: 1, Attrs: asyncAttrs, Flags: Async},
	OpAsyncStart:             {Name: "async-start", Arity: Variadic, Attrs: asyncAttrs, Flags: Async},
	OpAsyncUpdate:            {Name: "async-update", Arity: Variadic, Attrs: asyncAttrs, Flags: Async},
	OpAtan:                   {Name: "atan", Arity: 1, Flags: ewt},
	OpAtan2:                  {Name: "atan2", Arity: 2, Flags: ew},
	OpAtanh:                  {Name: "atanh", Arity: 1, Flags: ewt},
	OpBatchNormGrad:          {Name: "batch-norm-grad", Arity: 5, Attrs: attrs("epsilon", "feature_index")},
	OpBatchNormInference:     {Name: "batch-norm-inference", Arity: 5, Attrs: attrs("epsilon", "feature_index")},
	OpBatchNormTraining:      {Name: "batch-norm-training", Arity: 3, Attrs: attrs("epsilon", "feature_index")},
	OpBitcast:                {Name: "bitcast", Arity: 1},
	OpBitcastConvert:         {Name: "bitcast-convert", Arity: 1},
	OpBroadcast:              {Name: "broadcast", Arity: 1, Attrs: attrs("dimensions")},
	OpCall:                   {Name: "call", Arity: Variadic, Attrs: attrs("to_apply", "is_composite")},
	OpCbrt:                   {Name: "cbrt", Arity: 1, Flags: ewt},
	OpCeil:                   {Name: "ceil", Arity: 1, Flags: ew},
	OpCholesky:               {Name: "cholesky", Arity: 1, Attrs: attrs("lower")},
	OpClamp:                  {Name: "clamp", Arity: 3, Flags: ew},
	OpClz:                    {Name: "count-leading-zeros", Arity: 1, Flags: ew},
	OpCollectiveBroadcast:    {Name: "collective-broadcast", Arity: Variadic, Attrs: attrs("channel_id", "replica_groups"), Flags: Collective},
	OpCollectivePermute:      {Name: "collective-permute", Arity: Variadic, Attrs: permuteAttrs, Flags: Collective},
	OpCollectivePermuteDone:  {Name: "collective-permute-done", Arity: 1, Flags: Collective | Async},
	OpCollectivePermuteStart: {Name: "collective-permute-start", Arity: Variadic, Attrs: permuteAttrs, Flags: Collective | Async},
	OpCollectiveReduce:       {Name: "collective-reduce", Arity: Variadic, Attrs: attrs("channel_id", "replica_groups", "has_dynamic_root", "to_apply"), Flags: Collective},
	OpCompare:                {Name: "compare", Arity: 2, Attrs: attrs("direction", "type"), Flags: ew},
	OpComplex:                {Name: "complex", Arity: 2, Flags: ew},
	OpConcatenate:            {Name: "concatenate", Arity: Variadic, Attrs: attrs("dimensions")},
	OpConditional:            {Name: "conditional", Arity: Variadic, Attrs: attrs("true_computation", "false_computation", "branch_computations")},
	OpConstant:               {Name: "constant", Arity: 0},
	OpConvert:                {Name: "convert", Arity: 1, Flags: ew},
	OpConvolution:            {Name: "convolution", Arity: Variadic, Attrs: convAttrs},
	OpCopy:                   {Name: "copy", Arity: 1},
	OpCopyDone:               {Name: "copy-done", Arity: 1, Flags: Async},
	OpCopyStart:              {Name: "copy-start", Arity: 1, Attrs: attrs("cross_program_prefetch_index"), Flags: Async},
	OpCos:                    {Name: "cosine", Arity: 1, Flags: ewt},
	OpCosh:                   {Name: "cosh", Arity: 1, Flags: ewt},
	OpCustomCall: {Name: "custom-call", Arity: Variadic, Attrs: attrs("window", "dim_labels", "feature_group_count", "batch_group_count", "operand_precision",
		"custom_call_target", "operand_layout_constraints", "custom_call_has_side_effect", "literal", "output_to_operand_aliasing",
		"schedule", "api_version", "to_apply", "called_computations"), Flags: SideEffecting},
	OpDivide:               {Name: "divide", Arity: 2, Flags: ew},
	OpDomain:               {Name: "domain", Arity: 1, Attrs: attrs("domain")},
	OpDot:                  {Name: "dot", Arity: 2, Attrs: dotAttrs},
	OpDynamicReshape:       {Name: "dynamic-reshape", Arity: Variadic},
	OpDynamicSlice:         {Name: "dynamic-slice", Arity: Variadic, Attrs: attrs("dynamic_slice_sizes")},
	OpDynamicUpdateSlice:   {Name: "dynamic-update-slice", Arity: Variadic},
	OpErf:                  {Name: "erf", Arity: 1, Flags: ewt},
	OpExp:                  {Name: "exponential", Arity: 1, Flags: ewt},
	OpExpm1:                {Name: "exponential-minus-one", Arity: 1, Flags: ewt},
	OpFft:                  {Name: "fft", Arity: 1, Attrs: attrs("fft_type", "fft_length")},
	OpFloor:                {Name: "floor", Arity: 1, Flags: ew},
	OpFusion:               {Name: "fusion", Arity: Variadic, Attrs: attrs("kind", "output_to_operand_aliasing", "calls")},
	OpGather:               {Name: "gather", Arity: 2, Attrs: attrs("offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims", "index_vector_dim", "slice_sizes", "indices_are_sorted")},
	OpGetDimensionSize:     {Name: "get-dimension-size", Arity: 1, Attrs: attrs("dimensions")},
	OpGetTupleElement:      {Name: "get-tuple-element", Arity: 1, Attrs: attrs("index")},
	OpImag:                 {Name: "imag", Arity: 1, Flags: ew},
	OpInfeed:               {Name: "infeed", Arity: 1, Attrs: attrs("infeed_config"), Flags: SideEffecting},
	OpIota:                 {Name: "iota", Arity: 0, Attrs: attrs("iota_dimension")},
	OpIsFinite:             {Name: "is-finite", Arity: 1, Flags: ew},
	OpLog:                  {Name: "log", Arity: 1, Flags: ewt},
	OpLog1p:                {Name: "log-plus-one", Arity: 1, Flags: ewt},
	OpLogistic:             {Name: "logistic", Arity: 1, Flags: ewt},
	OpMap:                  {Name: "map", Arity: Variadic, Attrs: attrs("dimensions", "to_apply")},
	OpMaximum:              {Name: "maximum", Arity: 2, Flags: ewc},
	OpMinimum:              {Name: "minimum", Arity: 2, Flags: ewc},
	OpMulhi:                {Name: "mulhi", Arity: 2, Flags: ewc},
	OpMultiply:             {Name: "multiply", Arity: 2, Flags: ewc},
	OpNegate:               {Name: "negate", Arity: 1, Flags: ew},
	OpNot:                  {Name: "not", Arity: 1, Flags: ew},
	OpOptimizationBarrier:  {Name: "opt-barrier", Arity: 1},
	OpOr:                   {Name: "or", Arity: 2, Flags: ewc},
	OpOutfeed:              {Name: "outfeed", Arity: 2, Attrs: attrs("outfeed_shape", "outfeed_config"), Flags: SideEffecting},
	OpPad:                  {Name: "pad", Arity: 2, Attrs: attrs("padding")},
	OpParameter:            {Name: "parameter", Arity: 0, Attrs: attrs("parameter_replication")},
	OpPartitionID:          {Name: "partition-id", Arity: 0},
	OpPopulationCount:      {Name: "popcnt", Arity: 1, Flags: ew},
	OpPower:                {Name: "power", Arity: 2, Flags: ew},
	OpRaggedAllToAll:       {Name: "ragged-all-to-all", Arity: 6, Attrs: attrs("channel_id", "replica_groups"), Flags: Collective},
	OpRaggedDot:            {Name: "ragged-dot", Arity: 3, Attrs: dotAttrs},
	OpReal:                 {Name: "real", Arity: 1, Flags: ew},
	OpRecv:                 {Name: "recv", Arity: 1, Attrs: sendRecvAttrs, Flags: SideEffecting},
	OpRecvDone:             {Name: "recv-done", Arity: 1, Attrs: sendRecvAttrs, Flags: SideEffecting},
	OpReduce:               {Name: "reduce", Arity: Variadic, Attrs: attrs("dimensions", "to_apply")},
	OpReducePrecision:      {Name: "reduce-precision", Arity: 1, Attrs: attrs("exponent_bits", "mantissa_bits"), Flags: ew},
	OpReduceScatter:        {Name: "reduce-scatter", Arity: Variadic, Attrs: attrs("channel_id", "replica_groups", "constrain_layout", "dimensions", "use_global_device_ids", "to_apply"), Flags: Collective},
	OpReduceWindow:         {Name: "reduce-window", Arity: Variadic, Attrs: attrs("window", "to_apply")},
	OpRemainder:            {Name: "remainder", Arity: 2, Flags: ew},
	OpReplicaID:            {Name: "replica-id", Arity: 0},
	OpReshape:              {Name: "reshape", Arity: 1, Attrs: attrs("inferred_dimension")},
	OpReverse:              {Name: "reverse", Arity: 1, Attrs: attrs("dimensions")},
	OpRng:                  {Name: "rng", Arity: Variadic, Attrs: attrs("distribution"), Flags: SideEffecting},
	OpRngBitGenerator:      {Name: "rng-bit-generator", Arity: 1, Attrs: attrs("algorithm")},
	OpRngGetAndUpdateState: {Name: "rng-get-and-update-state", Arity: 0, Attrs: attrs("delta"), Flags: SideEffecting},
	OpRoundNearestAfz:      {Name: "round-nearest-afz", Arity: 1, Flags: ew},
	OpRoundNearestEven:     {Name: "round-nearest-even", Arity: 1, Flags: ew},
	OpRsqrt:                {Name: "rsqrt", Arity: 1, Flags: ewt},
	OpScaledDot:            {Name: "scaled-dot", Arity: 4, Attrs: dotAttrs},
	OpScan:                 {Name: "scan", Arity: Variadic, Attrs: attrs("dimensions", "num_carries", "is_reverse", "is_associative", "to_apply")},
	OpScatter: {Name: "scatter", Arity: Variadic, Attrs: attrs("update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
		"input_batching_dims", "scatter_indices_batching_dims", "index_vector_dim", "indices_are_sorted", "unique_indices", "to_apply")},
	OpSelect:               {Name: "select", Arity: 3, Flags: ew},
	OpSelectAndScatter:     {Name: "select-and-scatter", Arity: 3, Attrs: attrs("window", "select", "scatter")},
	OpSend:                 {Name: "send", Arity: 2, Attrs: sendRecvAttrs, Flags: SideEffecting},
	OpSendDone:             {Name: "send-done", Arity: 1, Attrs: sendRecvAttrs, Flags: SideEffecting},
	OpSetDimensionSize:     {Name: "set-dimension-size", Arity: 2, Attrs: attrs("dimensions")},
	OpShiftLeft:            {Name: "shift-left", Arity: 2, Flags: ew},
	OpShiftRightArithmetic: {Name: "shift-right-arithmetic", Arity: 2, Flags: ew},
	OpShiftRightLogical:    {Name: "shift-right-logical", Arity: 2, Flags: ew},
	OpShuffle:              {Name: "shuffle", Arity: 1},
	OpSign:                 {Name: "sign", Arity: 1, Flags: ew},
	OpSin:                  {Name: "sine", Arity: 1, Flags: ewt},
	OpSinh:                 {Name: "sinh", Arity: 1, Flags: ewt},
	OpSlice:                {Name: "slice", Arity: 1, Attrs: attrs("slice")},
	OpSort:                 {Name: "sort", Arity: Variadic, Attrs: attrs("dimensions", "is_stable", "to_apply")},
	OpSqrt:                 {Name: "sqrt", Arity: 1, Flags: ewt},
	OpStochasticConvert:    {Name: "stochastic-convert", Arity: 2, Flags: ew},
	OpSubtract:             {Name: "subtract", Arity: 2, Flags: ew},
	OpTan:                  {Name: "tan", Arity: 1, Flags: ewt},
	OpTanh:                 {Name: "tanh", Arity: 1, Flags: ewt},
	OpTopK:                 {Name: "topk", Arity: 1, Attrs: attrs("k", "largest", "to_apply")},
	OpTranspose:            {Name: "transpose", Arity: 1, Attrs: attrs("dimensions")},
	OpTriangularSolve:      {Name: "triangular-solve", Arity: 2, Attrs: attrs("left_side", "lower", "unit_diagonal", "transpose_a")},
	OpTuple:                {Name: "tuple", Arity: Variadic},
	OpWhile:                {Name: "while", Arity: 1, Attrs: attrs("condition", "body")},
	OpXor:                  {Name: "xor", Arity: 2, Flags: ewc},
}

// GenericAttrs are the attributes every instruction may carry, in the order
// XLA prints them after the opcode's own attributes.
var GenericAttrs = []string{"sharding", "frontend_attributes", "control-predecessors", "metadata", "backend_config", "origin", "original_value", "statistics", "result_accuracy"}

var opByName = func() map[string]Opcode {
	m := make(map[string]Opcode, numOpcodes)
	for op := OpInvalid + 1; op < numOpcodes; op++ {
		m[opTable[op].Name] = op
	}
	return m
}()

func init() {
	// Every opcode must have a row: a missing row would print as "" and
	// parse as nothing.
	for op := OpInvalid + 1; op < numOpcodes; op++ {
		if opTable[op].Name == "" {
			panic(fmt.Sprintf("hlo: opcode %d has no row in opTable", op))
		}
	}
}

// OpcodeByName looks up an opcode by its HLO text name.
func OpcodeByName(name string) (Opcode, bool) {
	op, ok := opByName[name]
	return op, ok
}

// NumOpcodes is the number of valid opcodes plus one (OpInvalid is 0).
func NumOpcodes() int { return int(numOpcodes) }

// Info returns the opcode's table row.
func (op Opcode) Info() *OpInfo { return &opTable[op] }

func (op Opcode) String() string {
	if op < numOpcodes {
		return opTable[op].Name
	}
	return fmt.Sprintf("opcode(%d)", uint8(op))
}

// Has reports whether op has all the given flags.
func (op Opcode) Has(f OpFlags) bool { return opTable[op].Flags&f == f }

// IsElementwise reports whether op is an elementwise operation.
func (op Opcode) IsElementwise() bool { return op.Has(Elementwise) }

// AcceptsAttr reports whether op takes attribute name, counting the generic ones.
func (op Opcode) AcceptsAttr(name string) bool {
	for _, a := range opTable[op].Attrs {
		if a == name {
			return true
		}
	}
	if name == "result_accuracy" {
		return op.Has(Transcendental)
	}
	for _, a := range GenericAttrs {
		if a == name {
			return true
		}
	}
	return false
}
