package tile

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// Multi-output tile programs: a loop fusion whose fused root is a tuple
// of values of one shape (fusion_multi.go makes them) runs as one tile
// program with several output slots. Each tile computes every slot once
// and leaves each output's tile in that output's storage, so the
// operands the outputs share are read from memory once. Row programs
// (fusions holding reductions) are not merged, so they never get here.

// CompileMulti compiles a fusion whose fused root is a tuple of float
// arrays of the same dimensions, none of them a fusion parameter.
func CompileMulti(in *hlo.Instruction) (*Prog, error) {
	fc := in.Computation("calls")
	if fc == nil || fc.Root == nil || fc.Root.Opcode != hlo.OpTuple || len(fc.Root.Operands) == 0 {
		return nil, fmt.Errorf("fusion %s: the fused root is not a tuple", in.Name)
	}
	roots := fc.Root.Operands
	shape := roots[0].Shape
	for _, r := range roots {
		// An output that is a parameter would be copied from its operand
		// after the tile, when an in-place output may have overwritten it.
		if r.Opcode == hlo.OpParameter || !r.Shape.SameDims(shape) || r.Shape.IsDynamic() {
			return nil, fmt.Errorf("fusion %s: output %s has no multi-output tile form", in.Name, r.Name)
		}
	}
	xs := slices.DeleteFunc(slices.Clone(fc.Instructions), func(x *hlo.Instruction) bool { return x == fc.Root })
	p, err := compileSlots(in, xs, roots, shape)
	if err != nil {
		return nil, err
	}
	if p.rowLen > 0 {
		return nil, fmt.Errorf("fusion %s: row programs have one output", in.Name)
	}
	return p, nil
}

// OutputInPlace lists, per output, the fusion operands the output may be
// written over: those the program reads only at the output's positions
// (never through an index map) and no longer reads once the output's
// tile is written — outputs computed straight into their storage are
// written halfway through the tile, so a later slot reading the operand
// would see the output instead.
func (p *Prog) OutputInPlace() [][]int {
	ks := make([][]int, len(p.outs))
	for k, r := range p.outs {
		for _, s := range p.slots {
			if s.kind == slotParam && !slices.Contains(p.gathered, s.param) && !slices.Contains(ks[k], s.param) &&
				!p.readAfter(s.param, r) {
				ks[k] = append(ks[k], s.param)
			}
		}
	}
	return ks
}

// readAfter reports whether a slot after slot r reads fusion operand j
// (decodes it, or computes on its storage).
func (p *Prog) readAfter(j, r int) bool {
	isParam := func(i int) bool { return p.slots[i].kind == slotParam && p.slots[i].param == j }
	for i := r + 1; i < len(p.slots); i++ {
		if isParam(i) || slices.ContainsFunc(p.slots[i].args[:p.slots[i].nargs], isParam) {
			return true
		}
	}
	return false
}

// output is one output's storage: f32 values or narrow bit patterns.
type output struct {
	f32  []float32
	bits []uint16
	fmt  minifloat.Format
}

func newOutput(l *hlo.Literal, n int) (output, error) {
	if l.Len() != n {
		return output{}, fmt.Errorf("fusion output of %d elements, want %d", l.Len(), n)
	}
	switch d := l.Data().(type) {
	case []float32:
		return output{f32: d}, nil
	case []uint16:
		if f, ok := minifloat.ByName(l.DType().String()); ok {
			return output{bits: d, fmt: f}, nil
		}
	}
	return output{}, fmt.Errorf("fusion output of type %s has no tile form", l.DType())
}

// RunMulti computes the program's outputs into outs (one array per
// output, in tuple order) from the operand values.
func (p *Prog) RunMulti(args, outs []*hlo.Literal, threads int) error {
	if len(outs) != len(p.outs) {
		return fmt.Errorf("fusion has %d outputs, got %d buffers", len(p.outs), len(outs))
	}
	if p.runSmall(args, outs, threads) {
		return nil
	}
	var small [8]operand
	params, err := newOperands(small[:0], args)
	if err != nil {
		return err
	}
	var smallOut [4]output
	dsts := smallOut[:0]
	for _, l := range outs {
		o, err := newOutput(l, p.n)
		if err != nil {
			return err
		}
		dsts = append(dsts, o)
	}
	tiles := (p.n + p.tile - 1) / p.tile
	threads = max(1, min(threads, tiles/8))
	if p.runsAlone() {
		threads = 1
	}
	if p.jit != nil {
		var smallArr [jit.MaxOutputs]jit.Array
		arrs := smallArr[:0]
		for _, l := range outs {
			a, ok := literalArray(l)
			if !ok || len(arrs) == len(smallArr) {
				return fmt.Errorf("fusion output of type %s has no generated form", l.DType())
			}
			arrs = append(arrs, a)
		}
		p.runJIT(params, arrs, threads)
		return nil
	}
	if threads == 1 {
		p.runMultiTiles(params, dsts, 0, tiles)
		return nil
	}
	sharedIn, sharedOut := slices.Clone(params), slices.Clone(dsts)
	kernels.Parallel(threads, func(t int) {
		p.runMultiTiles(sharedIn, sharedOut, t*tiles/threads, (t+1)*tiles/threads)
	})
	return nil
}

// runMultiTiles computes tiles [from, to) of every output.
func (p *Prog) runMultiTiles(params []operand, outs []output, from, to int) {
	sc := p.begin(params)
	defer p.pool.Put(sc)
	for tile := from; tile < to; tile++ {
		lo := tile * p.tile
		hi := min(lo+p.tile, p.n)
		if tile+1 < to {
			p.prefetch(params, hi, min(hi+p.tile, p.n))
		}
		for k, o := range outs {
			sc.dsts[k] = nil
			if o.f32 != nil {
				sc.dsts[k] = o.f32[lo:hi]
			}
		}
		p.computeTile(sc, params, lo, hi, sc.dsts)
		for k, o := range outs {
			v := sc.view[p.outs[k]]
			switch {
			case o.f32 == nil:
				EncodeNarrow(o.fmt, o.bits[lo:hi], v)
			case &v[0] != &o.f32[lo]:
				copy(o.f32[lo:hi], v)
			}
		}
	}
}
