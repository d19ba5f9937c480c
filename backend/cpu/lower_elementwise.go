package cpu

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Elementwise instructions the tile programs leave alone (integer, pred and
// f64 arithmetic, compare and is-finite on any type) get one typed loop per
// instruction. Lowering resolves the opcode, the element type and the
// compare direction to a generic loop instantiated for the storage type, so
// a call runs that loop over contiguous ranges and decides nothing per
// element. The loops reproduce eval/elementwise*.go exactly.
//
// Aliasing: every loop reads element i of its operands before it writes
// element i of dst and reads no index after writing it, so dst may be the
// storage of any operand of the same storage width (the executor's
// in-place assignment); chunked loops convert a whole chunk of both
// operands before writing that chunk, which keeps the same guarantee.

// ewParallelMin is the element count from which a kernel splits its loop
// over threads: below it the pool's hand-off costs more than it saves.
const ewParallelMin = kernels.MinParallelWork

// ewChunk is the length of the stack buffers chunked loops convert into
// (decoded narrow floats, total-order keys): small enough for the stack,
// long enough to amortise the per-chunk call.
const ewChunk = 512

// ewNum are the storage types with Go arithmetic operators.
type ewNum interface {
	integer | float32 | float64
}

// lowerElementwise returns a compiled kernel for an elementwise
// instruction, or false when it has none: complex, f8 and sub-f32 float
// arithmetic (the tile programs' and the evaluator's business), dynamic or
// tuple shapes, scalar operands standing in for arrays, and ops the
// evaluator rejects for the type.
func lowerElementwise(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if k, ok := lowerStretched(in, threads); ok {
		return k, true
	}
	if k, ok := lowerComplex(in, threads); ok {
		return k, true
	}
	if !ewShapesOK(in) {
		return nil, false
	}
	switch in.Opcode {
	case hlo.OpCompare:
		return lowerCompare(in, threads)
	case hlo.OpIsFinite:
		return lowerIsFinite(in, threads)
	}
	for _, o := range in.Operands {
		if o.Shape.DType != in.Shape.DType {
			return nil, false
		}
	}
	switch t := in.Shape.DType; {
	case t == hlo.Pred:
		return lowerPred(in, threads)
	case t == hlo.F32:
		return floatKernel[float32](in, threads)
	case t == hlo.F64:
		return floatKernel[float64](in, threads)
	case t.IsInteger():
		return lowerInts(in, threads)
	}
	return nil, false
}

// elementwiseInPlace lists the operands whose storage a kernel from
// lowerElementwise may overwrite: those with the result's storage width
// and element count (see the aliasing note above).
func elementwiseInPlace(in *hlo.Instruction) []int {
	var ip []int
	w := storageWidth(in.Shape.DType)
	for k, o := range in.Operands {
		if w > 0 && storageWidth(o.Shape.DType) == w && o.Shape.NumElements() == in.Shape.NumElements() {
			ip = append(ip, k)
		}
	}
	return ip
}

// ewShapesOK accepts static arrays whose operands all have the result's
// element count: the evaluator's scalar-to-array stretching (fullSize) is
// left to it, and complex types are out of scope.
func ewShapesOK(in *hlo.Instruction) bool {
	if !plainArray(in.Shape) || in.Shape.DType.IsComplex() || len(in.Operands) == 0 {
		return false
	}
	n := in.Shape.NumElements()
	for _, o := range in.Operands {
		if !plainArray(o.Shape) || o.Shape.DType.IsComplex() || o.Shape.NumElements() != n {
			return false
		}
	}
	return true
}

// ewSplit runs body over [0, n), split into one contiguous range per
// thread when n is large. Ranges are whole multiples of 64 elements so no
// two threads write the same cache line.
func ewSplit(n, threads int, body func(lo, hi int)) {
	if n < ewParallelMin || threads <= 1 {
		body(0, n)
		return
	}
	per := ((n+threads-1)/threads + 63) &^ 63
	kernels.Parallel(threads, func(t int) {
		lo := min(t*per, n)
		if hi := min(lo+per, n); lo < hi {
			body(lo, hi)
		}
	})
}

// errEwStorage reports operands whose storage does not match the shapes
// the kernel was lowered for (a caller bug, not a data condition).
func errEwStorage(in string) error {
	return fmt.Errorf("elementwise kernel: operand storage does not match %s", in)
}

// unaryKernel runs loop over the result and operand 0.
func unaryKernel[D, S any](in *hlo.Instruction, loop func(dst []D, src []S), threads int) kernelFunc {
	name := in.Name
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, ok0 := out.Data().([]D)
		a, ok1 := ops[0].Data().([]S)
		if !ok0 || !ok1 || len(a) != len(dst) {
			return errEwStorage(name)
		}
		if len(dst) < ewParallelMin || threads <= 1 { // no closure: small calls allocate nothing
			loop(dst, a)
			return nil
		}
		ewSplit(len(dst), threads, func(lo, hi int) { loop(dst[lo:hi], a[lo:hi]) })
		return nil
	}
}

// binaryKernel runs loop over the result and operands 0 and 1.
func binaryKernel[D, S any](in *hlo.Instruction, loop func(dst []D, a, b []S), threads int) kernelFunc {
	name := in.Name
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, ok0 := out.Data().([]D)
		a, ok1 := ops[0].Data().([]S)
		b, ok2 := ops[1].Data().([]S)
		if !ok0 || !ok1 || !ok2 || len(a) != len(dst) || len(b) != len(dst) {
			return errEwStorage(name)
		}
		if len(dst) < ewParallelMin || threads <= 1 {
			loop(dst, a, b)
			return nil
		}
		ewSplit(len(dst), threads, func(lo, hi int) { loop(dst[lo:hi], a[lo:hi], b[lo:hi]) })
		return nil
	}
}

// ternaryKernel runs loop over the result and operands 0, 1 and 2 (clamp's
// lo, x, hi).
func ternaryKernel[T any](in *hlo.Instruction, loop func(dst, a, b, c []T), threads int) kernelFunc {
	name := in.Name
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, ok0 := out.Data().([]T)
		a, ok1 := ops[0].Data().([]T)
		b, ok2 := ops[1].Data().([]T)
		c, ok3 := ops[2].Data().([]T)
		if !ok0 || !ok1 || !ok2 || !ok3 || len(a) != len(dst) || len(b) != len(dst) || len(c) != len(dst) {
			return errEwStorage(name)
		}
		if len(dst) < ewParallelMin || threads <= 1 {
			loop(dst, a, b, c)
			return nil
		}
		ewSplit(len(dst), threads, func(lo, hi int) { loop(dst[lo:hi], a[lo:hi], b[lo:hi], c[lo:hi]) })
		return nil
	}
}

// Loops shared by integers and floats; dst may alias a or b.

// arithLoop is the loop of add, subtract or multiply, one for every
// number type (integers wrap), or nil for another op.
func arithLoop[T ewNum](op hlo.Opcode) func(dst, a, b []T) {
	switch op {
	case hlo.OpAdd:
		return addLoop[T]
	case hlo.OpSubtract:
		return subLoop[T]
	case hlo.OpMultiply:
		return mulLoop[T]
	}
	return nil
}

func addLoop[T ewNum](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] + b[i]
	}
}

func subLoop[T ewNum](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] - b[i]
	}
}

func mulLoop[T ewNum](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] * b[i]
	}
}

func negLoop[T ewNum](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = -v
	}
}

// signLoop is 1 or -1 by sign; zeros (of either sign) and NaN pass
// through unchanged.
func signLoop[T ewNum](dst, src []T) {
	one := T(1)
	dst = dst[:len(src)]
	for i, v := range src {
		switch {
		case v > 0:
			dst[i] = one
		case v < 0:
			dst[i] = -one
		default:
			dst[i] = v
		}
	}
}

// lowerStretched compiles a clamp with scalar bounds beside an array
// operand (HLO allows them; select's scalar predicate is lowerSelect's):
// the kernel of the all-array form, run on the scalars repeated to the
// result's size (a fill per call; the fused forms splat them instead).
func lowerStretched(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpClamp || !plainArray(in.Shape) || in.Shape.IsScalar() {
		return nil, false
	}
	full := *in
	full.Operands = slices.Clone(in.Operands)
	var stretch []int
	for k, o := range in.Operands {
		if plainArray(o.Shape) && o.Shape.IsScalar() {
			s := in.Shape.Clone()
			s.DType = o.Shape.DType
			full.Operands[k] = &hlo.Instruction{Name: o.Name, Opcode: hlo.OpParameter, Shape: s}
			stretch = append(stretch, k)
		}
	}
	if len(stretch) == 0 {
		return nil, false
	}
	k, ok := lowerElementwise(&full, threads)
	if !ok {
		return nil, false
	}
	n := int(in.Shape.NumElements())
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		wide := slices.Clone(ops)
		zero := make([]int, n)
		for _, i := range stretch {
			if i >= len(ops) || ops[i].Len() != 1 {
				return errEwStorage(in.String())
			}
			wide[i] = hlo.NewLiteral(full.Operands[i].Shape)
			if !gatherLanes(wide[i], ops[i], zero) {
				return errEwStorage(in.String())
			}
		}
		return k(out, wide)
	}, true
}
