package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Dropout: the identity (and a mask of true) in inference; in training a
// random mask drawn from the seed attribute.

func init() {
	Register(Op{Name: "Dropout", ConstInputs: []int{1, 2}, Random: true, Lower: lowerDropout})
}

func lowerDropout(c *Ctx) error {
	x := c.Input(0)
	t := x.DType()
	ratio := float64(c.Node.Float("ratio", 0.5))
	training := false
	if c.Opset >= 12 {
		if c.Has(1) {
			r, err := c.ConstFloats(1)
			if err != nil {
				return err
			}
			if len(r) != 1 {
				return c.Errorf("ratio is not a scalar")
			}
			ratio = r[0]
		}
		if c.Has(2) {
			m, err := c.ConstInts(2)
			if err != nil {
				return err
			}
			training = len(m) == 1 && m[0] != 0
		}
	} else if c.Opset < 7 {
		training = c.Node.Int("is_test", 0) == 0
	}
	maskType := hlo.Pred
	if c.Opset < 10 {
		maskType = t
	}
	mask := func(keep *xb.Op) *xb.Op {
		if maskType == hlo.Pred {
			return keep
		}
		return xb.Select(keep, FullLike(x, 1), FullLike(x, 0))
	}
	if !training || ratio == 0 {
		c.Set(0, x)
		c.Set(1, mask(xb.BroadcastTo(xb.Scalar(c.B, true), x.Dims()...)))
		return nil
	}
	if !(ratio > 0 && ratio < 1) || !t.IsFloat() {
		return c.Unsupported("ratio %v on %s", ratio, t)
	}
	seed := uint64(c.Node.Int("seed", 0))
	key := xb.Const(c.B, []uint64{seed, 0x9e3779b97f4a7c15}, 2)
	bits, _ := xb.RngBitGenerator(key, xb.RngDefault, hlo.U32, x.Dims()...)
	threshold := uint32(min(ratio*(1<<32), math.MaxUint32))
	keep := xb.Ge(bits, xb.Scalar(c.B, threshold))
	y := xb.Select(keep, xb.Mul(x, ScalarLike(x, 1/(1-ratio))), FullLike(x, 0))
	c.Set(0, y)
	c.Set(1, mask(keep))
	return nil
}
