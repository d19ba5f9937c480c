package conformance

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// Compare checks got against want with FORMAT.md's rule: shapes and element
// types exactly; integers and pred exactly; floats (each part of a complex)
// within atol + rtol*|want|, NaN only where NaN is expected (any NaN), and
// infinities exactly. It describes the first mismatch.
func Compare(got, want *hlo.Literal, tol Tolerance) error {
	return compareAt(got, want, tol, "")
}

func compareAt(got, want *hlo.Literal, tol Tolerance, where string) error {
	gs, ws := got.Shape(), want.Shape()
	if ws.IsTuple() {
		if !gs.IsTuple() || len(got.Elements()) != len(want.Elements()) {
			return fmt.Errorf("%sresult shape %s, want %s", where, gs.HumanString(), ws.HumanString())
		}
		for i := range want.Elements() {
			if err := compareAt(got.Elements()[i], want.Elements()[i], tol, fmt.Sprintf("%stuple element %d: ", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if gs.DType != ws.DType || !gs.SameDims(ws) {
		return fmt.Errorf("%sresult shape %s, want %s", where, gs.HumanString(), ws.HumanString())
	}
	n := int(ws.NumElements())
	t := ws.DType
	for i := 0; i < n; i++ {
		var ok bool
		var g, w string
		switch {
		case t.IsComplex():
			gc, wc := got.GetComplex128(i), want.GetComplex128(i)
			ok = floatClose(real(gc), real(wc), tol) && floatClose(imag(gc), imag(wc), tol)
			g, w = fmt.Sprint(gc), fmt.Sprint(wc)
		case t.IsFloat():
			gf, wf := got.GetFloat64(i), want.GetFloat64(i)
			ok = floatClose(gf, wf, tol)
			g, w = fmt.Sprint(gf), fmt.Sprint(wf)
		default:
			ok = got.Bits(i) == want.Bits(i)
			g, w = fmt.Sprint(got.GetInt64(i)), fmt.Sprint(want.GetInt64(i))
			if t.IsUnsigned() {
				g, w = fmt.Sprint(got.GetUint64(i)), fmt.Sprint(want.GetUint64(i))
			}
		}
		if !ok {
			return fmt.Errorf("%selement %d of %s: got %s, want %s", where, i, ws.HumanString(), g, w)
		}
	}
	return nil
}

func floatClose(got, want float64, tol Tolerance) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0):
		return got == want
	case math.IsNaN(got) || math.IsInf(got, 0):
		return false
	}
	return math.Abs(got-want) <= tol.Atol+tol.Rtol*math.Abs(want)
}
