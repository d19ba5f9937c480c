package ops

import (
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "Identity", Lower: func(c *Ctx) error {
		c.Out = []*Val{c.In[0]}
		return nil
	}})
	Register(Op{Name: "Constant", Lower: lowerConstant})
	Register(Op{Name: "Shape", ShapeInputs: []int{0}, Lower: lowerShape})
	Register(Op{Name: "Reshape", ConstInputs: []int{1}, Lower: lowerReshape})
}

func lowerConstant(c *Ctx) error {
	t, err := c.Node.TensorAttr("value")
	if err != nil {
		return err
	}
	if t == nil {
		return c.Unsupported("only the value attribute is supported")
	}
	c.SetConst(0, t)
	return nil
}

// lowerShape: the shape is static at compile time, so the output is a
// constant (opset 15's start and end slice it).
func lowerShape(c *Ctx) error {
	dims := c.In[0].Dims()
	r := int64(len(dims))
	start, end := c.Node.Int("start", 0), c.Node.Int("end", r)
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return min(max(v, 0), r)
	}
	start, end = clamp(start), clamp(end)
	if end < start {
		end = start
	}
	vals := append([]int64(nil), dims[start:end]...)
	c.SetConst(0, IntTensor(vals, int64(len(vals))))
	return nil
}

func lowerReshape(c *Ctx) error {
	shape, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	x := c.Input(0)
	in := x.Dims()
	allowZero := c.Node.Int("allowzero", 0) != 0
	out := make([]int64, len(shape))
	infer, known := -1, int64(1)
	for i, d := range shape {
		switch {
		case d == 0 && !allowZero:
			if i >= len(in) {
				return c.Errorf("shape %v copies dimension %d of a rank-%d input", shape, i, len(in))
			}
			out[i] = in[i]
		case d == -1:
			if infer >= 0 {
				return c.Errorf("shape %v has two -1 dimensions", shape)
			}
			infer = i
			continue
		case d < 0:
			return c.Errorf("shape %v has a negative dimension", shape)
		default:
			out[i] = d
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 {
			return c.Errorf("shape %v: cannot infer the -1 dimension next to a 0", shape)
		}
		out[infer] = numElems(in) / known
	}
	c.Set(0, xb.Reshape(x, out...))
	return nil
}

var _ = onnx.Float
