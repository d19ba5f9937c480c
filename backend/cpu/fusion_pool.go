package cpu

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Pool windows: a max (or min) pool written as a chain of elementwise
// maxima of strided slices, one slice per window offset, of the input
// padded with the op's identity (how the ONNX front end writes small
// pools, so that they fuse) becomes one reduce-window over the unpadded
// input with the padding in its window. As slices, the pool stored the
// padded input (a pass over it) and read it back through one strided
// index map per offset: half a millisecond for ResNet's stem pool of
// 1.6 MB. The reduce-window's kernel folds the channels of a
// channels-last image as vector runs and skips the padding.
//
// The values are the chain's, and on this backend so are the bits: its
// reduce-window kernels fold init and then the window's elements in
// row-major window order with the maximum (or minimum) of the
// elementwise op, which keeps the first of equal values (-0 and +0) and
// the first NaN; the chain folds the first offset's slice and then the
// others in row-major order, the running value on the left. Init is the
// op's identity (max(-inf, x) is x), and so is the padding the chain
// reads (max(acc, -inf) is acc). (The evaluator's reduce-window orders
// -0 below +0, so there the signs of zeros may differ.)

// poolWindows switches the pass on; tests turn it off to compare.
var poolWindows = true

// fusePoolWindows rewrites c's pool chains, returning how many.
func fusePoolWindows(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	if !poolWindows {
		return 0, nil
	}
	users := c.Users()
	made := 0
	for _, r := range slices.Clone(c.Instructions) {
		p, ok := matchPoolChain(r, users, c.Root)
		if !ok {
			continue
		}
		p.install(m, c, names)
		made++
	}
	if made == 0 {
		return 0, nil
	}
	return made, c.SortTopologically()
}

// poolChain is a matched pool: the chain's top r, its inner nodes, the
// unpadded input x, the identity init (nil: to make) and the window.
type poolChain struct {
	r      *hlo.Instruction
	chain  []*hlo.Instruction
	x      *hlo.Instruction
	init   *hlo.Instruction
	window *hlo.Window
}

// matchPoolChain matches r as the top of a pool chain whose inner nodes
// only the chain reads (root is the computation's result).
func matchPoolChain(r *hlo.Instruction, users map[*hlo.Instruction][]*hlo.Instruction, root *hlo.Instruction) (*poolChain, bool) {
	op := r.Opcode
	if op != hlo.OpMaximum && op != hlo.OpMinimum || !r.Shape.DType.IsFloat() || !plainArray(r.Shape) {
		return nil, false
	}
	if us := users[r]; len(us) == 1 && us[0].Opcode == op && us[0].Operands[0] == r && len(r.ControlPredecessors) == 0 {
		return nil, false // inside a longer chain
	}
	var leaves, chain []*hlo.Instruction
	x := r
	for x.Opcode == op && len(x.ControlPredecessors) == 0 && (x == r || len(users[x]) == 1 && x != root) {
		chain = append(chain, x)
		leaves = append(leaves, x.Operands[1])
		x = x.Operands[0]
	}
	leaves = append(leaves, x)
	slices.Reverse(leaves)
	if len(leaves) < 2 {
		return nil, false
	}
	src, ok := commonSliceSource(leaves, r.Shape)
	if !ok {
		return nil, false
	}
	p := &poolChain{r: r, chain: chain, x: src}
	lo := make([]int64, r.Shape.Rank())
	if src.Opcode == hlo.OpPad && identityOf(src.Operands[1], op) {
		if padLows(src, lo) {
			p.x, p.init = src.Operands[0], src.Operands[1]
		} else {
			clear(lo)
		}
	}
	if p.init == nil && !canMakeIdentity(r.Shape.DType) {
		return nil, false
	}
	p.window, ok = chainWindow(leaves, p.x.Shape.Dims, lo, r.Shape.Dims)
	return p, ok
}

// commonSliceSource returns the array every leaf slices, when each is a
// slice of it with out's dimensions and all share their strides.
func commonSliceSource(leaves []*hlo.Instruction, out hlo.Shape) (*hlo.Instruction, bool) {
	var src *hlo.Instruction
	var strides []int64
	for _, l := range leaves {
		if l.Opcode != hlo.OpSlice || len(l.ControlPredecessors) > 0 || !l.Shape.SameDims(out) {
			return nil, false
		}
		dims := sliceDims(l)
		st := make([]int64, len(dims))
		for d, s := range dims {
			st[d] = max(s.Stride, 1)
		}
		if src == nil {
			src, strides = l.Operands[0], st
		}
		if l.Operands[0] != src || !slices.Equal(st, strides) {
			return nil, false
		}
	}
	return src, src.Shape.DType == out.DType && plainArray(src.Shape)
}

func sliceDims(in *hlo.Instruction) []hlo.SliceDim {
	v, _ := in.Attr("slice")
	d, _ := v.([]hlo.SliceDim)
	return d
}

// padLows fills lo with pad's low padding, when the pad has no interior
// padding and no negative padding (which slices rather than pads).
func padLows(pad *hlo.Instruction, lo []int64) bool {
	v, _ := pad.Attr("padding")
	cfg, _ := v.(hlo.PaddingConfig)
	if len(cfg) != len(lo) || len(pad.ControlPredecessors) > 0 {
		return false
	}
	for d, p := range cfg {
		if p.Interior != 0 || p.Lo < 0 || p.Hi < 0 {
			return false
		}
		lo[d] = p.Lo
	}
	return true
}

// identityOf reports whether v is a constant scalar identity of op: -inf
// for maximum, +inf for minimum.
func identityOf(v *hlo.Instruction, op hlo.Opcode) bool {
	if v.Opcode != hlo.OpConstant || v.Literal == nil || v.Literal.IsElided() || v.Shape.Rank() != 0 {
		return false
	}
	return v.Literal.GetFloat64(0) == identityValue(op)
}

func identityValue(op hlo.Opcode) float64 {
	if op == hlo.OpMaximum {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

func canMakeIdentity(t hlo.DType) bool { return t == hlo.F32 || t == hlo.F64 }

// chainWindow returns the window whose row-major offsets are the leaves'
// starts in order, over an input of dims whose low padding (in the
// leaves' coordinates) is lo, giving an output of out, or false.
func chainWindow(leaves []*hlo.Instruction, dims, lo, out []int64) (*hlo.Window, bool) {
	rank := len(dims)
	first, last := sliceDims(leaves[0]), sliceDims(leaves[len(leaves)-1])
	w := &hlo.Window{Dims: make([]hlo.WindowDim, rank)}
	size := make([]int64, rank)
	for d := range rank {
		wd := hlo.WindowDim{Size: 1, Stride: max(first[d].Stride, 1), LhsDilation: 1, RhsDilation: 1}
		if span := last[d].Start - first[d].Start; span > 0 {
			// The second offset along d is at the start of the leaf
			// that steps d alone.
			wd.RhsDilation = 0
			for _, l := range leaves[1:] {
				if s := sliceDims(l)[d].Start - first[d].Start; s > 0 {
					wd.RhsDilation = s
					break
				}
			}
			if wd.RhsDilation <= 0 || span%wd.RhsDilation != 0 {
				return nil, false
			}
			wd.Size = span/wd.RhsDilation + 1
		}
		wd.PadLo = lo[d] - first[d].Start
		need := (out[d]-1)*wd.Stride + (wd.Size-1)*wd.RhsDilation + 1
		wd.PadHi = max(need-dims[d]-wd.PadLo, 0)
		if wd.PadLo < 0 || (dims[d]+wd.PadLo+wd.PadHi-need)/wd.Stride != 0 {
			return nil, false
		}
		w.Dims[d], size[d] = wd, wd.Size
	}
	return w, leavesInWindowOrder(leaves, w, size)
}

// leavesInWindowOrder checks that leaf i starts at the window's i-th
// offset in row-major order, and that they are all of them.
func leavesInWindowOrder(leaves []*hlo.Instruction, w *hlo.Window, size []int64) bool {
	n := int64(1)
	for _, s := range size {
		n *= s
	}
	if n != int64(len(leaves)) {
		return false
	}
	first := sliceDims(leaves[0])
	for i, l := range leaves {
		at := int64(i)
		dims := sliceDims(l)
		for d := len(size) - 1; d >= 0; d-- {
			k := at % size[d]
			at /= size[d]
			if dims[d].Start != first[d].Start+k*w.Dims[d].RhsDilation {
				return false
			}
		}
	}
	return true
}

// install puts a reduce-window in the chain top's place and removes the
// chain (the slices and the pad are left to DCE).
func (p *poolChain) install(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) {
	t := p.r.Shape.DType
	if p.init == nil {
		lit := hlo.ScalarLiteral(float32(identityValue(p.r.Opcode)))
		if t == hlo.F64 {
			lit = hlo.ScalarLiteral(identityValue(p.r.Opcode))
		}
		p.init = c.AddInstruction(&hlo.Instruction{Name: names.Unique("constant"), Opcode: hlo.OpConstant,
			Shape: hlo.ScalarShape(t), Literal: lit})
	}
	rc := &hlo.Computation{Name: names.Unique("pool_" + p.r.Opcode.String())}
	s := hlo.ScalarShape(t)
	a := rc.AddInstruction(&hlo.Instruction{Name: names.Unique("a"), Opcode: hlo.OpParameter, Shape: s})
	b := rc.AddInstruction(&hlo.Instruction{Name: names.Unique("b"), Opcode: hlo.OpParameter, Shape: s.Clone(), ParamNumber: 1})
	rc.Params = []*hlo.Instruction{a, b}
	rc.Root = rc.AddInstruction(&hlo.Instruction{Name: names.Unique("r"), Opcode: p.r.Opcode, Shape: s.Clone(),
		Operands: []*hlo.Instruction{a, b}})
	m.Computations = slices.Insert(m.Computations, slices.Index(m.Computations, c), rc)
	rc.Parent = m
	rw := &hlo.Instruction{Name: names.Unique("reduce-window"), Opcode: hlo.OpReduceWindow, Shape: p.r.Shape.Clone(),
		Operands: []*hlo.Instruction{p.x, p.init},
		Attrs:    []hlo.Attr{{Name: "window", Value: p.window}, {Name: "to_apply", Value: rc}}}
	c.AddInstruction(rw)
	c.ReplaceAllUses(p.r, rw)
	dead := map[*hlo.Instruction]bool{}
	for _, x := range p.chain {
		dead[x] = true
	}
	c.RemoveInstructions(dead)
}
