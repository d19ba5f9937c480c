package cpu

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Buffer assignment: every array value of the entry computation gets a
// buffer. Values that share storage share a buffer: a reshape or bitcast
// is a view of its operand's, and an instruction whose kernel can write
// over an operand that dies at that instruction computes in place. Each
// intermediate buffer gets an offset in one arena per execution, chosen
// so that buffers alive at the same time never overlap (XLA's heap
// simulator with the decreasing-size best-fit policy). The root's
// buffers are outputs: they belong to the caller, drawn from a pool.

type bufKind uint8

const (
	bufArena  bufKind = iota // at an offset in the execution's arena
	bufOutput                // an output handed to the caller
	bufParam                 // an argument's storage
	bufConst                 // a constant's literal
	bufOwn                   // the kernel returns its own literal (tuples, tokens, dynamic shapes)
)

type buffer struct {
	kind        bufKind
	bytes       int64
	offset      int64 // bufArena
	first, last int   // steps of its first definition and its last use
	def         int   // the step that first writes it
	// donors are the parameters whose storage may hold this output when
	// donated: each dies before (or, computed in place, at) its first write.
	donors []int
}

type assignment struct {
	bufOf         []int // per step, its value's buffer
	bufs          []buffer
	outputs       []int // output buffers, in root order
	arena         int64
	intermediates int64
	inPlace       int
}

// valueInfo is what assignment needs to know about a scheduled value.
type valueInfo struct {
	in *hlo.Instruction
	// view: the value is its operand 0's storage seen with another shape.
	view bool
	// inPlace lists operand indices whose storage the kernel may write
	// the result over.
	inPlace []int
}

// storageBytes is the size of one stored element of t (sub-byte types
// are stored one per byte).
func storageBytes(t hlo.DType) int64 {
	return max(1, int64(t.Bits()+7)/8)
}

// arrayBytes is the storage size of an array shape, or -1 when values of
// this shape are not kept in assigned buffers.
func arrayBytes(s hlo.Shape) int64 {
	if !s.IsArray() || s.IsDynamic() || !s.DType.IsArrayType() {
		return -1
	}
	n := s.NumElements()
	if n <= 0 {
		return -1
	}
	return n * storageBytes(s.DType)
}

// isView reports whether in only reinterprets its operand's storage: a
// reshape or bitcast between row-major shapes of one element type.
func isView(in *hlo.Instruction) bool {
	if in.Opcode != hlo.OpReshape && in.Opcode != hlo.OpBitcast {
		return false
	}
	// Literals hold elements in logical row-major order, so a reshape is
	// always a view; a bitcast reinterprets the physical order, which is
	// the same order only for default layouts.
	o := in.Operands[0].Shape
	return arrayBytes(in.Shape) > 0 && arrayBytes(o) == arrayBytes(in.Shape) && o.DType == in.Shape.DType &&
		(in.Opcode == hlo.OpReshape || defaultLayout(in.Shape) && defaultLayout(o))
}

func defaultLayout(s hlo.Shape) bool { return s.Layout == nil || s.Layout.IsDefault() }

// assign places the values of a schedule. root is the computation's root.
func assign(vals []valueInfo, root *hlo.Instruction) *assignment {
	pos := make(map[*hlo.Instruction]int, len(vals))
	for i, v := range vals {
		pos[v.in] = i
	}
	lastUse := make([]int, len(vals))
	for i, v := range vals {
		lastUse[i] = i
		for _, o := range v.in.Operands {
			lastUse[pos[o]] = max(lastUse[pos[o]], i)
		}
	}
	// Results live past the last step, so nothing is computed over them.
	lastUse[pos[root]] = len(vals)
	if root.Opcode == hlo.OpTuple {
		for _, e := range root.Operands {
			lastUse[pos[e]] = len(vals)
		}
	}
	// A value without a buffer of its own (a tuple, a while's state) may
	// be made of its operands' literals, so their storage lives as long
	// as it does (walked backwards, so tuples of tuples pass it on).
	for i := len(vals) - 1; i >= 0; i-- {
		if in := vals[i].in; arrayBytes(in.Shape) < 0 && in.Opcode != hlo.OpParameter && in.Opcode != hlo.OpConstant {
			for _, o := range in.Operands {
				lastUse[pos[o]] = max(lastUse[pos[o]], lastUse[i])
			}
		}
	}
	a := &assignment{bufOf: make([]int, len(vals))}
	newBuf := func(b buffer) int {
		a.bufs = append(a.bufs, b)
		return len(a.bufs) - 1
	}
	for i, v := range vals {
		in := v.in
		bytes := arrayBytes(in.Shape)
		switch {
		case in.Opcode == hlo.OpParameter:
			a.bufOf[i] = newBuf(buffer{kind: bufParam, bytes: bytes, first: i, last: lastUse[i], def: i})
		case in.Opcode == hlo.OpConstant:
			a.bufOf[i] = newBuf(buffer{kind: bufConst, bytes: bytes, first: i, last: lastUse[i], def: i})
		case v.view:
			b := a.bufOf[pos[in.Operands[0]]]
			a.bufOf[i] = b
			a.bufs[b].last = max(a.bufs[b].last, lastUse[i])
		case bytes < 0:
			a.bufOf[i] = newBuf(buffer{kind: bufOwn, first: i, last: lastUse[i], def: i})
		default:
			if b, ok := a.reusable(v, i, bytes, pos); ok {
				a.bufOf[i] = b
				a.bufs[b].last = max(a.bufs[b].last, lastUse[i])
				a.inPlace++
				continue
			}
			a.bufOf[i] = newBuf(buffer{kind: bufArena, bytes: bytes, first: i, last: lastUse[i], def: i})
		}
	}
	a.markOutputs(vals, root, pos)
	a.countIntermediates(vals, root)
	a.donors(vals, pos)
	a.place()
	return a
}

// reusable finds an operand buffer the value can be computed over: one
// the kernel may overwrite, of the same size, in the arena, whose last
// use is this step.
func (a *assignment) reusable(v valueInfo, step int, bytes int64, pos map[*hlo.Instruction]int) (int, bool) {
	for _, k := range v.inPlace {
		b := a.bufOf[pos[v.in.Operands[k]]]
		if buf := a.bufs[b]; buf.kind == bufArena && buf.bytes == bytes && buf.last == step {
			return b, true
		}
	}
	return 0, false
}

// markOutputs turns the root's arena buffers into outputs. A root element
// that is an argument, a constant or a buffer already returned is copied
// at the end of each execution instead (see Executable.result).
func (a *assignment) markOutputs(vals []valueInfo, root *hlo.Instruction, pos map[*hlo.Instruction]int) {
	elems := []*hlo.Instruction{root}
	if root.Opcode == hlo.OpTuple {
		elems = root.Operands
	}
	for _, e := range elems {
		b := a.bufOf[pos[e]]
		if a.bufs[b].kind == bufArena {
			a.bufs[b].kind = bufOutput
			a.bufs[b].last = len(vals)
			a.outputs = append(a.outputs, b)
		}
	}
}

// countIntermediates sums the sizes of the values computed into buffers,
// the root's excepted: what a fresh buffer per instruction would cost.
func (a *assignment) countIntermediates(vals []valueInfo, root *hlo.Instruction) {
	results := map[*hlo.Instruction]bool{root: true}
	if root.Opcode == hlo.OpTuple {
		for _, e := range root.Operands {
			results[e] = true
		}
	}
	for i, v := range vals {
		switch a.bufs[a.bufOf[i]].kind {
		case bufArena, bufOutput:
			if !v.view && !results[v.in] {
				a.intermediates += arrayBytes(v.in.Shape)
			}
		}
	}
}

// donors lists, for each output buffer, the parameters whose storage can
// hold it when the caller donates them: the parameter's last use comes
// before the output's first write, or is that write and the kernel
// computes in place over it.
func (a *assignment) donors(vals []valueInfo, pos map[*hlo.Instruction]int) {
	for _, ob := range a.outputs {
		out := &a.bufs[ob]
		def := vals[out.def]
		for i, v := range vals {
			if v.in.Opcode != hlo.OpParameter {
				continue
			}
			p := a.bufs[a.bufOf[i]]
			if p.bytes != out.bytes {
				continue
			}
			ok := p.last < out.def
			for _, k := range def.inPlace {
				ok = ok || p.last == out.def && a.bufOf[pos[def.in.Operands[k]]] == a.bufOf[i]
			}
			if ok {
				out.donors = append(out.donors, int(v.in.ParamNumber))
			}
		}
	}
}

// place gives every arena buffer an offset: biggest first, each at the
// lowest 64-byte-aligned offset that overlaps no buffer alive at the same
// time.
func (a *assignment) place() {
	var order []int
	for b, buf := range a.bufs {
		if buf.kind == bufArena {
			order = append(order, b)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if a.bufs[x].bytes != a.bufs[y].bytes {
			if a.bufs[x].bytes > a.bufs[y].bytes {
				return -1
			}
			return 1
		}
		return a.bufs[x].first - a.bufs[y].first
	})
	var placed []int
	for _, b := range order {
		buf := &a.bufs[b]
		var live []int
		for _, p := range placed {
			q := a.bufs[p]
			if q.first <= buf.last && buf.first <= q.last {
				live = append(live, p)
			}
		}
		slices.SortFunc(live, func(x, y int) int { return int(a.bufs[x].offset - a.bufs[y].offset) })
		off := int64(0)
		for _, p := range live {
			q := a.bufs[p]
			if off+buf.bytes <= q.offset {
				break
			}
			off = max(off, align64(q.offset+q.bytes))
		}
		buf.offset = off
		a.arena = max(a.arena, off+buf.bytes)
		placed = append(placed, b)
	}
	a.arena = align64(a.arena)
}

func align64(n int64) int64 { return (n + 63) &^ 63 }
