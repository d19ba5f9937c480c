package hlo

import (
	"errors"
	"fmt"
	"slices"
)

// Shape rules of ops that call a scalar computation over their operands:
// reduce, reduce-window, select-and-scatter, sort, top-k, and the indexed
// gather and scatter.

var reductionRules = map[Opcode]inferRule{
	OpReduce:           inferReduce,
	OpReduceWindow:     inferReduceWindow,
	OpSelectAndScatter: inferSelectAndScatter,
	OpSort:             inferSort,
	OpTopK:             inferTopK,
	OpGather:           inferGather,
	OpScatter:          inferScatter,
	OpScan:             cannotInfer,
}

// checkReducer is XLA's VerifyReducerShape: a reducer of n inputs takes n
// accumulators then n input elements, all scalars, and returns the n
// accumulators (a scalar when n is 1, else a tuple).
func checkReducer(fn ProgramShape, inits []Shape, inputTypes []DType) error {
	n := len(inputTypes)
	if len(fn.Params) != 2*n {
		return fmt.Errorf("reduction function must take %d parameters, but takes %d parameter(s)", 2*n, len(fn.Params))
	}
	var acc []Shape
	switch r := fn.Result; {
	case r.IsArray():
		if n != 1 {
			return fmt.Errorf("reduction function must produce a tuple with %d elements, but produces a scalar", n)
		}
		acc = []Shape{r}
	case r.IsTuple():
		if len(r.Tuple) != n {
			return fmt.Errorf("reduction function must produce a tuple with %d elements, but has %d elements", n, len(r.Tuple))
		}
		acc = r.Tuple
	default:
		return fmt.Errorf("reduction function must produce a scalar or tuple of scalars, but has shape: %s", r.HumanString())
	}
	for _, a := range acc {
		if !a.IsScalar() {
			return fmt.Errorf("reduction function must return a scalar or tuple of scalars but returns shape: %s", fn.Result.HumanString())
		}
	}
	for i := range n {
		if !compatibleShapes(acc[i], fn.Params[i], exactTypes) {
			return fmt.Errorf("reduction function's %d-th parameter shape differs from the result shape: %s vs %s", i, fn.Params[i].HumanString(), acc[i].HumanString())
		}
		if !compatibleShapes(acc[i], inits[i], ignoreFPPrecision) {
			return fmt.Errorf("reduction function's accumulator shape at index %d differs from the init_value shape: %s vs %s", i, acc[i].HumanString(), inits[i].HumanString())
		}
		elem := ScalarShape(inputTypes[i])
		if !compatibleShapes(elem, fn.Params[n+i], ignoreFPPrecision) {
			return fmt.Errorf("reduction function's %d-th parameter shape differs from the input type element type: %s vs %s", n+i, fn.Params[n+i].HumanString(), elem.HumanString())
		}
		if !compatibleShapes(acc[i], fn.Params[n+i], ignoreFPPrecision) {
			return fmt.Errorf("reduction function's %d-th parameter shape must match the result shape, but got %s vs %s", n+i, fn.Params[n+i].HumanString(), acc[i].HumanString())
		}
	}
	return nil
}

// reducerResult shapes the result of a reduction: one array per
// accumulator with the given dimensions, a tuple unless there is one.
func reducerResult(fn ProgramShape, dims []int64, dyn []bool) Shape {
	if !fn.Result.IsTuple() {
		return makeArray(fn.Result.DType, dims, dyn)
	}
	elems := make([]Shape, len(fn.Result.Tuple))
	for i, e := range fn.Result.Tuple {
		elems[i] = makeArray(e.DType, dims, dyn)
	}
	return TupleShape(elems...)
}

// splitInputs splits the operands of a variadic reduction into inputs and
// init values, checking that they are arrays and the inputs agree in
// dimensions.
func splitInputs(ops []Shape) (inputs, inits []Shape, types []DType, err error) {
	if len(ops) == 0 || len(ops)%2 != 0 {
		return nil, nil, nil, fmt.Errorf("expects an even, non-zero number of operands (inputs then init values), has %d", len(ops))
	}
	n := len(ops) / 2
	inputs, inits = ops[:n], ops[n:]
	for i, s := range ops {
		if err := expectArray(s, fmt.Sprintf("operand %d", i)); err != nil {
			return nil, nil, nil, err
		}
	}
	for i, s := range inputs {
		if !dimsMatch(s.Dims, inputs[0].Dims) {
			return nil, nil, nil, fmt.Errorf("all reduced tensors must have the same dimension; tensor 0 has shape %s, tensor %d has shape %s", inputs[0].HumanString(), i, s.HumanString())
		}
		types = append(types, s.DType)
	}
	return inputs, inits, types, nil
}

func inferReduce(in *Instruction, ops []Shape) (Shape, error) {
	inputs, inits, types, err := splitInputs(ops)
	if err != nil {
		return Shape{}, err
	}
	arg := inputs[0]
	dims := in.Dimensions()
	for _, d := range dims {
		if d < 0 || d >= int64(arg.Rank()) {
			return Shape{}, fmt.Errorf("reducing out-of-bounds dimension %d in shape %s", d, arg.HumanString())
		}
	}
	if !allUnique(dims) {
		return Shape{}, fmt.Errorf("duplicate reduction dimension in {%s}", joinInts(dims))
	}
	c, err := calledComputation(in, "to_apply")
	if err != nil {
		return Shape{}, err
	}
	fn := programShape(c)
	if err := checkReducer(fn, inits, types); err != nil {
		return Shape{}, err
	}
	var kept []int64
	var dyn []bool
	for i, d := range arg.Dims {
		if !slices.Contains(dims, int64(i)) {
			kept = append(kept, d)
			dyn = append(dyn, arg.IsDynamicDim(i))
		}
	}
	return reducerResult(fn, kept, dyn), nil
}

func inferReduceWindow(in *Instruction, ops []Shape) (Shape, error) {
	inputs, inits, types, err := splitInputs(ops)
	if err != nil {
		return Shape{}, err
	}
	c, err := calledComputation(in, "to_apply")
	if err != nil {
		return Shape{}, err
	}
	fn := programShape(c)
	if err := checkReducer(fn, inits, types); err != nil {
		return Shape{}, err
	}
	outs := make([]Shape, len(inputs))
	for i, s := range inputs {
		if outs[i], err = windowOutput(s, in.Window(), inits[i].DType); err != nil {
			return Shape{}, err
		}
	}
	if len(outs) == 1 && !fn.Result.IsTuple() {
		return outs[0], nil
	}
	return TupleShape(outs...), nil
}

// inferSelectAndScatter: operands (operand, source, init_value); select
// is (T, T) -> pred, scatter a reducer over the source type, and source has
// the shape of the windowed operand.
func inferSelectAndScatter(in *Instruction, ops []Shape) (Shape, error) {
	x, src, init := ops[0], ops[1], ops[2]
	if err := expectArray(x, "operand of select-and-scatter"); err != nil {
		return Shape{}, err
	}
	sel, err := calledComputation(in, "select")
	if err != nil {
		return Shape{}, err
	}
	sc, err := calledComputation(in, "scatter")
	if err != nil {
		return Shape{}, err
	}
	selFn := programShape(sel)
	if len(selFn.Params) != 2 {
		return Shape{}, fmt.Errorf("select function must take 2 parameters, but takes %d parameter(s)", len(selFn.Params))
	}
	if !compatibleShapes(selFn.Result, ScalarShape(Pred), exactTypes) {
		return Shape{}, errors.New("select function must have rank-0 pred result")
	}
	elem := ScalarShape(x.DType)
	for i, p := range selFn.Params {
		if !compatibleShapes(elem, p, ignoreFPPrecision) {
			return Shape{}, fmt.Errorf("select function's parameter %d shape currently must match the operand element shape, but got %s vs %s", i, p.HumanString(), elem.HumanString())
		}
	}
	if err := checkReducer(programShape(sc), []Shape{init}, []DType{src.DType}); err != nil {
		return Shape{}, err
	}
	win, err := windowOutput(x, in.Window(), x.DType)
	if err != nil {
		return Shape{}, err
	}
	if !compatibleShapes(src, win, ignoreFPPrecision) {
		return Shape{}, fmt.Errorf("source shape does not match the shape of window-reduced operand: source(%s), window-reduced operand(%s)", src.HumanString(), win.HumanString())
	}
	return withDefaultLayout(x.Clone()), nil
}

func inferSort(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("expected at least 1 operand")
	}
	for i, s := range ops {
		if err := expectArray(s, fmt.Sprintf("operand %d of sort", i)); err != nil {
			return Shape{}, err
		}
		if !dimsMatch(s.Dims, ops[0].Dims) {
			return Shape{}, fmt.Errorf("sort keys and values dimensions must match; keys shape is: %s, values shape (operand index %d) is: %s", ops[0].HumanString(), i, s.HumanString())
		}
	}
	dim, err := oneDimension(in)
	if err != nil {
		return Shape{}, err
	}
	if dim < 0 || dim >= int64(ops[0].Rank()) {
		return Shape{}, fmt.Errorf("expected the sort_dimension %d of sort to be smaller than the rank %d of the operand(s)", dim, ops[0].Rank())
	}
	c, err := calledComputation(in, "to_apply")
	if err != nil {
		return Shape{}, err
	}
	if err := checkComparator(programShape(c), ops); err != nil {
		return Shape{}, err
	}
	if len(ops) == 1 {
		return withDefaultLayout(ops[0].Clone()), nil
	}
	elems := make([]Shape, len(ops))
	for i, s := range ops {
		elems[i] = withDefaultLayout(s.Clone())
	}
	return TupleShape(elems...), nil
}

// checkComparator checks a sort comparator: two scalars per operand, of the
// operand's element type, to pred[].
func checkComparator(fn ProgramShape, ops []Shape) error {
	if !compatibleShapes(fn.Result, ScalarShape(Pred), exactTypes) {
		return fmt.Errorf("the compare computation shape does not lead to a scalar predicate shape: %s", fn.Result.HumanString())
	}
	if len(fn.Params) != 2*len(ops) {
		return fmt.Errorf("expected the compare computation to have %d parameters, has %d", 2*len(ops), len(fn.Params))
	}
	for i, p := range fn.Params {
		want := ScalarShape(ops[i/2].DType)
		if !compatibleShapes(want, p, ignoreFPPrecision) {
			return fmt.Errorf("expected the %d-th parameter of the compare computation to have shape %s, but got %s", i, want.HumanString(), p.HumanString())
		}
	}
	return nil
}

// inferTopK: (values, s32 indices), both with the last dimension cut to k.
func inferTopK(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	if err := expectArray(x, "operand of top-k operation"); err != nil {
		return Shape{}, err
	}
	k, ok := in.Int("k")
	if !ok {
		return Shape{}, errors.New("needs k")
	}
	last := x.Rank() - 1
	if last < 0 {
		return Shape{}, fmt.Errorf("the operand of top-k must have rank >= 1, got %s", x.HumanString())
	}
	if k < 0 || (x.Dims[last] != Unbounded && k > x.Dims[last]) {
		return Shape{}, fmt.Errorf("k=%d is out of range for the last dimension of %s", k, x.HumanString())
	}
	if c := in.Computation("to_apply"); c != nil && c.Root != nil {
		if err := checkComparator(programShape(c), ops); err != nil {
			return Shape{}, err
		}
	}
	dims := slices.Clone(x.Dims)
	dims[last] = k
	dyn := dynFlags(x)
	dyn[last] = false
	return TupleShape(makeArray(x.DType, dims, dyn), makeArray(S32, dims, dyn)), nil
}

// expandIndices appends the implicit size-1 index vector dimension when
// index_vector_dim is the rank of the indices.
func expandIndices(idx Shape, ivd int64, what string) ([]int64, []bool, error) {
	if !idx.IsArray() || !idx.DType.IsInteger() {
		return nil, nil, fmt.Errorf("%s indices parameter must be an integral tensor; got %s", what, idx.HumanString())
	}
	if ivd < 0 || ivd > int64(idx.Rank()) {
		return nil, nil, fmt.Errorf("%s index leaf dimension must be within [0, rank(indices) + 1); rank(indices) is %d and index leaf dimension is %d", what, idx.Rank(), ivd)
	}
	dims, dyn := slices.Clone(idx.Dims), dynFlags(idx)
	if ivd == int64(idx.Rank()) {
		dims, dyn = append(dims, 1), append(dyn, false)
	}
	return dims, dyn, nil
}

// checkDimSet checks a set of operand dimension numbers: sorted, unique and
// in range.
func checkDimSet(name string, dims []int64, rank int) error {
	if !isSortedStrictly(dims) {
		return fmt.Errorf("%s must be sorted and not repeat; got: %s", name, joinInts(dims))
	}
	if !inRange(dims, rank) {
		return fmt.Errorf("invalid %s; valid range is [0, %d), got: %s", name, rank, joinInts(dims))
	}
	return nil
}

func inferGather(in *Instruction, ops []Shape) (Shape, error) {
	x, idx := ops[0], ops[1]
	if err := expectArray(x, "input tensor operand of gather op"); err != nil {
		return Shape{}, err
	}
	ivd, _ := in.Int("index_vector_dim")
	ext, extDyn, err := expandIndices(idx, ivd, "gather")
	if err != nil {
		return Shape{}, err
	}
	offset := ints(in, "offset_dims")
	collapsed := ints(in, "collapsed_slice_dims")
	startMap := ints(in, "start_index_map")
	batching := ints(in, "operand_batching_dims")
	idxBatching := ints(in, "start_indices_batching_dims")
	sizes := ints(in, "slice_sizes")
	outRank := len(offset) + len(ext) - 1
	if !isSortedStrictly(offset) {
		return Shape{}, fmt.Errorf("output window dimensions in gather op must be ascending and not repeat; got: %s", joinInts(offset))
	}
	if !inRange(offset, outRank) {
		return Shape{}, fmt.Errorf("offset dimensions {%s} in gather op are out of bounds [0,%d)", joinInts(offset), outRank)
	}
	if int64(len(startMap)) != ext[ivd] {
		return Shape{}, fmt.Errorf("gather op has %d elements in start_index_map and the bound of dimension index_vector_dim=%d of start_indices is %d; these two numbers must be equal", len(startMap), ivd, ext[ivd])
	}
	if !inRange(startMap, x.Rank()) || !allUnique(startMap) {
		return Shape{}, fmt.Errorf("invalid start_index_map {%s}: dimensions must be unique and in [0, %d)", joinInts(startMap), x.Rank())
	}
	if err := checkDimSet("collapsed_slice_dims", collapsed, x.Rank()); err != nil {
		return Shape{}, err
	}
	if err := checkDimSet("operand_batching_dims", batching, x.Rank()); err != nil {
		return Shape{}, err
	}
	for _, d := range batching {
		if slices.Contains(collapsed, d) {
			return Shape{}, fmt.Errorf("dimension %d is both in collapsed_slice_dims and operand_batching_dims", d)
		}
	}
	if len(idxBatching) != len(batching) {
		return Shape{}, fmt.Errorf("operand_batching_dims and start_indices_batching_dims must have the same size: %d vs %d", len(batching), len(idxBatching))
	}
	if err := checkIndexBatchingDims("operand_batching_dims", "start_indices_batching_dims", x, idx, ivd, batching, idxBatching); err != nil {
		return Shape{}, err
	}
	if len(sizes) != x.Rank() {
		return Shape{}, fmt.Errorf("gather op must have one slice size for every input dimension; got: len(slice_sizes)=%d, input_shape.rank=%d", len(sizes), x.Rank())
	}
	if len(sizes) != len(offset)+len(collapsed)+len(batching) {
		return Shape{}, fmt.Errorf("all components of the offset index in a gather op must either be a offset dimension or explicitly collapsed/batching; got len(slice_sizes)=%d, offset_dims=%s, collapsed_slice_dims=%s, operand_batching_dims=%s",
			len(sizes), joinInts(offset), joinInts(collapsed), joinInts(batching))
	}
	for i, s := range sizes {
		if s < 0 || (x.Dims[i] != Unbounded && s > x.Dims[i]) {
			return Shape{}, fmt.Errorf("slice size at index %d in gather op is out of range, must be within [0, %d), got %d", i, x.Dims[i]+1, s)
		}
	}
	for _, d := range append(slices.Clone(collapsed), batching...) {
		if sizes[d] > 1 {
			return Shape{}, fmt.Errorf("gather op can only collapse slice dims with bound 1 or 0, but bound is %d for index %d", sizes[d], d)
		}
	}
	dims := make([]int64, outRank)
	dyn := make([]bool, outRank)
	nextOffset, nextBatch := 0, 0
	for i := range dims {
		if slices.Contains(offset, int64(i)) {
			for slices.Contains(collapsed, int64(nextOffset)) || slices.Contains(batching, int64(nextOffset)) {
				nextOffset++
			}
			dims[i] = sizes[nextOffset]
			// Gathering a whole dynamic dimension keeps it dynamic.
			dyn[i] = sizes[nextOffset] == x.Dims[nextOffset] && x.IsDynamicDim(nextOffset)
			nextOffset++
			continue
		}
		if int64(nextBatch) == ivd {
			nextBatch++
		}
		dims[i], dyn[i] = ext[nextBatch], extDyn[nextBatch]
		nextBatch++
	}
	return makeArray(x.DType, dims, dyn), nil
}

func inferScatter(in *Instruction, ops []Shape) (Shape, error) {
	n := len(ops) / 2
	if len(ops) != 2*n+1 || n == 0 {
		return Shape{}, fmt.Errorf("invalid argument count of scatter op: expected an odd number of at least 3, saw %d", len(ops))
	}
	operands, idx, updates := ops[:n], ops[n], ops[n+1:]
	ivd, _ := in.Int("index_vector_dim")
	ext, _, err := expandIndices(idx, ivd, "scatter")
	if err != nil {
		return Shape{}, err
	}
	window := ints(in, "update_window_dims")
	inserted := ints(in, "inserted_window_dims")
	toOperand := ints(in, "scatter_dims_to_operand_dims")
	batching := ints(in, "input_batching_dims")
	idxBatching := ints(in, "scatter_indices_batching_dims")
	inits := make([]Shape, n)
	types := make([]DType, n)
	for i := range n {
		x, u := operands[i], updates[i]
		if err := expectArray(x, fmt.Sprintf("operand %d of scatter op", i)); err != nil {
			return Shape{}, err
		}
		if err := expectArray(u, fmt.Sprintf("updates %d of scatter op", i)); err != nil {
			return Shape{}, err
		}
		if !dimsMatch(x.Dims, operands[0].Dims) {
			return Shape{}, fmt.Errorf("all scatter operands must have the same dimensions: %s vs %s", operands[0].HumanString(), x.HumanString())
		}
		if err := checkScatterDims(x, u, idx, ext, ivd, window, inserted, toOperand, batching, idxBatching); err != nil {
			return Shape{}, err
		}
		inits[i], types[i] = ScalarShape(x.DType), u.DType
	}
	c, err := calledComputation(in, "to_apply")
	if err != nil {
		return Shape{}, err
	}
	if err := checkReducer(programShape(c), inits, types); err != nil {
		return Shape{}, err
	}
	if n == 1 {
		return withDefaultLayout(operands[0].Clone()), nil
	}
	elems := make([]Shape, n)
	for i, s := range operands {
		elems[i] = withDefaultLayout(s.Clone())
	}
	return TupleShape(elems...), nil
}

// checkScatterDims validates scatter dimension numbers for one operand and
// its updates (XLA's ValidateScatterDimensionNumbers and the bound checks).
func checkScatterDims(x, u, idx Shape, ext []int64, ivd int64, window, inserted, toOperand, batching, idxBatching []int64) error {
	wantRank := len(ext) - 1 + len(window)
	if u.Rank() != wantRank {
		return fmt.Errorf("updates tensor must be of rank %d; got %d", wantRank, u.Rank())
	}
	if err := checkDimSet("update_window_dims", window, u.Rank()); err != nil {
		return err
	}
	if err := checkDimSet("inserted_window_dims", inserted, x.Rank()); err != nil {
		return err
	}
	if err := checkDimSet("input_batching_dims", batching, x.Rank()); err != nil {
		return err
	}
	for _, d := range batching {
		if slices.Contains(inserted, d) {
			return fmt.Errorf("dimension %d is both in inserted_window_dims and input_batching_dims", d)
		}
	}
	if len(batching) != len(idxBatching) {
		return fmt.Errorf("input_batching_dims and scatter_indices_batching_dims must have the same size: %d vs %d", len(batching), len(idxBatching))
	}
	if err := checkIndexBatchingDims("input_batching_dims", "scatter_indices_batching_dims", x, idx, ivd, batching, idxBatching); err != nil {
		return err
	}
	if len(window)+len(inserted)+len(batching) != x.Rank() {
		return fmt.Errorf("scatter op has window of size %d; doesn't match operand of rank %d", len(window)+len(inserted)+len(batching), x.Rank())
	}
	if int64(len(toOperand)) != ext[ivd] {
		return fmt.Errorf("scatter op has %d elements in scatter_dims_to_operand_dims and the bound of dimension index_vector_dim=%d of scatter_indices is %d; these two numbers must be equal", len(toOperand), ivd, ext[ivd])
	}
	if !inRange(toOperand, x.Rank()) || !allUnique(toOperand) {
		return fmt.Errorf("invalid scatter_dims_to_operand_dims {%s}: dimensions must be unique and in [0, %d)", joinInts(toOperand), x.Rank())
	}
	var maxWindow []int64
	for i, d := range x.Dims {
		if !slices.Contains(inserted, int64(i)) && !slices.Contains(batching, int64(i)) {
			maxWindow = append(maxWindow, d)
		}
	}
	for i, wd := range window {
		if maxWindow[i] != Unbounded && u.Dims[wd] > maxWindow[i] {
			return fmt.Errorf("bounds of the window dimensions of updates must not exceed the bounds of the corresponding dimensions of operand; for dimension %d, updates bound is %d, operand bound is %d", wd, u.Dims[wd], maxWindow[i])
		}
	}
	seen := 0
	for i, d := range u.Dims {
		if slices.Contains(window, int64(i)) {
			continue
		}
		if int64(seen) == ivd {
			seen++
		}
		if !dimsMatch([]int64{d}, ext[seen:seen+1]) {
			return fmt.Errorf("bounds of the scatter dimensions of updates must be same as the bounds of the corresponding dimensions of scatter indices; for scatter dimension %d, updates bound is %d, scatter_indices bound is %d", i, d, ext[seen])
		}
		seen++
	}
	return nil
}

// checkIndexBatchingDims checks the index side of batching dimensions
// (XLA's ValidateGatherDimensionNumbers and its scatter twin): each is a
// dimension of the indices other than index_vector_dim, named once, of the
// size of the operand batching dimension it pairs with. The evaluator and
// backends index the indices' dimensions by these numbers.
func checkIndexBatchingDims(opName, idxName string, x, idx Shape, ivd int64, batching, idxBatching []int64) error {
	if !inRange(idxBatching, idx.Rank()) || !allUnique(idxBatching) {
		return fmt.Errorf("invalid %s {%s}: dimensions must be unique and in [0, %d)", idxName, joinInts(idxBatching), idx.Rank())
	}
	for i, d := range idxBatching {
		if d == ivd {
			return fmt.Errorf("%s cannot contain index_vector_dim %d", idxName, ivd)
		}
		if !dimsMatch(x.Dims[batching[i]:batching[i]+1], idx.Dims[d:d+1]) {
			return fmt.Errorf("%s dimension %d (size %d) and %s dimension %d (size %d) must have the same size",
				opName, batching[i], x.Dims[batching[i]], idxName, d, idx.Dims[d])
		}
	}
	return nil
}
