package stablehlo

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// HLO's bitcast-convert keeps complex and real types apart (as XLA's shape
// inference does); StableHLO's does not. A complex element's bytes are
// its real part's then its imaginary part's, so the conversion goes
// through the parts stacked along a new last dimension of 2: a bitcast
// between that real tensor and the other side, with reshapes where one
// part is wider than the other side's type.

// complexToReal bitcasts complex x to the real result shape sh.
func complexToReal(s *scope, x *hlo.Instruction, sh hlo.Shape) ([]*hlo.Instruction, error) {
	p := x.Shape.DType.ComplexComponent()
	pw, tw := p.Bits(), sh.DType.Bits()
	if sh.DType == hlo.Pred || tw > 2*pw || pw%tw != 0 && tw != 2*pw {
		return nil, fmt.Errorf("bitcast_convert of %s to %s: %w", x.Shape.DType, sh.DType, ErrUnsupported)
	}
	partShape := x.Shape.WithDType(p)
	col := append(slices.Clone(x.Shape.Dims), 1)
	var parts []*hlo.Instruction
	for _, code := range []hlo.Opcode{hlo.OpReal, hlo.OpImag} {
		v := s.add(code, partShape, []*hlo.Instruction{x})
		parts = append(parts, s.add(hlo.OpReshape, hlo.ArrayShape(p, col...), []*hlo.Instruction{v}))
	}
	stacked := s.add(hlo.OpConcatenate, hlo.ArrayShape(p, append(slices.Clone(x.Shape.Dims), 2)...), parts,
		hlo.Attr{Name: "dimensions", Value: []int64{int64(x.Shape.Rank())}})
	switch {
	case tw == 2*pw, tw == pw:
		return []*hlo.Instruction{s.add(hlo.OpBitcastConvert, sh, []*hlo.Instruction{stacked})}, nil
	}
	// Narrower than a part: [..., 2, pw/tw], then the two minor
	// dimensions merged.
	pieces := append(slices.Clone(stacked.Shape.Dims), int64(pw/tw))
	v := s.add(hlo.OpBitcastConvert, hlo.ArrayShape(sh.DType, pieces...), []*hlo.Instruction{stacked})
	return []*hlo.Instruction{s.add(hlo.OpReshape, sh, []*hlo.Instruction{v})}, nil
}

// realToComplex bitcasts real x to the complex result shape sh.
func realToComplex(s *scope, x *hlo.Instruction, sh hlo.Shape) ([]*hlo.Instruction, error) {
	p := sh.DType.ComplexComponent()
	pw, tw := p.Bits(), x.Shape.DType.Bits()
	if x.Shape.DType == hlo.Pred || tw > 2*pw || pw%tw != 0 && tw != 2*pw {
		return nil, fmt.Errorf("bitcast_convert of %s to %s: %w", x.Shape.DType, sh.DType, ErrUnsupported)
	}
	dims := sh.Dims
	stackedShape := hlo.ArrayShape(p, append(slices.Clone(dims), 2)...)
	v := x
	if tw < pw {
		// [..., 2·pw/tw] split into [..., 2, pw/tw] for the bitcast.
		v = s.add(hlo.OpReshape, hlo.ArrayShape(x.Shape.DType, append(slices.Clone(dims), 2, int64(pw/tw))...), []*hlo.Instruction{x})
	}
	stacked := s.add(hlo.OpBitcastConvert, stackedShape, []*hlo.Instruction{v})
	var parts []*hlo.Instruction
	for i := range int64(2) {
		sl := make([]hlo.SliceDim, len(dims)+1)
		for d, n := range dims {
			sl[d] = hlo.SliceDim{Start: 0, Limit: n, Stride: 1}
		}
		sl[len(dims)] = hlo.SliceDim{Start: i, Limit: i + 1, Stride: 1}
		one := s.add(hlo.OpSlice, hlo.ArrayShape(p, append(slices.Clone(dims), 1)...), []*hlo.Instruction{stacked}, hlo.Attr{Name: "slice", Value: sl})
		parts = append(parts, s.add(hlo.OpReshape, hlo.ArrayShape(p, dims...), []*hlo.Instruction{one}))
	}
	return []*hlo.Instruction{s.add(hlo.OpComplex, sh, parts)}, nil
}
