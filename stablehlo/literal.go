package stablehlo

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// denseLiteral converts a dense attribute to a literal of shape s (the
// attribute's own type when s is the zero Shape).
func denseLiteral(d mlir.DenseAttr, s hlo.Shape) (*hlo.Literal, error) {
	if s.DType == hlo.Invalid {
		var err error
		if s, err = shapeOfType(d.Type); err != nil {
			return nil, err
		}
	}
	if !s.IsArray() {
		return nil, fmt.Errorf("dense literal of non-array shape %s: %w", s, ErrUnsupported)
	}
	lit := hlo.NewLiteral(s)
	n := lit.Len()
	if d.Hex != nil {
		return lit, fillHex(lit, d.Hex, n)
	}
	if len(d.Elems) == 0 {
		if n == 0 {
			return lit, nil
		}
		return nil, fmt.Errorf("dense literal has no elements for %d", n)
	}
	if !d.Splat && len(d.Elems) != 1 && len(d.Elems) != n {
		return nil, fmt.Errorf("dense literal has %d elements, its type %d", len(d.Elems), n)
	}
	if len(d.Elems) == 1 || d.Splat {
		if n == 0 {
			return lit, nil
		}
		if err := setToken(lit, 0, d.Elems[0]); err != nil {
			return nil, err
		}
		splat(lit)
		return lit, nil
	}
	for i, tok := range d.Elems {
		if err := setToken(lit, i, tok); err != nil {
			return nil, err
		}
	}
	return lit, nil
}

// splat copies a literal's element 0 to all the others. JAX writes its
// constants as splats (`dense<1.0> : tensor<16x64xf32>`), so this is most
// of a model's constant data: the storage slice is filled by doubling
// copies rather than element by element through the literal's accessors,
// which was a fifth of BenchmarkImport1000Ops.
func splat(l *hlo.Literal) {
	switch d := l.Data().(type) {
	case []bool:
		fill(d)
	case []int8:
		fill(d)
	case []int16:
		fill(d)
	case []int32:
		fill(d)
	case []int64:
		fill(d)
	case []uint8:
		fill(d)
	case []uint16:
		fill(d)
	case []uint32:
		fill(d)
	case []uint64:
		fill(d)
	case []float32:
		fill(d)
	case []float64:
		fill(d)
	case []complex64:
		fill(d)
	case []complex128:
		fill(d)
	default:
		for i := 1; i < l.Len(); i++ {
			copyElem(l, i, 0)
		}
	}
}

// fill copies s[0] to every element of s.
func fill[T any](s []T) {
	for k := 1; k < len(s); k *= 2 {
		copy(s[k:], s[:k])
	}
}

func copyElem(l *hlo.Literal, dst, src int) {
	if l.DType().IsComplex() {
		l.SetComplex128(dst, l.GetComplex128(src))
		return
	}
	l.SetBits(dst, l.Bits(src))
}

// storageBytes is how many bytes MLIR's dense storage gives one element
// (sub-byte types take a byte; complex numbers two parts).
func storageBytes(t hlo.DType) int {
	if t == hlo.Pred {
		return 1
	}
	return max((t.Bits()+7)/8, 1)
}

// fillHex fills a literal from MLIR's little-endian hex blob; a blob of
// one element is a splat.
func fillHex(lit *hlo.Literal, blob []byte, n int) error {
	t := lit.DType()
	w := storageBytes(t)
	splat := false
	switch {
	case len(blob) == w*n:
	case len(blob) == w && n > 0:
		splat = true
	default:
		return fmt.Errorf("hex literal of %d bytes for %d elements of %s", len(blob), n, t)
	}
	for i := range n {
		off := i * w
		if splat {
			off = 0
		}
		b := blob[off : off+w]
		switch t {
		case hlo.C64:
			re := math.Float32frombits(binary.LittleEndian.Uint32(b[:4]))
			im := math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
			lit.SetComplex128(i, complex(float64(re), float64(im)))
		case hlo.C128:
			re := math.Float64frombits(binary.LittleEndian.Uint64(b[:8]))
			im := math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
			lit.SetComplex128(i, complex(re, im))
		default:
			var v uint64
			for k := w - 1; k >= 0; k-- {
				v = v<<8 | uint64(b[k])
			}
			if t.Bits() < 64 {
				v &= 1<<t.Bits() - 1
			}
			if t == hlo.Pred {
				v &= 1
			}
			lit.SetBits(i, v)
		}
	}
	return nil
}

// setToken sets element i from its MLIR token.
func setToken(lit *hlo.Literal, i int, tok string) error {
	t := lit.DType()
	tok = strings.TrimSpace(tok)
	switch {
	case t.IsComplex():
		re, im, err := complexToken(tok, t.ComplexComponent())
		if err != nil {
			return err
		}
		lit.SetComplex128(i, complex(re, im))
	case t == hlo.Pred:
		switch tok {
		case "true", "1":
			lit.SetBool(i, true)
		case "false", "0":
			lit.SetBool(i, false)
		default:
			return fmt.Errorf("bad boolean %q", tok)
		}
	case t.IsFloat():
		if isHexToken(tok) {
			b, err := strconv.ParseUint(tok[2:], 16, 64)
			if err != nil {
				return fmt.Errorf("bad float bits %q", tok)
			}
			lit.SetBits(i, b)
			return nil
		}
		v, err := parseFloat(tok)
		if err != nil {
			return err
		}
		lit.SetFloat64(i, v)
	default:
		return setIntToken(lit, i, tok)
	}
	return nil
}

func setIntToken(lit *hlo.Literal, i int, tok string) error {
	t := lit.DType()
	if tok == "true" || tok == "false" {
		lit.SetBool(i, tok == "true")
		return nil
	}
	if isHexToken(tok) {
		b, err := strconv.ParseUint(tok[2:], 16, 64)
		if err != nil {
			return fmt.Errorf("bad integer %q", tok)
		}
		lit.SetBits(i, b&mask(t))
		return nil
	}
	if v, err := strconv.ParseInt(tok, 10, 64); err == nil {
		lit.SetBits(i, uint64(v)&mask(t))
		return nil
	}
	v, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		return fmt.Errorf("bad integer %q", tok)
	}
	lit.SetBits(i, v&mask(t))
	return nil
}

func mask(t hlo.DType) uint64 {
	if t.Bits() >= 64 {
		return math.MaxUint64
	}
	return 1<<t.Bits() - 1
}

func isHexToken(tok string) bool {
	return len(tok) > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')
}

// parseFloat reads a decimal float token, with MLIR's spellings of the
// special values.
func parseFloat(tok string) (float64, error) {
	switch strings.ToLower(tok) {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan", "+nan", "-nan":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, nil
		}
		return 0, fmt.Errorf("bad float %q", tok)
	}
	return v, nil
}

// complexToken reads "(re, im)", each part decimal or a hex bit pattern
// of the component type.
func complexToken(tok string, part hlo.DType) (float64, float64, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(tok, "("), ")")
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("bad complex %q", tok)
	}
	re, err := floatPart(strings.TrimSpace(a), part)
	if err != nil {
		return 0, 0, err
	}
	im, err := floatPart(strings.TrimSpace(b), part)
	return re, im, err
}

func floatPart(tok string, t hlo.DType) (float64, error) {
	if !isHexToken(tok) {
		return parseFloat(tok)
	}
	b, err := strconv.ParseUint(tok[2:], 16, 64)
	if err != nil {
		return 0, fmt.Errorf("bad float bits %q", tok)
	}
	if t == hlo.F32 {
		return float64(math.Float32frombits(uint32(b))), nil
	}
	return math.Float64frombits(b), nil
}

// scalarLiteral is a rank-0 literal of type t holding v.
func scalarLiteral(t hlo.DType, v float64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.ArrayShape(t))
	switch {
	case t.IsComplex():
		l.SetComplex128(0, complex(v, 0))
	case t == hlo.Pred:
		l.SetBool(0, v != 0)
	case t.IsFloat():
		l.SetFloat64(0, v)
	default:
		l.SetInt64(0, int64(v))
	}
	return l
}
