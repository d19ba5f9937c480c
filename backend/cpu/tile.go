package cpu

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// A tile program computes a loop fusion tile by tile: the flat output
// index space is cut into tiles of tileSize elements; for each tile, each
// fused instruction runs one typed loop over the tile, reading its
// operands' tiles (parameters are read in place, scalars are splatted
// once per worker). Dispatch costs one switch per instruction per tile.

const tileSize = 512

type slotKind uint8

const (
	slotParam slotKind = iota // a full-size fusion operand, read in place
	slotSplat                 // one value everywhere (a scalar constant, parameter or broadcast)
	slotOp                    // computed per tile
	// slotAlias is a broadcast of a scalar computed inside the fusion:
	// that scalar's slot already holds its value at every position of the
	// tile, so the broadcast reads it as it is.
	slotAlias
)

type slot struct {
	kind  slotKind
	param int        // slotParam, and slotSplat of a scalar parameter (else -1)
	value float32    // slotSplat of a constant
	from  int        // slotSplat of a broadcast: the scalar's slot
	op    hlo.Opcode // slotOp
	args  [2]int
}

type tileProg struct {
	slots []slot
	n     int
}

// compileLoop turns a kLoop fusion of f32 elementwise instructions into a
// tile program, or reports why it cannot.
func compileLoop(in *hlo.Instruction) (*tileProg, error) {
	fc := in.Computation("calls")
	if fc == nil || fc.Root == nil {
		return nil, fmt.Errorf("fusion %s has no fused computation", in.Name)
	}
	p := &tileProg{n: int(in.Shape.NumElements())}
	index := map[*hlo.Instruction]int{}
	for _, x := range fc.Instructions {
		s := slot{param: -1, from: -1}
		switch {
		case x.Opcode == hlo.OpParameter && x.Shape.Rank() == 0:
			s.kind, s.param = slotSplat, int(x.ParamNumber)
		case x.Opcode == hlo.OpParameter && x.Shape.SameDims(in.Shape):
			s.kind, s.param = slotParam, int(x.ParamNumber)
		case x.Opcode == hlo.OpConstant && x.Shape.Rank() == 0:
			s.kind, s.value = slotSplat, float32(x.Literal.GetFloat64(0))
		case x.Opcode == hlo.OpBroadcast && x.Operands[0].Shape.Rank() == 0:
			s.kind, s.from = slotSplat, index[x.Operands[0]]
			if p.slots[s.from].kind != slotSplat {
				s.kind = slotAlias
			}
		case tileOps[x.Opcode] && x.Shape.DType == hlo.F32:
			s.kind, s.op = slotOp, x.Opcode
			for k, o := range x.Operands {
				s.args[k] = index[o]
			}
		default:
			return nil, fmt.Errorf("fusion %s: %s %s has no tile form", in.Name, x.Opcode, x.Shape.HumanString())
		}
		if x.Shape.DType != hlo.F32 {
			return nil, fmt.Errorf("fusion %s: %s is not f32", in.Name, x.Name)
		}
		index[x] = len(p.slots)
		p.slots = append(p.slots, s)
	}
	if index[fc.Root] != len(p.slots)-1 {
		return nil, fmt.Errorf("fusion %s: the root is not the last instruction", in.Name)
	}
	return p, nil
}

// run computes the fusion into out from the operand values.
func (p *tileProg) run(args []*hlo.Literal, out []float32, threads int) error {
	params := make([][]float32, len(args))
	for i, a := range args {
		d, ok := a.Data().([]float32)
		if !ok {
			return fmt.Errorf("fusion operand %d is %s, not f32", i, a.DType())
		}
		params[i] = d
	}
	tiles := (p.n + tileSize - 1) / tileSize
	threads = max(1, min(threads, tiles/8)) // small fusions run inline
	kernels.Parallel(threads, func(t int) {
		p.runTiles(params, out, t*tiles/threads, (t+1)*tiles/threads)
	})
	return nil
}

func (p *tileProg) runTiles(params [][]float32, out []float32, from, to int) {
	bufs := make([][]float32, len(p.slots))
	store := make([]float32, len(p.slots)*tileSize)
	for i, s := range p.slots {
		bufs[i] = store[i*tileSize : (i+1)*tileSize]
		if s.kind == slotSplat {
			v := s.value
			switch {
			case s.param >= 0:
				v = params[s.param][0]
			case s.from >= 0:
				v = bufs[s.from][0]
			}
			for k := range bufs[i] {
				bufs[i][k] = v
			}
		}
	}
	view := make([][]float32, len(p.slots))
	last := len(p.slots) - 1
	for tile := from; tile < to; tile++ {
		lo := tile * tileSize
		hi := min(lo+tileSize, p.n)
		for i, s := range p.slots {
			switch s.kind {
			case slotParam:
				view[i] = params[s.param][lo:hi]
			case slotSplat:
				view[i] = bufs[i][:hi-lo]
			case slotAlias:
				view[i] = view[s.from]
			case slotOp:
				dst := bufs[i][:hi-lo]
				if i == last {
					dst = out[lo:hi]
				}
				applyOp(s.op, dst, view[s.args[0]], view[s.args[1]])
				view[i] = dst
			}
		}
		if p.slots[last].kind != slotOp {
			copy(out[lo:hi], view[last])
		}
	}
}

// applyOp computes one instruction over a tile; b is nil or ignored for
// unary ops.
func applyOp(op hlo.Opcode, dst, a, b []float32) {
	a = a[:len(dst)]
	switch op {
	case hlo.OpAdd:
		b = b[:len(dst)]
		for i := range dst {
			dst[i] = a[i] + b[i]
		}
	case hlo.OpSubtract:
		b = b[:len(dst)]
		for i := range dst {
			dst[i] = a[i] - b[i]
		}
	case hlo.OpMultiply:
		b = b[:len(dst)]
		for i := range dst {
			dst[i] = a[i] * b[i]
		}
	case hlo.OpDivide:
		b = b[:len(dst)]
		for i := range dst {
			dst[i] = a[i] / b[i]
		}
	case hlo.OpMaximum:
		b = b[:len(dst)]
		for i := range dst {
			dst[i] = nanMax(a[i], b[i])
		}
	case hlo.OpMinimum:
		b = b[:len(dst)]
		for i := range dst {
			dst[i] = nanMin(a[i], b[i])
		}
	case hlo.OpNegate:
		for i := range dst {
			dst[i] = -a[i]
		}
	case hlo.OpPower:
		b = b[:len(dst)]
		for i := range dst {
			dst[i] = float32(math.Pow(float64(a[i]), float64(b[i])))
		}
	default:
		f := unaryFuncs[op]
		for i := range dst {
			dst[i] = float32(f(float64(a[i])))
		}
	}
}

// nanMax and nanMin propagate NaN, as XLA's maximum and minimum do.
func nanMax(a, b float32) float32 {
	switch {
	case a != a:
		return a
	case b != b || b > a:
		return b
	}
	return a
}

func nanMin(a, b float32) float32 {
	switch {
	case a != a:
		return a
	case b != b || b < a:
		return b
	}
	return a
}

// unaryFuncs compute in float64 and round once, as the evaluator does, so
// the two agree exactly on these ops.
var unaryFuncs = map[hlo.Opcode]func(float64) float64{
	hlo.OpAbs: math.Abs, hlo.OpExp: math.Exp, hlo.OpLog: math.Log, hlo.OpTanh: math.Tanh,
	hlo.OpSqrt: math.Sqrt, hlo.OpFloor: math.Floor, hlo.OpCeil: math.Ceil, hlo.OpSin: math.Sin,
	hlo.OpCos: math.Cos, hlo.OpExpm1: math.Expm1, hlo.OpLog1p: math.Log1p, hlo.OpErf: math.Erf,
	hlo.OpCbrt:     math.Cbrt,
	hlo.OpLogistic: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	hlo.OpRsqrt:    func(x float64) float64 { return 1 / math.Sqrt(x) },
	hlo.OpSign: func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x
	},
}
