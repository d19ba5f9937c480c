package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Signal ops: DFT and STFT as products with constant DFT matrices, and
// the window and mel filter bank generators (compile-time constants).

func init() {
	Register(Op{Name: "DFT", Since: 17, ConstInputs: []int{1}, Lower: lowerDFT})
	Register(Op{Name: "DFT", Since: 20, ConstInputs: []int{1, 2}, Lower: lowerDFT})
	Register(Op{Name: "STFT", Since: 17, ConstInputs: []int{1, 3}, Lower: lowerSTFT})
	for _, w := range []string{"HannWindow", "HammingWindow", "BlackmanWindow"} {
		Register(Op{Name: w, Since: 17, ConstInputs: []int{0}, Lower: lowerWindow})
	}
	Register(Op{Name: "MelWeightMatrix", Since: 17, ConstInputs: []int{0, 1, 2, 3, 4}, Lower: lowerMelWeightMatrix})
}

// signalDType is the output_datatype attribute as an HLO type.
func signalDType(c *Ctx, def onnx.ElemType) (hlo.DType, error) {
	et := onnx.ElemType(c.Node.Int("output_datatype", int64(def)))
	t := et.HLO()
	if t == hlo.Invalid || t == hlo.Pred {
		return t, c.Unsupported("output_datatype %d", et)
	}
	return t, nil
}

func lowerWindow(c *Ctx) error {
	sz, err := c.ConstInts(0)
	if err != nil {
		return err
	}
	if len(sz) != 1 || sz[0] < 0 {
		return c.Errorf("size must be one non-negative integer")
	}
	t, err := signalDType(c, onnx.Float)
	if err != nil {
		return err
	}
	n := sz[0]
	den := float64(n)
	if c.Node.Int("periodic", 1) == 0 {
		den = float64(n - 1)
	}
	vals := make([]float64, n)
	for i := range vals {
		a := 2 * math.Pi * float64(i) / den
		switch c.Node.Op {
		case "HannWindow":
			s := math.Sin(math.Pi * float64(i) / den)
			vals[i] = s * s
		case "HammingWindow":
			alpha := 25.0 / 46.0
			vals[i] = alpha - (1-alpha)*math.Cos(a)
		case "BlackmanWindow":
			vals[i] = 0.42 - 0.5*math.Cos(a) + 0.08*math.Cos(2*a)
		}
	}
	c.SetConst(0, onnx.TensorOf(literal(t, vals, n)))
	return nil
}

func lowerMelWeightMatrix(c *Ctx) error {
	ints := make([]int64, 3)
	for i := range ints {
		v, err := c.ConstFloats(i)
		if err != nil {
			return err
		}
		if len(v) != 1 {
			return c.Errorf("input %d must be a scalar", i)
		}
		ints[i] = int64(v[0])
	}
	fl := make([]float64, 2)
	for i := range fl {
		v, err := c.ConstFloats(3 + i)
		if err != nil {
			return err
		}
		if len(v) != 1 {
			return c.Errorf("input %d must be a scalar", 3+i)
		}
		fl[i] = v[0]
	}
	t, err := signalDType(c, onnx.Float)
	if err != nil {
		return err
	}
	nMel, dftLen, rate := ints[0], ints[1], ints[2]
	if nMel < 0 || dftLen < 0 || rate <= 0 {
		return c.Errorf("invalid sizes")
	}
	nSpec := dftLen/2 + 1
	lowMel := 2595 * math.Log10(1+fl[0]/700)
	highMel := 2595 * math.Log10(1+fl[1]/700)
	step := (highMel - lowMel) / float64(nMel+2)
	bins := make([]int64, nMel+2)
	for i := range bins {
		f := float64(i)*step + lowMel
		f = 700 * (math.Pow(10, f/2595) - 1)
		bins[i] = int64(math.Floor(float64(dftLen+1) * f / float64(rate)))
	}
	out := make([]float64, nSpec*nMel)
	set := func(j, i int64, v float64) {
		if j >= 0 && j < nSpec {
			out[j*nMel+i] = v
		}
	}
	for i := int64(0); i < nMel; i++ {
		lo, ce, hi := bins[i], bins[i+1], bins[i+2]
		if ce == lo {
			set(ce, i, 1)
		} else {
			for j := lo; j <= ce; j++ {
				set(j, i, float64(j-lo)/float64(ce-lo))
			}
		}
		if hi > ce {
			for j := ce; j < hi; j++ {
				set(j, i, float64(hi-j)/float64(hi-ce))
			}
		}
	}
	c.SetConst(0, onnx.TensorOf(literal(t, out, nSpec, nMel)))
	return nil
}

// signalDFT transforms the complex signal (re, im; im nil for a real one)
// along axis: length L (the input is cut or zero-padded to it), the
// first m outputs, inverse with the 1/L factor.
func signalDFT(b *xb.Builder, re, im *xb.Op, axis, L, m int64, inverse bool) (*xb.Op, *xb.Op) {
	n := re.Dims()[axis]
	if n > L {
		re = xb.SliceAxis(re, axis, 0, L)
		if im != nil {
			im = xb.SliceAxis(im, axis, 0, L)
		}
		n = L
	}
	ct := re.DType()
	cosv := make([]float64, m*n)
	sinv := make([]float64, m*n)
	sign := -1.0
	norm := 1.0
	if inverse {
		sign, norm = 1, 1/float64(L)
	}
	for k := int64(0); k < m; k++ {
		for t := int64(0); t < n; t++ {
			a := 2 * math.Pi * float64((k*t)%L) / float64(L)
			cosv[k*n+t] = math.Cos(a) * norm
			sinv[k*n+t] = sign * math.Sin(a) * norm
		}
	}
	C := b.Constant(literal(ct, cosv, m, n))
	S := b.Constant(literal(ct, sinv, m, n))
	apply := func(x, w *xb.Op) *xb.Op { return signalContract(x, w, axis) }
	// (re + i·im)(cos + i·sin) with sin already signed.
	yr := apply(re, C)
	yi := apply(re, S)
	if im != nil {
		yr = xb.Sub(yr, apply(im, S))
		yi = xb.Add(yi, apply(im, C))
	}
	return yr, yi
}

// signalContract contracts x's axis with the columns of w [m, n]; the
// result has w's rows in place of the axis.
func signalContract(x, w *xb.Op, axis int64) *xb.Op {
	r := int64(x.Rank())
	y := xb.DotGeneral(x, w, xb.DotDims{LhsContracting: []int64{axis}, RhsContracting: []int64{1}})
	perm := make([]int64, 0, r)
	for i := int64(0); i < r; i++ {
		switch {
		case i < axis:
			perm = append(perm, i)
		case i == axis:
			perm = append(perm, r-1)
		default:
			perm = append(perm, i-1)
		}
	}
	return xb.Transpose(y, perm...)
}

// signalIRFFT is the real inverse transform of length L of the half
// spectrum (re, im) along axis (numpy's irfft).
func signalIRFFT(b *xb.Builder, re, im *xb.Op, axis, L int64) *xb.Op {
	nk := min(re.Dims()[axis], L/2+1)
	re = xb.SliceAxis(re, axis, 0, nk)
	if im != nil {
		im = xb.SliceAxis(im, axis, 0, nk)
	}
	ar := make([]float64, L*nk)
	ai := make([]float64, L*nk)
	for t := int64(0); t < L; t++ {
		for k := int64(0); k < nk; k++ {
			w := 2.0
			if k == 0 || 2*k == L {
				w = 1
			}
			a := 2 * math.Pi * float64((k*t)%L) / float64(L)
			ar[t*nk+k] = w * math.Cos(a) / float64(L)
			ai[t*nk+k] = -w * math.Sin(a) / float64(L)
		}
	}
	ct := re.DType()
	y := signalContract(re, b.Constant(literal(ct, ar, L, nk)), axis)
	if im != nil {
		y = xb.Add(y, signalContract(im, b.Constant(literal(ct, ai, L, nk)), axis))
	}
	return y
}

// signalSplit splits [..., 1 or 2] into real and imaginary parts.
func signalSplit(x *xb.Op) (*xb.Op, *xb.Op, bool) {
	d := x.Dims()
	r := len(d)
	if r < 1 {
		return nil, nil, false
	}
	inner := d[:r-1]
	switch d[r-1] {
	case 1:
		return xb.Reshape(x, inner...), nil, true
	case 2:
		return xb.Reshape(xb.SliceAxis(x, int64(r-1), 0, 1), inner...), xb.Reshape(xb.SliceAxis(x, int64(r-1), 1, 2), inner...), true
	}
	return nil, nil, false
}

func signalJoin(re, im *xb.Op) *xb.Op {
	d := append(re.Dims(), 1)
	return xb.Concatenate(int64(len(d)-1), xb.Reshape(re, d...), xb.Reshape(im, d...))
}

func lowerDFT(c *Ctx) error {
	x := c.Input(0)
	dt := x.DType()
	ct := hlo.F64
	r := x.Rank()
	axis := c.Node.Int("axis", 1)
	if c.Opset >= 20 {
		axis = -2
		if c.Has(2) {
			a, err := c.ConstInts(2)
			if err != nil {
				return err
			}
			if len(a) != 1 {
				return c.Errorf("axis must be a scalar")
			}
			axis = a[0]
		}
	}
	ax, ok := NormAxis(axis, r)
	if !ok || ax == int64(r-1) {
		return c.Errorf("axis %d out of range for rank %d", axis, r)
	}
	re, im, ok := signalSplit(xb.Convert(x, ct))
	if !ok {
		return c.Errorf("last dimension must be 1 or 2")
	}
	L := x.Dims()[ax]
	inverse, onesided := c.Node.Int("inverse", 0) != 0, c.Node.Int("onesided", 0) != 0
	if inverse && onesided {
		L = 2 * (L - 1)
	}
	if c.Has(1) {
		l, err := c.ConstInts(1)
		if err != nil {
			return err
		}
		if len(l) != 1 || l[0] <= 0 {
			return c.Errorf("dft_length must be a positive scalar")
		}
		L = l[0]
	}
	if L <= 0 {
		return c.Errorf("empty transform")
	}
	if inverse && onesided {
		y := signalIRFFT(c.B, re, im, ax, L)
		c.Set(0, xb.Convert(xb.Reshape(y, append(y.Dims(), 1)...), dt))
		return nil
	}
	m := L
	if onesided {
		m = L/2 + 1
	}
	yr, yi := signalDFT(c.B, re, im, ax, L, m, inverse)
	c.Set(0, xb.Convert(signalJoin(yr, yi), dt))
	return nil
}

func lowerSTFT(c *Ctx) error {
	x := c.Input(0)
	dt := x.DType()
	ct := attnCalcType(dt)
	d := x.Dims()
	if len(d) != 3 {
		return c.Errorf("signal must be [batch, length, 1 or 2]")
	}
	st, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	if len(st) != 1 || st[0] <= 0 {
		return c.Errorf("frame_step must be a positive scalar")
	}
	step := st[0]
	var win *xb.Op
	winLen := int64(-1)
	if c.Has(2) {
		win = xb.Convert(c.Input(2), ct)
		winLen = win.Dims()[0]
	}
	fl := winLen
	if c.Has(3) {
		v, err := c.ConstInts(3)
		if err != nil {
			return err
		}
		if len(v) != 1 {
			return c.Errorf("frame_length must be a scalar")
		}
		fl = v[0]
	}
	if fl < 0 {
		fl = d[1]
	}
	if winLen < 0 {
		winLen = fl
	}
	frames := int64(0)
	if d[1] >= fl {
		frames = 1 + (d[1]-fl)/step
	}
	if frames <= 0 || winLen <= 0 {
		return c.Unsupported("no frames")
	}
	xc := xb.Convert(x, ct)
	// Frames of winLen samples: indices f·step + i, zero past the end.
	idx := make([]int64, frames*winLen)
	valid := make([]float64, frames*winLen)
	for f := int64(0); f < frames; f++ {
		for i := int64(0); i < winLen; i++ {
			p := f*step + i
			if p < d[1] {
				idx[f*winLen+i], valid[f*winLen+i] = p, 1
			}
		}
	}
	fr := xb.Take(xc, c.B.Constant(IntTensor(idx, frames, winLen).Lit), 1) // [B, frames, winLen, c]
	fd := fr.Dims()
	w := c.B.Constant(literal(ct, valid, frames, winLen))
	if win != nil {
		w = xb.Mul(w, xb.BroadcastInDim(win, []int64{frames, winLen}, 1))
	}
	fr = xb.Mul(fr, xb.BroadcastInDim(w, fd, 1, 2))
	re, im, ok := signalSplit(fr)
	if !ok {
		return c.Errorf("last dimension must be 1 or 2")
	}
	m := fl
	if c.Node.Int("onesided", 1) != 0 {
		m = fl/2 + 1
	}
	yr, yi := signalDFT(c.B, re, im, 2, fl, m, false)
	c.Set(0, xb.Convert(signalJoin(yr, yi), dt))
	return nil
}
