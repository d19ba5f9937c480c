package cpu

import (
	"github.com/axle-ml/axle/hlo"
)

// Scalar computations that are not one recognised op — an argmax
// reducer, a comparator on two keys, a combiner with a select — compile
// to lane programs: every instruction of the computation becomes the
// backend's own elementwise kernel over arrays of `lanes` elements, so
// one run applies the computation to that many independent argument
// sets at once (the outputs of a reduce, say). The kernels are the ones
// the backend runs for the same ops at top level, so the results are
// theirs, bit for bit, and those match the evaluator. What remains per
// element is one kernel call per instruction per run, shared by the
// lanes; a reducer over few outputs, or a sort's comparator (one pair at
// a time), pays it in full.

// laneProg is a scalar computation compiled over lanes.
type laneProg struct {
	lanes int
	// params and vals are the computation's parameters' and instructions'
	// shapes over lanes; consts holds a constant's filled lanes.
	params []hlo.Shape
	vals   []hlo.Shape
	consts []*hlo.Literal
	steps  []laneStep
	// roots are the results: value indexes (see laneStep.args).
	roots []int
}

// laneStep runs kernel k into value dst from its argument values: index
// i < len(params) is parameter i, len(params)+j is instruction j.
type laneStep struct {
	k    kernelFunc
	args []int
	dst  int
}

// laneFrame holds one run's values; a frame is used by one goroutine.
type laneFrame struct {
	vals []*hlo.Literal
	ops  [][]*hlo.Literal
}

// compileLanes compiles c, whose parameters and results are scalars
// (the root may be a tuple of them), over the given number of lanes, or
// returns false when one of its instructions has no elementwise kernel.
func compileLanes(c *hlo.Computation, lanes int) (*laneProg, bool) {
	if c == nil || c.Root == nil || lanes <= 0 {
		return nil, false
	}
	p := &laneProg{lanes: lanes}
	np := len(c.ParamShapes())
	p.params = make([]hlo.Shape, np)
	clones := map[*hlo.Instruction]*hlo.Instruction{}
	index := map[*hlo.Instruction]int{}
	for _, in := range c.Instructions {
		if in.Opcode == hlo.OpParameter {
			k := int(in.ParamNumber)
			if !in.Shape.IsScalar() || k < 0 || k >= np {
				return nil, false
			}
			p.params[k] = laneShape(in.Shape.DType, lanes)
			clones[in] = &hlo.Instruction{Name: in.Name, Opcode: hlo.OpParameter, Shape: p.params[k], ParamNumber: in.ParamNumber}
			index[in] = k
		}
	}
	for _, in := range c.Instructions {
		switch in.Opcode {
		case hlo.OpParameter:
			continue
		case hlo.OpTuple:
			if in != c.Root {
				return nil, false
			}
			for _, o := range in.Operands {
				if _, ok := index[o]; !ok {
					return nil, false
				}
				p.roots = append(p.roots, index[o])
			}
			continue
		}
		if !in.Shape.IsScalar() {
			return nil, false
		}
		s := laneShape(in.Shape.DType, lanes)
		cl := &hlo.Instruction{Name: in.Name, Opcode: in.Opcode, Shape: s, Attrs: in.Attrs}
		step := laneStep{dst: np + len(p.vals)}
		for _, o := range in.Operands {
			if _, ok := index[o]; !ok {
				return nil, false
			}
			cl.Operands = append(cl.Operands, clones[o])
			step.args = append(step.args, index[o])
		}
		p.vals = append(p.vals, s)
		p.consts = append(p.consts, nil)
		if in.Opcode == hlo.OpConstant {
			l, ok := laneConstant(in, s)
			if !ok {
				return nil, false
			}
			p.consts[len(p.consts)-1] = l
		} else {
			k, ok := lanesKernel(cl)
			if !ok {
				return nil, false
			}
			step.k = k
			p.steps = append(p.steps, step)
		}
		clones[in], index[in] = cl, step.dst
	}
	if c.Root.Opcode != hlo.OpTuple {
		p.roots = []int{index[c.Root]}
	}
	return p, true
}

// laneShape is an array of n elements of type t.
func laneShape(t hlo.DType, n int) hlo.Shape {
	s := hlo.ArrayShape(t, int64(n))
	s.SetDefaultLayout()
	return s
}

// lanesKernel is the elementwise kernel of an instruction over lanes.
func lanesKernel(in *hlo.Instruction) (kernelFunc, bool) {
	if k, ok := lowerMovement(in, 1); ok {
		return k, true
	}
	return lowerElementwise(in, 1)
}

// laneConstant fills every lane with a scalar constant's value.
func laneConstant(in *hlo.Instruction, s hlo.Shape) (*hlo.Literal, bool) {
	if in.Literal == nil || in.Literal.IsElided() || in.Literal.Len() != 1 {
		return nil, false
	}
	l := hlo.NewLiteral(s)
	offs := make([]int, s.Dims[0])
	return l, gatherLanes(l, in.Literal, offs)
}

// frame returns fresh values for one goroutine's runs.
func (p *laneProg) frame() *laneFrame {
	f := &laneFrame{vals: make([]*hlo.Literal, len(p.params)+len(p.vals))}
	for i, s := range p.params {
		f.vals[i] = hlo.NewLiteral(s)
	}
	for j, s := range p.vals {
		if l := p.consts[j]; l != nil {
			f.vals[len(p.params)+j] = l // read only
			continue
		}
		f.vals[len(p.params)+j] = hlo.NewLiteral(s)
	}
	f.ops = make([][]*hlo.Literal, len(p.steps))
	for i, st := range p.steps {
		for _, a := range st.args {
			f.ops[i] = append(f.ops[i], f.vals[a])
		}
	}
	return f
}

// run computes the results from the parameters' lanes in f.
func (p *laneProg) run(f *laneFrame) error {
	for i, st := range p.steps {
		if err := st.k(f.vals[st.dst], f.ops[i]); err != nil {
			return err
		}
	}
	return nil
}

// result is the literal holding result r after run.
func (p *laneProg) result(f *laneFrame, r int) *hlo.Literal { return f.vals[p.roots[r]] }

// gatherLanes sets dst[j] = src[offs[j]] for array literals storing
// elements of one width (copied as words), and reports whether they do.
func gatherLanes(dst, src *hlo.Literal, offs []int) bool {
	switch sameWidth(dst, src) {
	case 1:
		gatherT(wordsOf[uint8](dst), wordsOf[uint8](src), offs)
	case 2:
		gatherT(wordsOf[uint16](dst), wordsOf[uint16](src), offs)
	case 4:
		gatherT(wordsOf[uint32](dst), wordsOf[uint32](src), offs)
	case 8:
		gatherT(wordsOf[uint64](dst), wordsOf[uint64](src), offs)
	case 16:
		gatherT(wordsOf[[2]uint64](dst), wordsOf[[2]uint64](src), offs)
	default:
		return false
	}
	return true
}

// scatterLanes sets dst[offs[j]] = src[j] (the inverse of gatherLanes).
func scatterLanes(dst, src *hlo.Literal, offs []int) bool {
	switch sameWidth(dst, src) {
	case 1:
		scatterT(wordsOf[uint8](dst), wordsOf[uint8](src), offs)
	case 2:
		scatterT(wordsOf[uint16](dst), wordsOf[uint16](src), offs)
	case 4:
		scatterT(wordsOf[uint32](dst), wordsOf[uint32](src), offs)
	case 8:
		scatterT(wordsOf[uint64](dst), wordsOf[uint64](src), offs)
	case 16:
		scatterT(wordsOf[[2]uint64](dst), wordsOf[[2]uint64](src), offs)
	default:
		return false
	}
	return true
}

// copyLanes sets dst[j] = src[j] where mask[j] (every j for a nil mask).
func copyLanes(dst, src *hlo.Literal, mask []bool) {
	w := sameWidth(dst, src)
	if w == 0 {
		return
	}
	d, s := bytesOf(dst), bytesOf(src)
	if mask == nil {
		copy(d, s)
		return
	}
	for j, m := range mask {
		if m {
			copy(d[j*w:(j+1)*w], s[j*w:(j+1)*w])
		}
	}
}

// sameWidth is the storage width of dst and src's elements, or 0 when
// they differ or are not arrays.
func sameWidth(dst, src *hlo.Literal) int {
	if w := storageWidth(dst.DType()); w > 0 && storageWidth(src.DType()) == w {
		return w
	}
	return 0
}

func gatherT[T any](dst, src []T, offs []int) {
	for j, o := range offs {
		dst[j] = src[o]
	}
}

func scatterT[T any](dst, src []T, offs []int) {
	for j, o := range offs {
		dst[o] = src[j]
	}
}
