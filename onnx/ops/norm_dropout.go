package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Dropout: the identity (and a mask of true) in inference; in training a
// random mask drawn from the seed attribute (deterministic: a fixed key
// without one), so that it compiles in a cluster like any other op.

func init() {
	Register(Op{Name: "Dropout", ConstInputs: []int{1, 2}, Lower: lowerDropout})
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
	var keep *xb.Op
	if n := numElems(x.Dims()); c.Node.Has("seed") && n <= dropMaxConstMask {
		// A seeded mask is fixed: draw it now, as ONNX's reference does
		// (numpy's legacy uniform draws from MT19937 seeded by seed).
		mt := newDropMT(uint32(c.Node.Int("seed", 0)))
		lit := hlo.NewLiteral(hlo.ArrayShape(hlo.Pred, x.Dims()...))
		mask := lit.Data().([]bool)
		for i := range mask {
			mask[i] = mt.float64() >= ratio
		}
		keep = c.B.Constant(lit)
	} else {
		key := xb.Const(c.B, []uint64{uint64(c.Node.Int("seed", 0)), 0x9e3779b97f4a7c15}, 2)
		bits, _ := xb.RngBitGenerator(key, xb.RngDefault, hlo.U32, x.Dims()...)
		threshold := uint32(min(ratio*(1<<32), math.MaxUint32))
		keep = xb.Ge(bits, xb.Scalar(c.B, threshold))
	}
	y := xb.Select(keep, xb.Mul(x, ScalarLike(x, 1/(1-ratio))), FullLike(x, 0))
	c.Set(0, y)
	c.Set(1, mask(keep))
	return nil
}

// dropMaxConstMask bounds the element count of a mask drawn at compile
// time.
const dropMaxConstMask = 1 << 22

// dropMT is the MT19937 generator, with numpy's legacy seeding and
// 53-bit doubles.
type dropMT struct {
	mt  [624]uint32
	idx int
}

func newDropMT(seed uint32) *dropMT {
	g := &dropMT{idx: 624}
	g.mt[0] = seed
	for i := 1; i < 624; i++ {
		p := g.mt[i-1]
		g.mt[i] = 1812433253*(p^(p>>30)) + uint32(i)
	}
	return g
}

func (g *dropMT) uint32() uint32 {
	const n, m = 624, 397
	if g.idx >= n {
		mix := func(a, b, c uint32) uint32 {
			y := a&0x80000000 | b&0x7fffffff
			v := c ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			return v
		}
		for k := 0; k < n; k++ {
			g.mt[k] = mix(g.mt[k], g.mt[(k+1)%n], g.mt[(k+m)%n])
		}
		g.idx = 0
	}
	y := g.mt[g.idx]
	g.idx++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// float64 is a uniform double in [0, 1) from two draws (numpy's legacy
// random_sample).
func (g *dropMT) float64() float64 {
	a, b := g.uint32()>>5, g.uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}
