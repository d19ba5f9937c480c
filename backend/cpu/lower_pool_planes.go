package cpu

import "github.com/axle-ml/axle/hlo"

// Pooling of channels-first images (ONNX's MaxPool and AveragePool on
// NCHW): an f32 reduce-window whose window moves only along the last
// two dimensions. The general fold pays its index walk and a call per
// element there (the channels are not innermost to form a run): 40% of a
// ResNet's time went to its one 3×3 max pool. Here each output row folds
// whole input rows tap by tap with the vector kernels (a strided tap's
// inputs gathered first). Every output element still folds its
// window from init in row-major window order, skipping padding, so the
// results are the evaluator's bit for bit.

type poolPlanes struct {
	planes, h, w, oh, ow int
	kh, kw               int
	sh, sw, ph, pw       int // strides, low padding
	dh, dw               int // window dilation
	op                   hlo.Opcode
	threads              int
}

// lowerPoolPlanes returns a kernel for an f32 reduce-window with reducer
// op whose window leaves every dimension but the last two alone and
// moves along the last, or false.
func lowerPoolPlanes(in *hlo.Instruction, op hlo.Opcode, threads int) (kernelFunc, bool) {
	x, w := in.Operands[0].Shape, in.Window()
	rank := x.Rank()
	if w == nil || rank < 2 || len(w.Dims) != rank || in.Shape.Rank() != rank {
		return nil, false
	}
	dims, out := x.Dims, in.Shape.Dims
	pl := &poolPlanes{planes: 1, op: op, threads: threads}
	for d := range rank - 2 {
		if !identityWindow(w.Dims[d], dims[d], out[d]) {
			return nil, false
		}
		pl.planes *= int(dims[d])
	}
	if identityWindow(w.Dims[rank-1], dims[rank-1], out[rank-1]) {
		return nil, false // channels-last: the general fold's runs
	}
	for d := rank - 2; d < rank; d++ {
		wd := w.Dims[d]
		if wd.Reversal || wd.Size < 1 || max(wd.LhsDilation, 1) != 1 {
			return nil, false
		}
	}
	h, wi := w.Dims[rank-2], w.Dims[rank-1]
	pl.h, pl.w, pl.oh, pl.ow = int(dims[rank-2]), int(dims[rank-1]), int(out[rank-2]), int(out[rank-1])
	pl.kh, pl.kw = int(h.Size), int(wi.Size)
	pl.sh, pl.sw = int(max(h.Stride, 1)), int(max(wi.Stride, 1))
	pl.ph, pl.pw = int(h.PadLo), int(wi.PadLo)
	pl.dh, pl.dw = int(max(h.RhsDilation, 1)), int(max(wi.RhsDilation, 1))
	return pl.run, true
}

func (pl *poolPlanes) run(out *hlo.Literal, ops []*hlo.Literal) error {
	dst, src := out.Data().([]float32), ops[0].Data().([]float32)
	init := ops[1].Data().([]float32)[0]
	rows := pl.planes * pl.oh
	if rows == 0 || pl.ow == 0 {
		return nil
	}
	vec := vectorCombineF32(pl.op)
	f := floatCombine[float32](pl.op)
	splitWork(pl.threads, rows*pl.ow*pl.kh*pl.kw, rows, func(lo, hi int) {
		var tmp []float32 // a strided tap's inputs, gathered for vec
		if pl.sw != 1 && vec != nil {
			tmp = make([]float32, pl.ow)
		}
		for r := lo; r < hi; r++ {
			plane, oh := r/pl.oh, r%pl.oh
			acc := dst[r*pl.ow : (r+1)*pl.ow]
			for i := range acc {
				acc[i] = init
			}
			for kh := range pl.kh {
				ih := oh*pl.sh - pl.ph + kh*pl.dh
				if ih < 0 || ih >= pl.h {
					continue
				}
				row := src[(plane*pl.h+ih)*pl.w : (plane*pl.h+ih+1)*pl.w]
				for kw := range pl.kw {
					// Output columns ow whose input column ow·sw + off lies
					// in the row.
					off := kw*pl.dw - pl.pw
					lo := 0
					if off < 0 {
						lo = (-off + pl.sw - 1) / pl.sw
					}
					hi := min(pl.ow, (pl.w-1-off)/pl.sw+1)
					if pl.w-1-off < 0 {
						hi = 0
					}
					if lo >= hi {
						continue
					}
					a := acc[lo:hi]
					switch {
					case vec == nil:
						foldStrided(f, a, row, lo*pl.sw+off, pl.sw)
					case pl.sw == 1:
						vec(a, a, row[lo+off:hi+off])
					default:
						// Gathered first: a compare per element in Go
						// branches, and max pooling's mispredict (4 ns an
						// element on random images).
						t := tmp[:len(a)]
						at := lo*pl.sw + off
						_ = row[at+(len(t)-1)*pl.sw]
						for i := range t {
							t[i] = row[at+i*pl.sw]
						}
						vec(a, a, t)
					}
				}
			}
		}
	})
	return nil
}

// foldStrided folds row[at + i·stride] into acc[i] with f.
func foldStrided(f func(a, b float32) float32, acc, row []float32, at, stride int) {
	for i, a := range acc {
		acc[i] = f(a, row[at+i*stride])
	}
}
