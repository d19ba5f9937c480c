// Package randlit makes the seeded values `axle run` feeds a module:
// random arguments, and values for constants elided as {...} in dumps
// (XLA's HLO runner does the same). The tests, the backends' differential
// runs and ahead-of-time commands share it, so they feed a module the
// same inputs.
package randlit

import (
	"math"
	"math/rand/v2"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// RandomLiteral fills a shape with seeded values that keep common models
// finite: floats uniform in [-1, 1), integers in [0, 10), random preds.
// `axle run`, the pass tests and the backends' differential tests share it
// so they feed models the same inputs.
func RandomLiteral(s hlo.Shape, rng *rand.Rand) *hlo.Literal {
	if s.IsTuple() {
		elems := make([]*hlo.Literal, len(s.Tuple))
		for i, e := range s.Tuple {
			elems[i] = RandomLiteral(e, rng)
		}
		return hlo.MakeTupleLiteral(elems...)
	}
	l := hlo.NewLiteral(s)
	if !s.IsArray() {
		return l
	}
	// The common weight types without a per-element type switch (same
	// values as SetFloat64 gives).
	switch d := l.Data().(type) {
	case []float32:
		for i := range d {
			d[i] = float32(rng.Float64()*2 - 1)
		}
		return l
	case []uint16:
		if s.DType == hlo.BF16 {
			for i := range d {
				d[i] = minifloat.BF16.FromFloat32(float32(rng.Float64()*2 - 1))
			}
			return l
		}
	}
	for i := range l.Len() {
		switch t := s.DType; {
		case t.IsFloat():
			l.SetFloat64(i, rng.Float64()*2-1)
		case t.IsComplex():
			l.SetComplex128(i, complex(rng.Float64()*2-1, rng.Float64()*2-1))
		case t.IsPred():
			l.SetBool(i, rng.IntN(2) == 1)
		default:
			l.SetInt64(i, int64(rng.IntN(10)))
		}
	}
	return l
}

// FillElidedConstants gives constants written {...} seeded random values,
// as XLA's HLO runner does for dumps without weights.
func FillElidedConstants(m *hlo.Module, rng *rand.Rand) {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			// One too large to allocate stays elided, for CheckSupported
			// (which compiling and Run call) to report.
			if in.Opcode == hlo.OpConstant && in.Literal != nil && in.Literal.IsElided() && allocatable(in.Shape) {
				in.Literal = RandomLiteral(in.Shape, rng)
			}
		}
	}
}

// RandomArguments returns seeded random arguments for m's entry
// parameters (after filling its elided constants from the same stream).
// A parameter too large to allocate on this host gets nil, which Run and
// executables refuse, naming the parameter.
func RandomArguments(m *hlo.Module, seed uint64) []*hlo.Literal {
	rng := rand.New(Source(seed))
	FillElidedConstants(m, rng)
	return Arguments(ParamShapes(m), rng)
}

// Source is the stream RandomArguments draws from for seed. An
// ahead-of-time package saves it (rand.PCG.MarshalBinary) after the
// module's elided constants took their values, so that its command draws
// the arguments `axle run` draws.
func Source(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x5eed) }

// Arguments draws an argument of each shape from rng (nil for one too
// large to allocate).
func Arguments(shapes []hlo.Shape, rng *rand.Rand) []*hlo.Literal {
	args := make([]*hlo.Literal, len(shapes))
	for i, s := range shapes {
		if allocatable(s) {
			args[i] = RandomLiteral(s, rng)
		}
	}
	return args
}

// ParamShapes are the shapes of m's entry parameters.
func ParamShapes(m *hlo.Module) []hlo.Shape {
	shapes := make([]hlo.Shape, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		shapes[i] = p.Shape
	}
	return shapes
}

// maxValueBytes is the largest value made: 2^47-1 bytes, as the
// evaluator allocates (more than any host has; a larger one is refused).
const maxValueBytes = int64(math.MaxInt>>1) & (1<<47 - 1)

// allocatable: every array of s fits in maxValueBytes.
func allocatable(s hlo.Shape) bool {
	if s.IsTuple() {
		for _, e := range s.Tuple {
			if !allocatable(e) {
				return false
			}
		}
		return true
	}
	n, err := s.ByteSize()
	return err == nil && n <= maxValueBytes
}
