// Package jit compiles small elementwise float32 programs (a loop
// fusion's body) to x86-64 machine code with AVX2 and FMA (and, for f32
// programs with exp, tanh, logistic or erf on machines with AVX-512 F and DQ,
// AVX-512 on 16-lane ZMM vectors), and runs them.
//
// A tile program (package cpu) runs a fusion one instruction at a time
// over tiles in L1: every op loads its operands' tiles and stores its
// own, and the math kernels each take their turn. That is a pass through
// L1 per op. Here the whole fusion becomes one loop over 8-lane vectors
// whose values stay in the 16 YMM registers (16-lane vectors in the 32
// ZMM ones, in wide code): a fusion of ten ops costs
// its arithmetic and one read of each input and one write of the result,
// as XLA's LLVM-compiled loops do.
//
// Every op computes exactly the instructions the assembly kernels of
// package kernels run for it (the same operand order, the same
// polynomials and constants), so a program's results are bit-identical
// to the tile program's. Programs that do not fit (an unsupported op,
// more live values than registers, too many inputs) are refused, and the
// caller keeps its tile program. Code runs only on linux/amd64 with AVX2
// and FMA (and F16C where it converts f16), outside the purego build, and
// not when AXLE_JIT=off; AXLE_KERNELS=avx2 keeps it to 8 lanes.
//
// A program's code comes from the code book (book.go) where it holds the
// program, and otherwise from the generator, which only binaries that
// call InstallGenerator link: a model compiled ahead of time ships the
// book recorded as it was compiled (Record, Recorded, LoadBook), and
// builds the same programs at load without generating any code.
package jit

import (
	"errors"
	"fmt"
	"slices"
)

// Op is what a value of a program is.
type Op uint8

const (
	Input    Op = iota // Arg: which input array, read at the output's index
	Splat              // Arg: which per-call scalar
	Const              // Value, everywhere
	Add                // Args[0] + Args[1]
	Sub                // Args[0] - Args[1]
	Mul                // Args[0] * Args[1]
	Div                // Args[0] / Args[1]
	Max                // XLA's maximum: NaN if either is (kernels.MaximumF32)
	Min                // XLA's minimum
	Neg                // the sign bit flipped
	Abs                // the sign bit cleared
	Sqrt               // correctly rounded
	Exp                // kernels.ExpF32
	Tanh               // kernels.TanhF32
	Logistic           // kernels.LogisticF32
	Select             // Args[0] (a mask) ? Args[1] : Args[2]
	Clamp              // clamp(lo=Args[0], x=Args[1], hi=Args[2]) as kernels.ClampF32
	And                // bitwise (masks)
	Or
	Xor
	CmpEQ // a mask of all ones or zero, as kernels.CompareF32
	CmpNE
	CmpLT
	CmpLE
	CmpGT
	CmpGE
	RoundBF16 // Args[0] rounded to bf16 precision (nearest even), still an f32
	Erf       // kernels.ErfF32
	// RoundEven is Args[0] rounded to an integer, ties to even (XLA's
	// round-nearest-even): exact, so any correct rounding gives the bits
	// of tile's Go loop.
	RoundEven
	// RoundF16 is Args[0] rounded to f16 precision (nearest even, ±inf
	// past the largest value, subnormals kept), still an f32: a NaN is
	// the canonical quiet NaN with its sign, as minifloat.F16 converts.
	RoundF16
)

var opNames = [...]string{"input", "splat", "const", "add", "sub", "mul", "div", "max", "min", "neg", "abs", "sqrt",
	"exp", "tanh", "logistic", "select", "clamp", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "round-bf16", "erf", "round-even", "round-f16"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op%d", o)
}

// arity is the number of Args an op reads.
func (o Op) arity() int {
	switch o {
	case Input, Splat, Const:
		return 0
	case Neg, Abs, Sqrt, Exp, Tanh, Logistic, RoundBF16, Erf, RoundEven, RoundF16:
		return 1
	case Select, Clamp:
		return 3
	}
	return 2
}

// long reports whether o expands to a long polynomial computation (the
// math functions), which makes a program compute-bound.
func (o Op) long() bool { return o == Exp || o == Tanh || o == Logistic || o == Erf }

// Value is one instruction of a program; Args index earlier values.
type Value struct {
	Op    Op
	Args  [3]int
	Arg   int     // Input, Splat
	Value float32 // Const
	// Off displaces an Input's reads: it reads its array Off elements past
	// the output's index, so that several views of one array (slices at
	// different offsets) share its register. Only flat programs (no rows,
	// not strided) with f32 inputs take one; the arrays must then be Off
	// elements longer than the outputs.
	Off int
}

// Program is a list of values in dependency order. Outputs lists the
// values stored, one array each (none: the last value). Arrays are f32
// unless InputTypes or OutputTypes say otherwise (nil: all f32); values
// are f32 throughout, a bf16 or f16 input read exactly and an output
// rounded to nearest even.
//
// With RowLen > 0 the arrays are rows of RowLen elements (a multiple of
// 8 where an array is bf16 or f16), run by RunRows, and the scalars listed in
// RowScalars take a new value for each row (a row reduction's result,
// read back along its row): no array need spread them over the rows
// first.
type Program struct {
	Values      []Value
	Inputs      int // arrays, each as long as the outputs
	Scalars     int // per-call values (Splat)
	Outputs     []int
	InputTypes  []Type
	OutputTypes []Type
	RowLen      int
	RowScalars  []int
	// PrefetchInputs lists inputs whose elements PrefetchAhead further on
	// the loop asks into the cache as it goes, about one cache line for
	// each it reads: a tile program's segment reading its operand in
	// place fetches the next tile while it computes this one, so the
	// memory's latency hides behind the arithmetic. (PREFETCH never
	// faults: reaching past an array's end is harmless.)
	PrefetchInputs []int
	PrefetchAhead  int
	// RowFolds (with RowLen) fold values along each row as the loop
	// computes them, run by RunRowsFold: a row reduction of a value the
	// program computes anyway (softmax's sum of its exponentials), or of
	// an input it would not otherwise read (the next tile's rows, whose
	// maximum is then ready when that tile starts, read while this one's
	// results are written) costs no pass of its own.
	RowFolds []RowFold
	// CachedOutputs lists outputs stored through the caches even by the
	// streaming loop: a row program's tile that the next tile's code
	// reads back, beside a result streamed out to memory.
	CachedOutputs []int
	// Strided programs run by Runner.RunStrided over a block of rows
	// whose arrays move on by a stride of their own from row to row (a
	// GEMM epilogue over a block of C, its bias read again for every
	// row): one call for the block, where a flat program takes one a
	// row. Not with RowLen.
	Strided bool
	// lanes (8 or 16) and unroll, where set, fix the code's vector width
	// and the vectors an iteration of its main loop computes: FoldCode's
	// code folds as another program's does.
	lanes, unroll int
}

// RowFold is a reduction of value Value along each row: Op is Add, Max
// or Min (XLA's add, maximum and minimum: a NaN anywhere gives NaN).
// The code keeps FoldWidth partial results a row, each folding every
// FoldWidth-th vector lane of the row from the op's identity (0, -inf,
// +inf); RunRowsFold stores them for the caller to fold.
type RowFold struct {
	Op    Op
	Value int
}

// Array is an input or output array of a call: f32 values, bf16 or f16
// bit patterns, s32 inputs, u8 or s8 outputs, as the program's types say
// (one field set).
type Array struct {
	F32  []float32
	BF16 []uint16
	F16  []uint16
	I32  []int32
	U8   []uint8
	S8   []int8
}

func (x Array) Len() int {
	switch {
	case x.F32 != nil:
		return len(x.F32)
	case x.I32 != nil:
		return len(x.I32)
	case x.U8 != nil:
		return len(x.U8)
	case x.S8 != nil:
		return len(x.S8)
	case x.F16 != nil:
		return len(x.F16)
	}
	return len(x.BF16)
}

// Slice is elements [lo, hi) of x.
func (x Array) Slice(lo, hi int) Array {
	switch {
	case x.F32 != nil:
		return Array{F32: x.F32[lo:hi]}
	case x.I32 != nil:
		return Array{I32: x.I32[lo:hi]}
	case x.U8 != nil:
		return Array{U8: x.U8[lo:hi]}
	case x.S8 != nil:
		return Array{S8: x.S8[lo:hi]}
	case x.F16 != nil:
		return Array{F16: x.F16[lo:hi]}
	}
	return Array{BF16: x.BF16[lo:hi]}
}

// Type is an array's element type.
type Type uint8

const (
	F32  Type = iota
	BF16      // bit patterns, in []uint16
	// I32 is an input of s32 values, each read as the nearest f32 (ties
	// to even, as Go's and the evaluator's conversion).
	I32
	// U8 and S8 are outputs of 8-bit integers: each value converted
	// toward zero, saturating at the type's range, NaN to 0 (the
	// evaluator's float-to-integer conversion). Flat programs only.
	U8
	S8
	// F16 is IEEE half precision, bit patterns in []uint16, read and
	// stored by the F16C conversions (f16.go): code with it needs F16C.
	F16
)

// size is the bytes of an element.
func (t Type) size() int {
	switch t {
	case BF16, F16:
		return 2
	case U8, S8:
		return 1
	}
	return 4
}

func (p *Program) inputType(k int) Type {
	if k < len(p.InputTypes) {
		return p.InputTypes[k]
	}
	return F32
}

func (p *Program) outputType(k int) Type {
	if k < len(p.OutputTypes) {
		return p.OutputTypes[k]
	}
	return F32
}

// allF32 reports whether every array of p has 32-bit lanes: f32 (or
// s32 inputs, converted as they are loaded).
func (p *Program) allF32() bool {
	for _, ts := range [][]Type{p.InputTypes, p.OutputTypes} {
		for _, t := range ts {
			if t != F32 && t != I32 {
				return false
			}
		}
	}
	return true
}

// wideTypes reports whether p's arrays are all f32, s32 or f16: the
// types whose loads and stores have 16-lane forms here (bf16's packing
// and the byte conversions have only their YMM ones).
func (p *Program) wideTypes() bool {
	for _, ts := range [][]Type{p.InputTypes, p.OutputTypes} {
		for _, t := range ts {
			if t != F32 && t != I32 && t != F16 {
				return false
			}
		}
	}
	return true
}

// usesF16 reports whether p's code converts f16 (F16 arrays, RoundF16):
// it needs the F16C instructions.
func (p *Program) usesF16() bool {
	if slices.Contains(p.InputTypes, F16) || slices.Contains(p.OutputTypes, F16) {
		return true
	}
	for _, v := range p.Values {
		if v.Op == RoundF16 {
			return true
		}
	}
	return false
}

// onlyF32 reports whether every array of p is f32 (RunF32 and
// RunStridedF32 take such programs).
func (p *Program) onlyF32() bool {
	for _, ts := range [][]Type{p.InputTypes, p.OutputTypes} {
		for _, t := range ts {
			if t != F32 {
				return false
			}
		}
	}
	return true
}

// tails reports whether p's code computes a row's last partial vector
// itself, through masked loads and stores: rows of a length not a
// multiple of 8, and strided programs, whose rows are as long as each
// call says, when every array is f32 (a masked load reads 32-bit lanes).
// Flat programs leave theirs to Run, which stages it.
func (p *Program) tails() bool {
	return (p.RowLen%8 != 0 || p.Strided) && p.allF32()
}

// outputs is p's stored values.
func (p *Program) outputs() []int {
	if len(p.Outputs) == 0 {
		return []int{len(p.Values) - 1}
	}
	return p.Outputs
}

// Limits of the generated code: the outputs and the first inputs each
// hold a general register for the whole loop (seven are free); the
// inputs past those are read through R13, reloaded from the argument
// block before each read (the loop's bound then lives there too), and
// splats live in the argument block. (An fp16 HiFi-GAN's residual sums
// fuse into convolution epilogues of 13 inputs.)
const (
	MaxArrays   = MaxInputs + MaxOutputs
	MaxInputs   = 20
	MaxOutputs  = 4
	MaxScalars  = 8
	MaxRowFolds = 2
	// MaxFoldWidth bounds Func.FoldWidth: a vector slot of 16 lanes for
	// each vector of an iteration.
	MaxFoldWidth = maxUnroll * 16
)

// maxUnroll bounds the vectors an iteration of the main loop computes
// (unrollFor).
const maxUnroll = 3

// The register file and the spill slots (32 bytes each, in the argument
// block) the generated code has: a program whose live values need more
// is refused.
const (
	numYMM   = 16
	numZMM   = 32 // wide code: EVEX encodes all 32
	maxSpill = 64
)

// maxInputOff bounds Value.Off, so that its byte offset is a 32-bit
// displacement.
const maxInputOff = 1 << 28

// inputOffs is, for each input, the largest Off of the values reading it.
func (p *Program) inputOffs() []int {
	offs := make([]int, p.Inputs)
	for _, v := range p.Values {
		if v.Op == Input && v.Off > offs[v.Arg] {
			offs[v.Arg] = v.Off
		}
	}
	return offs
}

// maxPrefetchAhead bounds PrefetchAhead, so that its byte offset is a
// 32-bit displacement.
const maxPrefetchAhead = 1 << 28

// ErrUnsupported says this machine or build runs no generated code.
var ErrUnsupported = errors.New("jit: no code generation on this platform")

// validateTypes checks that every type is one, s32 arrays are inputs,
// 8-bit ones outputs, and both only in flat programs.
func (p *Program) validateTypes() error {
	for _, ts := range [][]Type{p.InputTypes, p.OutputTypes} {
		for _, t := range ts {
			if t > F16 {
				return fmt.Errorf("jit: array of unknown type %d", t)
			}
		}
	}
	for _, t := range p.InputTypes {
		if t == U8 || t == S8 || t == I32 && (p.RowLen > 0 || p.Strided) {
			return fmt.Errorf("jit: input of type %d in this program", t)
		}
	}
	for _, t := range p.OutputTypes {
		if t == I32 || (t == U8 || t == S8) && (p.RowLen > 0 || p.Strided) {
			return fmt.Errorf("jit: output of type %d in this program", t)
		}
	}
	return nil
}

// validate checks p's structure, so generation can trust it.
func (p *Program) validate() error {
	if len(p.Values) == 0 {
		return errors.New("jit: empty program")
	}
	outs := p.outputs()
	if p.Inputs > MaxInputs || len(outs) > MaxOutputs || p.Inputs+len(outs) > MaxArrays || p.Scalars > MaxScalars {
		return fmt.Errorf("jit: %d inputs, %d outputs and %d scalars (at most %d, %d, %d arrays in all, and %d)",
			p.Inputs, len(outs), p.Scalars, MaxInputs, MaxOutputs, MaxArrays, MaxScalars)
	}
	for _, o := range outs {
		if o < 0 || o >= len(p.Values) {
			return fmt.Errorf("jit: output %d is not a value", o)
		}
	}
	if p.RowLen < 0 || p.RowLen%8 != 0 && !p.allF32() || len(p.RowScalars) > 0 && p.RowLen == 0 {
		return fmt.Errorf("jit: rows of %d elements (a multiple of 8 is needed with bf16 or f16 arrays)", p.RowLen)
	}
	if p.Strided && (p.RowLen > 0 || len(p.PrefetchInputs) > 0) {
		return errors.New("jit: a strided program has no fixed rows and prefetches nothing")
	}
	if err := p.validateTypes(); err != nil {
		return err
	}
	for _, k := range p.RowScalars {
		if k < 0 || k >= p.Scalars {
			return fmt.Errorf("jit: row scalar %d of %d", k, p.Scalars)
		}
	}
	if len(p.RowFolds) > MaxRowFolds || len(p.RowFolds) > 0 && p.RowLen == 0 {
		return fmt.Errorf("jit: %d row folds with rows of %d elements (at most %d, and rows are needed)", len(p.RowFolds), p.RowLen, MaxRowFolds)
	}
	for _, f := range p.RowFolds {
		if f.Op != Add && f.Op != Max && f.Op != Min || f.Value < 0 || f.Value >= len(p.Values) {
			return fmt.Errorf("jit: row fold %s of value %d (add, max or min of a value is needed)", f.Op, f.Value)
		}
	}
	for _, k := range p.CachedOutputs {
		if k < 0 || k >= len(outs) {
			return fmt.Errorf("jit: cached output %d of %d", k, len(outs))
		}
	}
	for _, k := range p.PrefetchInputs {
		if k < 0 || k >= p.Inputs {
			return fmt.Errorf("jit: prefetch of input %d of %d", k, p.Inputs)
		}
	}
	if p.PrefetchAhead < 0 || p.PrefetchAhead > maxPrefetchAhead {
		return fmt.Errorf("jit: prefetch %d elements ahead (at most %d)", p.PrefetchAhead, maxPrefetchAhead)
	}
	for i, v := range p.Values {
		if int(v.Op) >= len(opNames) {
			return fmt.Errorf("jit: value %d: unknown op %d", i, v.Op)
		}
		for _, a := range v.Args[:v.Op.arity()] {
			if a < 0 || a >= i {
				return fmt.Errorf("jit: value %d (%s) reads %d, not an earlier value", i, v.Op, a)
			}
		}
		switch {
		case v.Op == Input && (v.Arg < 0 || v.Arg >= p.Inputs):
			return fmt.Errorf("jit: value %d reads input %d of %d", i, v.Arg, p.Inputs)
		case v.Off != 0 && (v.Op != Input || v.Off < 0 || v.Off > maxInputOff):
			return fmt.Errorf("jit: value %d (%s) displaced by %d elements", i, v.Op, v.Off)
		case v.Off != 0 && (p.RowLen > 0 || p.Strided || p.inputType(v.Arg) != F32):
			return fmt.Errorf("jit: value %d displaced in a program with rows, strides or a narrow input", i)
		case v.Op == Splat && (v.Arg < 0 || v.Arg >= p.Scalars):
			return fmt.Errorf("jit: value %d reads scalar %d of %d", i, v.Arg, p.Scalars)
		}
	}
	return nil
}
