package hlo

import (
	"errors"
	"fmt"
	"slices"
)

// Per-instruction checks of the verifier: XLA's ShapeVerifier (declared
// shape against inferred shape) and InstructionVerifier (invariants shape
// inference does not cover).

func (v *verifier) checkInstruction(c *Computation, in *Instruction) {
	if n := in.Opcode.Info().Arity; n != Variadic && n != len(in.Operands) {
		v.instrErr(c, in, "expected %d operands for %s instruction, has %d", n, in.Opcode, len(in.Operands))
		return
	}
	if !v.opts.AllowUnboundedDynamism && in.Shape.IsUnbounded() {
		v.instrErr(c, in, "unbounded dynamism is disabled for instruction shape %s", in.Shape.HumanString())
		return
	}
	for _, cc := range in.CalledComputations() {
		if cc == nil || !v.comps[cc] {
			v.instrErr(c, in, "calls a computation that is not in the module")
			return
		}
	}
	if err := v.checkThreads(c, in); err != nil {
		v.instrErr(c, in, "%v", err)
	}
	if v.opts.NoMixedPrecision {
		if err := checkMixedPrecision(in); err != nil {
			v.instrErr(c, in, "%v", err)
			return
		}
	}
	if err := v.checkShape(in); err != nil {
		v.instrErr(c, in, "%v", err)
		return
	}
	for _, check := range []func(*Instruction) error{
		checkNoImplicitBroadcast, checkCompareType, checkReplicaGroups, checkChannelID, checkSourceTargetPairs, v.checkAsyncPairs,
	} {
		if err := check(in); err != nil {
			v.instrErr(c, in, "%v", err)
		}
	}
}

// validShape is XLA's ValidateShape plus the verifier's layout rank check.
func validShape(s Shape) error {
	switch {
	case s.IsTuple():
		for i, e := range s.Tuple {
			if err := validShape(e); err != nil {
				return fmt.Errorf("tuple element %d: %w", i, err)
			}
		}
		return nil
	case s.DType == Buffer:
		if len(s.Tuple) != 1 {
			return errors.New("a buffer shape holds one array shape")
		}
		return validShape(s.Tuple[0])
	case s.IsToken() || s.DType == Opaque:
		return nil
	case !s.IsArray():
		return fmt.Errorf("invalid element type %s", s.DType)
	}
	for i, d := range s.Dims {
		if d < 0 && d != Unbounded {
			return fmt.Errorf("dimension %d has negative size %d", i, d)
		}
		if d == Unbounded && !s.IsDynamicDim(i) {
			return fmt.Errorf("unbounded dimension %d is not marked dynamic", i)
		}
	}
	if s.Dynamic != nil && len(s.Dynamic) != len(s.Dims) {
		return fmt.Errorf("%d dynamic flags for %d dimensions", len(s.Dynamic), len(s.Dims))
	}
	if _, err := s.ByteSize(); err != nil {
		return err
	}
	return validLayout(s)
}

// validLayout is XLA's LayoutUtil::ValidateLayoutInShape for the part of
// a layout Axle reads: minor_to_major is a permutation of the dimensions
// (backends index strides by it).
func validLayout(s Shape) error {
	if s.Layout == nil {
		return nil
	}
	m2m := s.Layout.MinorToMajor
	if len(m2m) != len(s.Dims) && !(len(s.Dims) == 0 && len(m2m) == 0) {
		return fmt.Errorf("mismatched minor-to-major size %d and dimension size %d", len(m2m), len(s.Dims))
	}
	seen := make([]bool, len(s.Dims))
	for _, d := range m2m {
		if d < 0 || d >= int64(len(s.Dims)) {
			return fmt.Errorf("layout minor_to_major field has out-of-bounds value: %d", d)
		}
		if seen[d] {
			return fmt.Errorf("layout minor_to_major field has duplicate values: %d", d)
		}
		seen[d] = true
	}
	return nil
}

// exactShapeOps only reinterpret or route data, so XLA's verifier compares
// their element types exactly even when precisions may mix.
var exactShapeOps = map[Opcode]bool{
	OpBitcast: true, OpCall: true, OpConditional: true, OpConstant: true, OpCopyDone: true, OpCopyStart: true,
	OpCustomCall: true, OpDynamicUpdateSlice: true, OpGetTupleElement: true, OpInfeed: true, OpOutfeed: true,
	OpOptimizationBarrier: true, OpParameter: true, OpRecv: true, OpRecvDone: true, OpSend: true,
	OpSendDone: true, OpTuple: true, OpWhile: true,
}

// checkShape compares the written shape with the inferred one.
func (v *verifier) checkShape(in *Instruction) error {
	want, err := InferShape(in)
	if errors.Is(err, ErrCannotInfer) {
		return nil
	}
	if err != nil {
		return err
	}
	mode := ignoreFPPrecision
	if v.opts.NoMixedPrecision || exactShapeOps[in.Opcode] {
		mode = exactTypes
	}
	if !compatibleShapes(in.Shape, want, mode) {
		return fmt.Errorf("expected instruction to have shape equal to %s, actual shape is %s", want.HumanString(), in.Shape.HumanString())
	}
	return nil
}

// checkNoImplicitBroadcast: HLO's elementwise unary and binary ops take
// operands of the result's dimensions (shape inference would accept a
// scalar or size-1 dimensions).
func checkNoImplicitBroadcast(in *Instruction) error {
	if !(in.Opcode.IsElementwise() || in.Opcode == OpCopy) || in.Opcode == OpClamp || in.Opcode == OpSelect || in.Opcode == OpBitcastConvert {
		return nil
	}
	for _, o := range in.Operands {
		if !compatibleShapes(o.Shape, in.Shape, ignoreElemType) {
			return fmt.Errorf("implicit broadcast is not allowed in HLO; found different shapes for instruction %s: output %s, operand %s",
				in.Opcode, in.Shape.HumanString(), o.Shape.HumanString())
		}
	}
	return nil
}

// checkCompareType: a written comparison type must suit the operands:
// FLOAT or TOTALORDER for floats, else the type's default.
func checkCompareType(in *Instruction) error {
	if in.Opcode != OpCompare || len(in.Operands) != 2 {
		return nil
	}
	typ, ok := in.EnumAttr("type")
	if !ok {
		return nil
	}
	t := in.Operands[1].Shape.DType
	if t.IsFloat() {
		if typ != "FLOAT" && typ != "TOTALORDER" {
			return fmt.Errorf("expected comparison type FLOAT or TOTALORDER, actual: %s, operand: %s", typ, in.Operands[1].Shape.HumanString())
		}
		return nil
	}
	want := Enum("UNSIGNED")
	switch {
	case t.IsComplex():
		want = "FLOAT"
	case t.IsSigned():
		want = "SIGNED"
	}
	if typ != want {
		return fmt.Errorf("expected comparison type %s, actual: %s, operand: %s", want, typ, in.Operands[1].Shape.HumanString())
	}
	return nil
}

// checkReplicaGroups is XLA's CheckReplicaGroups: groups are non-empty,
// name each participant 0..n-1 once, n is the participant count of the
// group mode, and (except for all-reduce) groups have one size.
func checkReplicaGroups(in *Instruction) error {
	switch in.Opcode {
	case OpAllReduce, OpAllReduceStart, OpAllGather, OpAllGatherStart, OpReduceScatter, OpAllToAll, OpRaggedAllToAll:
	default:
		return nil
	}
	mode, err := collectiveMode(in)
	if err != nil {
		return err
	}
	groups, _, present := replicaGroups(in)
	if !present && mode == FlattenedID {
		return errors.New("replica groups must be specified in flattened-id mode")
	}
	if len(groups) == 0 {
		return nil
	}
	seen := map[int64]bool{}
	for _, g := range groups {
		if len(g) == 0 {
			return errors.New("instruction cannot have an empty replica group")
		}
		for _, id := range g {
			if seen[id] {
				return fmt.Errorf("replica %d is repeated in instruction's replica-groups", id)
			}
			seen[id] = true
		}
	}
	n := int64(len(seen))
	for i := range n {
		if !seen[i] {
			return fmt.Errorf("replica %d is not named in instruction's replica-groups", i)
		}
	}
	if m := moduleOf(in); m != nil {
		replicas, partitions := max(m.ReplicaCount, 1), max(m.NumPartitions, 1)
		want, what := replicas, "replicas"
		switch mode {
		case CrossPartition:
			want, what = partitions, "partitions"
		case FlattenedID:
			want, what = replicas*partitions, "flattened IDs"
		}
		if want != 1 && n != want {
			return fmt.Errorf("replica groups should contain %d %s, but found %d", want, what, n)
		}
	}
	if in.Opcode != OpAllReduce && in.Opcode != OpAllReduceStart {
		for _, g := range groups {
			if len(g) != len(groups[0]) {
				return errors.New("replica groups expected to be of uniform size")
			}
		}
	}
	return nil
}

// checkChannelID: an all-reduce's channel_id, when present, is positive.
func checkChannelID(in *Instruction) error {
	if in.Opcode != OpAllReduce {
		return nil
	}
	if id, ok := in.Int("channel_id"); ok && id <= 0 {
		return fmt.Errorf("all reduce channel id must be greater than 0, got %d", id)
	}
	return nil
}

// checkSourceTargetPairs is XLA's CheckDuplicatedSourceOrTarget for the
// plain (not in-place) collective-permute: each device sends at most once
// and receives at most once, and ids are in range of the participants
// (replicas without a channel, partitions with one).
func checkSourceTargetPairs(in *Instruction) error {
	if (in.Opcode != OpCollectivePermute && in.Opcode != OpCollectivePermuteStart) || in.HasAttr("slice_sizes") {
		return nil
	}
	v, _ := in.Attr("source_target_pairs")
	pairs, _ := v.([][]int64)
	limit := int64(0)
	if m := moduleOf(in); m != nil {
		limit = max(m.ReplicaCount, 1)
		if _, channel := in.Int("channel_id"); channel {
			limit = max(m.NumPartitions, 1)
		}
	}
	sources, targets := map[int64]bool{}, map[int64]bool{}
	for _, p := range pairs {
		if len(p) != 2 {
			return fmt.Errorf("source-target pair {%s} does not have two elements", joinInts(p))
		}
		for i, id := range p {
			what := []string{"source", "target"}[i]
			if id < 0 || (limit > 1 && id >= limit) {
				return fmt.Errorf("%s %d in the instruction's source-target pair must be in [0, %d)", what, id, limit)
			}
		}
		if sources[p[0]] {
			return fmt.Errorf("source %d appears more than once in instruction's source-target pairs", p[0])
		}
		if targets[p[1]] {
			return fmt.Errorf("target %d appears more than once in instruction's source-target pairs", p[1])
		}
		sources[p[0]], targets[p[1]] = true, true
	}
	return nil
}

// asyncPairs lists, for the start and done halves of asynchronous pairs,
// which opcodes their single user (for starts) or operand (for dones) may
// have.
var (
	asyncUsers = map[Opcode][]Opcode{
		OpAsyncStart:             {OpAsyncUpdate, OpAsyncDone},
		OpAsyncUpdate:            {OpAsyncUpdate, OpAsyncDone},
		OpAllReduceStart:         {OpAllReduceDone},
		OpCopyStart:              {OpCopyDone},
		OpCollectivePermuteStart: {OpCollectivePermuteDone},
		OpSend:                   {OpSendDone, OpTuple},
		OpRecv:                   {OpRecvDone, OpTuple},
	}
	asyncOperands = map[Opcode][]Opcode{
		OpAsyncUpdate:           {OpAsyncStart, OpAsyncUpdate},
		OpAsyncDone:             {OpAsyncStart, OpAsyncUpdate},
		OpAllReduceDone:         {OpAllReduceStart},
		OpCopyDone:              {OpCopyStart},
		OpCollectivePermuteDone: {OpCollectivePermuteStart},
		OpSendDone:              {OpSend, OpGetTupleElement},
		OpRecvDone:              {OpRecv, OpGetTupleElement},
	}
)

// checkAsyncPairs is XLA's VerifyAsynchronousInstructionPairs.
func (v *verifier) checkAsyncPairs(in *Instruction) error {
	if want, ok := asyncOperands[in.Opcode]; ok {
		if len(in.Operands) != 1 || !slices.Contains(want, in.Operands[0].Opcode) {
			return fmt.Errorf("the operand of a %s instruction needs to be one of %v", in.Opcode, want)
		}
	}
	want, ok := asyncUsers[in.Opcode]
	if !ok {
		return nil
	}
	// A send or recv wrapped in an async computation has no users.
	if (in.Opcode == OpSend || in.Opcode == OpRecv) && in.IsRoot() && v.asyncOf[in.Parent] != nil {
		return nil
	}
	users := v.users[in]
	if len(users) != 1 {
		return fmt.Errorf("the %s instruction requires one consumer, found %d", in.Opcode, len(users))
	}
	if !slices.Contains(want, users[0].Opcode) {
		return fmt.Errorf("the consumer of a %s instruction needs to be one of %v, found %s", in.Opcode, want, users[0].Opcode)
	}
	return nil
}

func threadOf(c *Computation) string {
	if c.ExecutionThread == "" {
		return "main"
	}
	return c.ExecutionThread
}

// checkThreads: computations an instruction calls run on its computation's
// thread, except the computation an async op wraps, which runs on the
// op's async_execution_thread.
func (v *verifier) checkThreads(c *Computation, in *Instruction) error {
	if in.Opcode == OpAsyncStart || in.Opcode == OpAsyncUpdate || in.Opcode == OpAsyncDone {
		// The thread belongs to the whole start/update/done chain; the
		// parser checks that update and done agree with their start.
		w := in.Computation("calls")
		if w == nil || in.Opcode != OpAsyncStart {
			return nil
		}
		t, ok := in.StringAttr("async_execution_thread")
		if !ok {
			t = "main"
		}
		if t != threadOf(w) {
			return fmt.Errorf("%s expects same async thread name as wrapped computation's thread name (%s vs %s)", in.Opcode, t, threadOf(w))
		}
		return nil
	}
	for _, cc := range in.CalledComputations() {
		if threadOf(cc) != threadOf(c) {
			return fmt.Errorf("callable instruction expects parent computation thread name same as called computation's thread name (%s vs %s)", threadOf(c), threadOf(cc))
		}
	}
	return nil
}

// mixedPrecisionOK are the opcodes XLA lets mix floating-point precisions
// among operands even when mixed precision is disallowed: they pass data
// through, group it, or accumulate in a wider type.
var mixedPrecisionOK = map[Opcode]bool{
	OpCall: true, OpConditional: true, OpConstant: true, OpConvolution: true, OpDot: true,
	OpAllReduce: true, OpAllReduceStart: true, OpAllReduceDone: true, OpAllGather: true, OpAllGatherStart: true,
	OpAllGatherDone: true, OpAsyncDone: true, OpAsyncUpdate: true, OpAsyncStart: true, OpCopyDone: true,
	OpCopyStart: true, OpCustomCall: true, OpDomain: true, OpFusion: true, OpGetTupleElement: true,
	OpOptimizationBarrier: true, OpInfeed: true, OpOutfeed: true, OpParameter: true, OpRecv: true,
	OpRecvDone: true, OpReducePrecision: true, OpReduceWindow: true, OpSend: true, OpSendDone: true,
	OpSort: true, OpTuple: true, OpWhile: true,
}

func checkMixedPrecision(in *Instruction) error {
	if mixedPrecisionOK[in.Opcode] {
		return nil
	}
	var fp DType
	for _, o := range in.Operands {
		var err error
		o.Shape.Leaves(func(_ []int, s Shape) {
			if err != nil || !s.DType.IsFloat() {
				return
			}
			if fp == Invalid {
				fp = s.DType
			} else if fp != s.DType {
				err = fmt.Errorf("seen floating point types of different precisions in %s, but mixed precision is disallowed", in.Opcode)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkAllReduceLayouts: all-reduces are either all layout-constrained or
// none is (XLA's VerifyLayoutConstrainedAllReduce).
func (v *verifier) checkAllReduceLayouts() {
	var first *Instruction
	for _, c := range v.m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode != OpAllReduce && in.Opcode != OpAllReduceStart {
				continue
			}
			if first == nil {
				first = in
			} else if in.Bool("constrain_layout") != first.Bool("constrain_layout") {
				v.instrErr(c, in, "the module has a mix of layout constrained and unconstrained all-reduce instructions (see %s)", first.Name)
				return
			}
		}
	}
}

// checkCalledComputation applies the checks specific to fused and
// async-wrapped computations.
func (v *verifier) checkCalledComputation(c *Computation) {
	if c == v.m.Entry && v.fusionOf[c] != nil {
		v.compErr(c, "module entry computation cannot be a fusion computation")
	}
	if f := v.fusionOf[c]; f != nil && c.Root != nil {
		if v.used[c.Root] {
			v.instrErr(c, c.Root, "the root of fused computation %s (called by %s) may not have users", c.Name, f.Name)
		}
		for _, in := range c.Instructions {
			if in != c.Root && !v.used[in] {
				v.instrErr(c, in, "non-root instruction in fused computation %s (called by %s) must have users", c.Name, f.Name)
			}
		}
	}
	if a := v.asyncOf[c]; a != nil && c.Root != nil {
		onlySendRecv := true
		for _, in := range c.Instructions {
			switch in.Opcode {
			case OpSend, OpRecv, OpSendDone, OpRecvDone, OpParameter, OpTuple, OpGetTupleElement:
			default:
				onlySendRecv = false
			}
		}
		if onlySendRecv {
			return
		}
		for _, in := range c.Instructions {
			if in != c.Root && in.Opcode != OpParameter {
				v.compErr(c, "asynchronous computation (called by %s) expected to contain only the root and parameter instructions; found %s", a.Name, in.Name)
				return
			}
		}
	}
}
