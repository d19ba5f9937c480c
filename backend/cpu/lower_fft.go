package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Fft compiles to one pass per transformed axis, each planned at compile
// time (kernels.FFTPlan: twiddles, radices or Bluestein's chirp). A pass
// gathers a few lines along its axis into split real/imaginary scratch
// (line b's element t at t·batch+b, the plan's batched layout), transforms
// them and scatters them back; lines are independent, so a large pass
// splits its line chunks over the workers. Arithmetic is in the element
// type's precision (float32 for c64): the evaluator's direct DFT sums in
// complex128, so results agree to an FFT's rounding error, about
// log2(n)·eps of the largest magnitude, not bit for bit.
//
// The passes follow the evaluator's order where it matters: RFFT
// transforms the last axis of the real input first and keeps its first
// L/2+1 outputs; IRFFT runs the inverse over the leading axes of the half
// spectrum, then extends each last-axis row to its Hermitian spectrum of
// length L exactly as the evaluator does (reading x[k] for k ≤ L/2 and
// conj(x[L-k]) above) and keeps the real part; an even L runs at half
// length (lower_fft_real.go). IFFT divides by n on every axis. Literals are row-major whatever their layout, so layouts
// need no handling.

// fftIO is how a pass reads or writes its lines.
type fftIO int

const (
	fftComplex        fftIO = iota // interleaved complex elements
	fftReal                        // real elements: RFFT's input, IRFFT's output
	fftHermitian                   // IRFFT's half spectrum, extended to length n
	fftRealPairs                   // a real row of even length as complex pairs
	fftHalfSpectrum                // RFFT's X_0..X_h unpacked from the pairs' transform
	fftHermitianPairs              // IRFFT's half spectrum packed for the pairs' inverse
)

// fftBuffer names a pass's source or destination.
type fftBuffer int

const (
	fftInput fftBuffer = iota
	fftOutput
	fftTemp // IRFFT's leading-axis results, which must not overwrite the operand
)

// fftPass transforms lines = outer·inner lines along one axis: line l
// starts at (l/inner)·len·inner + l%inner (len being srcN or dstN) and
// steps by inner.
type fftPass[F float32 | float64] struct {
	plan         *kernels.FFTPlan[F]
	lines, inner int
	srcN, dstN   int
	in, out      fftIO
	src, dst     fftBuffer
	inverse      bool
	scale        F
	batch        int // lines per chunk
	work         int // estimated flops, to decide on threads
	wr, wi       []F // exp(-2πi·k/L), k ≤ L/2, for the packed real forms
}

// fftKernel is a compiled fft: its passes and the operand, result and
// temporary sizes in F values.
type fftKernel[F float32 | float64] struct {
	passes                 []fftPass[F]
	inType                 hlo.DType
	srcLen, dstLen, tmpLen int
	threads                int
}

// lowerFFT compiles an fft of any fft_type over c64/c128 (RFFT: f32/f64),
// or declines an instruction whose shapes do not fit its attributes.
func lowerFFT(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if len(in.Operands) != 1 || !in.Shape.IsArray() || !in.Operands[0].Shape.IsArray() {
		return nil, false
	}
	enum, _ := in.EnumAttr("fft_type")
	typ := string(enum)
	lens, _ := in.Ints("fft_length")
	inT, outT := in.Operands[0].Shape.DType, in.Shape.DType
	switch {
	case fftTypes(typ, hlo.C64, hlo.F32, inT, outT):
		return buildFFT[float32](in, typ, lens, threads)
	case fftTypes(typ, hlo.C128, hlo.F64, inT, outT):
		return buildFFT[float64](in, typ, lens, threads)
	}
	return nil, false
}

// fftTypes reports whether in → out is typ's signature for complex type
// c with real component r.
func fftTypes(typ string, c, r, in, out hlo.DType) bool {
	switch typ {
	case "FFT", "IFFT":
		return in == c && out == c
	case "RFFT":
		return in == r && out == c
	case "IRFFT":
		return in == c && out == r
	}
	return false
}

func buildFFT[F float32 | float64](in *hlo.Instruction, typ string, lens []int64, threads int) (kernelFunc, bool) {
	inDims, outDims := hlo.Ints(in.Operands[0].Shape.Dims), hlo.Ints(in.Shape.Dims)
	rank, r := len(inDims), len(lens)
	if r < 1 || r > 3 || r > rank {
		return nil, false
	}
	l := int(lens[r-1])
	if !sameInts(fftResultDims(typ, inDims, l), outDims) {
		return nil, false
	}
	k := &fftKernel[F]{inType: in.Operands[0].Shape.DType, threads: threads,
		srcLen: fftFloats(in.Operands[0].Shape), dstLen: fftFloats(in.Shape)}
	b := fftPlanner[F]{plans: map[int]*kernels.FFTPlan[F]{}}
	first, last := rank-r, rank-1
	switch typ {
	case "FFT", "IFFT":
		// The last axis first, so the first pass reads the operand
		// contiguously; the others work in place on the result.
		src := fftInput
		for d := last; d >= first; d-- {
			k.passes = append(k.passes, b.pass(inDims, d, typ == "IFFT", src, fftOutput))
			src = fftOutput
		}
	case "RFFT":
		p := b.pass(inDims, last, false, fftInput, fftOutput)
		p.in, p.dstN = fftReal, outDims[last]
		if l >= 2 && l%2 == 0 {
			p = packRealPass(&b, p, l, false)
		}
		k.passes = append(k.passes, p)
		for d := last - 1; d >= first; d-- {
			k.passes = append(k.passes, b.pass(outDims, d, false, fftOutput, fftOutput))
		}
	case "IRFFT":
		src := fftInput
		for d := last - 1; d >= first; d-- {
			k.passes = append(k.passes, b.pass(inDims, d, true, src, fftTemp))
			src, k.tmpLen = fftTemp, k.srcLen
		}
		p := b.pass(outDims, last, true, src, fftOutput)
		p.in, p.out, p.srcN = fftHermitian, fftReal, inDims[last]
		if l >= 2 && l%2 == 0 {
			p = packRealPass(&b, p, l, true)
		}
		k.passes = append(k.passes, p)
	default:
		return nil, false
	}
	return k.run, true
}

// fftResultDims is the result shape's dimensions the evaluator produces
// (RFFT keeps L/2+1 of a last axis of length L, IRFFT makes it L), or
// nil when RFFT's last axis is not L.
func fftResultDims(typ string, dims []int, l int) []int {
	out := append([]int(nil), dims...)
	switch typ {
	case "RFFT":
		if dims[len(dims)-1] != l {
			return nil
		}
		if l != 0 { // a zero-length transform keeps its zero-sized axis
			out[len(out)-1] = l/2 + 1
		}
	case "IRFFT":
		out[len(out)-1] = l
	}
	return out
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fftFloats is the number of F values an array of shape s holds.
func fftFloats(s hlo.Shape) int {
	n := 1
	for _, d := range s.Dims {
		n *= int(d)
	}
	if s.DType.IsComplex() {
		n *= 2
	}
	return n
}

// fftPlanner makes the passes, sharing one plan per length.
type fftPlanner[F float32 | float64] struct {
	plans map[int]*kernels.FFTPlan[F]
}

// plan is the length-n plan, made once.
func (b *fftPlanner[F]) plan(n int) *kernels.FFTPlan[F] {
	pl := b.plans[n]
	if pl == nil {
		pl = kernels.NewFFTPlan[F](n)
		b.plans[n] = pl
	}
	return pl
}

// fftChunk is the number of elements a chunk of lines aims at: a few
// lines' worth of split scratch and Stockham buffers stay in L1/L2.
const fftChunk = 1024

// pass is the complex-to-complex transform along axis d of an array of
// dimensions dims (the callers adjust the ends for RFFT and IRFFT).
func (b *fftPlanner[F]) pass(dims []int, d int, inverse bool, src, dst fftBuffer) fftPass[F] {
	n := dims[d]
	outer, inner := 1, 1
	for _, x := range dims[:d] {
		outer *= x
	}
	for _, x := range dims[d+1:] {
		inner *= x
	}
	batch := fftChunk / max(n, 1)
	if inner >= 8 {
		batch = max(batch, 8) // whole cache lines of neighbouring columns
	}
	batch = max(1, min(batch, 64, outer*inner))
	scale := F(1)
	if inverse && n > 0 {
		scale = F(1 / float64(n))
	}
	flops := 5 * n * (int(math.Log2(float64(max(n, 1)))) + 1)
	return fftPass[F]{plan: b.plan(n), lines: outer * inner, inner: inner, srcN: n, dstN: n,
		in: fftComplex, out: fftComplex, src: src, dst: dst, inverse: inverse, scale: scale,
		batch: batch, work: outer * inner * flops}
}

// run checks the operand and result against the compiled shapes, then
// runs the passes.
func (k *fftKernel[F]) run(out *hlo.Literal, ops []*hlo.Literal) error {
	if len(ops) != 1 || ops[0].DType() != k.inType {
		return fmt.Errorf("fft: want one %s operand", k.inType)
	}
	src, ok := floatsOf[F](ops[0])
	if !ok || len(src) != k.srcLen {
		return fmt.Errorf("fft: operand %s does not match the compiled shape", ops[0].Shape())
	}
	dst, ok := floatsOf[F](out)
	if !ok || len(dst) != k.dstLen {
		return fmt.Errorf("fft: result %s does not match the compiled shape", out.Shape())
	}
	if k.dstLen == 0 {
		return nil
	}
	bufs := [...][]F{fftInput: src, fftOutput: dst, fftTemp: make([]F, k.tmpLen)}
	for i := range k.passes {
		p := &k.passes[i]
		p.run(bufs[p.src], bufs[p.dst], k.threads)
	}
	return nil
}

// floatsOf views an f32/f64 literal's data, or a c64/c128 one's as
// interleaved real and imaginary parts, as []F.
func floatsOf[F float32 | float64](l *hlo.Literal) ([]F, bool) {
	var v any
	switch d := l.Data().(type) {
	case []float32, []float64:
		v = d
	case []complex64:
		v = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(d))), 2*len(d))
	case []complex128:
		v = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(d))), 2*len(d))
	}
	f, ok := v.([]F)
	return f, ok
}
