package eval_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

const laCasesDir = "../../shared/conformance/cases"

type laCaseValue struct {
	Shape string        `json:"shape"`
	Data  string        `json:"data"`
	Tuple []laCaseValue `json:"tuple"`
}

type laCaseFile struct {
	Name      string        `json:"name"`
	HLO       string        `json:"hlo"`
	Args      []laCaseValue `json:"args"`
	Expected  laCaseValue   `json:"expected"`
	Tolerance struct {
		Atol, Rtol float64
	} `json:"tolerance"`
}

func (v laCaseValue) literal() (*hlo.Literal, error) {
	if v.Shape == "" {
		elems := make([]*hlo.Literal, len(v.Tuple))
		for i, e := range v.Tuple {
			l, err := e.literal()
			if err != nil {
				return nil, err
			}
			elems[i] = l
		}
		return hlo.MakeTupleLiteral(elems...), nil
	}
	s, err := hlotext.ParseShape(v.Shape)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(v.Data)
	if err != nil {
		return nil, err
	}
	l := hlo.NewLiteral(s)
	w := max(s.DType.Bits()/8, 1)
	if s.DType.IsComplex() {
		h := w / 2
		for i := 0; i < l.Len(); i++ {
			re, im := laLEFloat(raw[2*i*h:], h), laLEFloat(raw[(2*i+1)*h:], h)
			l.SetComplex128(i, complex(re, im))
		}
		return l, nil
	}
	if len(raw) != w*l.Len() {
		return nil, fmt.Errorf("%s: %d bytes for %d elements", v.Shape, len(raw), l.Len())
	}
	for i := 0; i < l.Len(); i++ {
		var b uint64
		for k := w - 1; k >= 0; k-- {
			b = b<<8 | uint64(raw[i*w+k])
		}
		l.SetBits(i, b)
	}
	return l, nil
}

func laLEFloat(b []byte, w int) float64 {
	if w == 4 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// laCompare applies FORMAT.md's comparison rule.
func laCompare(got, want *hlo.Literal, atol, rtol float64) error {
	if !got.Shape().Equal(want.Shape()) && got.Shape().String() != want.Shape().String() {
		return fmt.Errorf("shape %s, want %s", got.Shape(), want.Shape())
	}
	if want.Shape().IsTuple() {
		for i, w := range want.Elements() {
			if err := laCompare(got.Elements()[i], w, atol, rtol); err != nil {
				return fmt.Errorf("tuple element %d: %w", i, err)
			}
		}
		return nil
	}
	t := want.DType()
	for i := 0; i < want.Len(); i++ {
		switch {
		case t.IsComplex():
			g, w := got.GetComplex128(i), want.GetComplex128(i)
			if !laFloatClose(real(g), real(w), atol, rtol) || !laFloatClose(imag(g), imag(w), atol, rtol) {
				return fmt.Errorf("element %d = %v, want %v", i, g, w)
			}
		case t.IsFloat():
			if g, w := got.GetFloat64(i), want.GetFloat64(i); !laFloatClose(g, w, atol, rtol) {
				return fmt.Errorf("element %d = %v, want %v", i, g, w)
			}
		default:
			if got.Bits(i) != want.Bits(i) {
				return fmt.Errorf("element %d = %#x, want %#x", i, got.Bits(i), want.Bits(i))
			}
		}
	}
	return nil
}

func laFloatClose(g, w, atol, rtol float64) bool {
	switch {
	case math.IsNaN(w):
		return math.IsNaN(g)
	case math.IsInf(w, 0):
		return g == w
	case math.IsNaN(g):
		return false
	}
	return math.Abs(g-w) <= atol+rtol*math.Abs(w)
}

// laRunCases runs every conformance case of op.
func laRunCases(t *testing.T, op string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(laCasesDir, op, "*.json"))
	if len(files) == 0 {
		t.Skipf("no conformance cases for %s under %s", op, laCasesDir)
	}
	eval.InstallTestShims()
	pass, skip := 0, 0
	for _, f := range files {
		var skipped bool
		ok := t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var c laCaseFile
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			m, err := hlotext.Parse(c.HLO, hlotext.Options{File: f})
			if err != nil {
				t.Fatal(err)
			}
			args := make([]*hlo.Literal, len(c.Args))
			for i, a := range c.Args {
				if args[i], err = a.literal(); err != nil {
					t.Fatalf("arg %d: %v", i, err)
				}
			}
			want, err := c.Expected.literal()
			if err != nil {
				t.Fatal(err)
			}
			got, err := eval.Run(m, args...)
			if errors.Is(err, eval.ErrUnimplemented) {
				skipped = true
				t.Skipf("depends on an op not yet in the evaluator: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := laCompare(got, want, c.Tolerance.Atol, c.Tolerance.Rtol); err != nil {
				t.Fatal(err)
			}
		})
		switch {
		case skipped:
			skip++
		case ok:
			pass++
		}
	}
	t.Logf("%s: %d/%d conformance cases pass, %d skipped", op, pass, len(files), skip)
}

func TestDotCases(t *testing.T)              { laRunCases(t, "dot") }
func TestReduceCases(t *testing.T)           { laRunCases(t, "reduce") }
func TestReduceWindowCases(t *testing.T)     { laRunCases(t, "reduce-window") }
func TestConvolutionCases(t *testing.T)      { laRunCases(t, "convolution") }
func TestMapCases(t *testing.T)              { laRunCases(t, "map") }
func TestSortCases(t *testing.T)             { laRunCases(t, "sort") }
func TestSelectAndScatterCases(t *testing.T) { laRunCases(t, "select-and-scatter") }
func TestTopKCases(t *testing.T)             { laRunCases(t, "topk") }
func TestCholeskyCases(t *testing.T)         { laRunCases(t, "cholesky") }
func TestTriangularSolveCases(t *testing.T)  { laRunCases(t, "triangular-solve") }
func TestFftCases(t *testing.T)              { laRunCases(t, "fft") }
