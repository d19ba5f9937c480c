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
//
// A tuple whose kernel writes each array element into storage of its own
// (a multi-output fusion) gets a buffer per element instead of one for
// the tuple, each placed, reused and made an output like any value's, and
// a get-tuple-element of it is a view of its element's buffer: the kernel
// writes straight where the element's readers, or the caller, read it.

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
	span        int64 // bytes kept from offset on (0: bytes; see colorBuffers)
	first, last int   // steps of its first definition and its last use
	def         int   // the step that first writes it
	// donors are the parameters whose storage may hold this output when
	// donated: each dies before (or, computed in place, at) its first write.
	donors []int
	// part is the tuple element the buffer holds when def's value has a
	// buffer per element (valueInfo.parts).
	part int
}

type assignment struct {
	bufOf         []int   // per step, its value's buffer
	partsOf       [][]int // per step with valueInfo.parts: each element's buffer
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
	// parts, for a tuple whose kernel writes each array element into a
	// buffer of its own, lists per element the operand indices whose
	// storage the kernel may write that element over (nil: one value).
	parts [][]int
	// part is the element of operand 0's parts this value is a view of
	// (a get-tuple-element of such a tuple), or -1.
	part int
}

// plainValue is a value with no per-element buffers.
func plainValue(in *hlo.Instruction, view bool, inPlace []int) valueInfo {
	return valueInfo{in: in, view: view, inPlace: inPlace, part: -1}
}

// valueBytes is the storage a value's kernel writes: an array's, or a
// tuple's with per-element buffers (0 for the rest, and for views).
func valueBytes(v valueInfo) int64 {
	if v.view || v.part >= 0 || v.in.Opcode == hlo.OpParameter || v.in.Opcode == hlo.OpConstant {
		return 0
	}
	if v.parts == nil {
		return max(arrayBytes(v.in.Shape), 0)
	}
	var n int64
	for _, e := range v.in.Shape.Tuple {
		n += max(arrayBytes(e), 0)
	}
	return n
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
// Every value a section's step defines or reads lives until the section's
// end (see branches.go): its steps run in another order than the
// schedule's, two at a time.
func assign(vals []valueInfo, root *hlo.Instruction, secs ...section) *assignment {
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
	for _, sec := range secs {
		for i := sec.from; i < sec.to; i++ {
			lastUse[i] = max(lastUse[i], sec.to)
			for _, o := range vals[i].in.Operands {
				lastUse[pos[o]] = max(lastUse[pos[o]], sec.to)
			}
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
	// (A tuple with per-element buffers is made of those, not of its
	// operands.)
	for i := len(vals) - 1; i >= 0; i-- {
		if in := vals[i].in; arrayBytes(in.Shape) < 0 && in.Opcode != hlo.OpParameter && in.Opcode != hlo.OpConstant && vals[i].parts == nil {
			for _, o := range in.Operands {
				lastUse[pos[o]] = max(lastUse[pos[o]], lastUse[i])
			}
		}
	}
	a := &assignment{bufOf: make([]int, len(vals)), partsOf: make([][]int, len(vals))}
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
		case v.part >= 0:
			b := a.partsOf[pos[in.Operands[0]]][v.part]
			a.bufOf[i] = b
			a.bufs[b].last = max(a.bufs[b].last, lastUse[i])
		case v.parts != nil:
			a.bufOf[i] = newBuf(buffer{kind: bufOwn, first: i, last: lastUse[i], def: i})
			a.partsOf[i] = a.assignParts(v, i, lastUse[i], pos)
		case v.view:
			b := a.bufOf[pos[in.Operands[0]]]
			a.bufOf[i] = b
			a.bufs[b].last = max(a.bufs[b].last, lastUse[i])
		case bytes < 0:
			a.bufOf[i] = newBuf(buffer{kind: bufOwn, first: i, last: lastUse[i], def: i})
		default:
			if b, ok := a.reusable(v.in, v.inPlace, i, bytes, pos); ok {
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

// assignParts gives each element of a tuple with per-element buffers its
// buffer: an operand's it may be computed over, or a new one. They live
// as long as the tuple (and, see assign, its views).
func (a *assignment) assignParts(v valueInfo, step, last int, pos map[*hlo.Instruction]int) []int {
	bufs := make([]int, len(v.parts))
	for k, ks := range v.parts {
		bytes := arrayBytes(v.in.Shape.Tuple[k])
		// An element nobody reads still lives only this step: keep a
		// buffer one element took from the next one.
		ks = slices.DeleteFunc(slices.Clone(ks), func(j int) bool {
			return slices.Contains(bufs[:k], a.bufOf[pos[v.in.Operands[j]]])
		})
		if b, ok := a.reusable(v.in, ks, step, bytes, pos); ok {
			bufs[k] = b
			a.bufs[b].last = max(a.bufs[b].last, last)
			a.inPlace++
			continue
		}
		a.bufs = append(a.bufs, buffer{kind: bufArena, bytes: bytes, first: step, last: last, def: step, part: k})
		bufs[k] = len(a.bufs) - 1
	}
	return bufs
}

// reusable finds an operand buffer in's kernel can compute a value of the
// given size over: one of the operands ks, in the arena, whose last use
// is this step (once taken, its last use moves on, so no other value
// takes it).
func (a *assignment) reusable(in *hlo.Instruction, ks []int, step int, bytes int64, pos map[*hlo.Instruction]int) (int, bool) {
	for _, k := range ks {
		b := a.bufOf[pos[in.Operands[k]]]
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
			if !v.view && v.part < 0 && !results[v.in] {
				a.intermediates += arrayBytes(v.in.Shape)
			}
		}
		for _, b := range a.partsOf[i] {
			if a.bufs[b].kind == bufArena {
				a.intermediates += a.bufs[b].bytes
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
			ks := def.inPlace
			if def.parts != nil {
				ks = def.parts[out.part]
			}
			for _, k := range ks {
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
	for i, b := range order {
		buf := &a.bufs[b]
		span, skew := buf.bytes, int64(0)
		if buf.bytes >= colorMinBytes && colorBuffers {
			span, skew = buf.bytes+colorPeriod, int64(i*colorStep)%colorPeriod
		}
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
			if off+span <= q.offset {
				break
			}
			off = max(off, align64(q.offset+a.span(p)))
		}
		buf.offset = off + skew
		buf.span = span - skew
		a.arena = max(a.arena, off+span)
		placed = append(placed, b)
	}
	a.arena = align64(a.arena)
}

func align64(n int64) int64 { return (n + 63) &^ 63 }

// span is the bytes buffer b keeps from its offset on: its own, and the
// rest of its color's slack.
func (a *assignment) span(b int) int64 {
	if s := a.bufs[b].span; s > 0 {
		return s
	}
	return a.bufs[b].bytes
}

// Arena buffers of colorMinBytes or more start at different offsets
// modulo colorPeriod (4 KiB, the span of the address bits that a load's
// check against earlier stores compares first): a kernel streaming from
// one buffer into another a multiple of 4 KiB away has each load look
// like the store a few lines before it (4K aliasing). Channels-last
// images are such multiples (112²×32 floats is 392 pages), so packed
// back to back a layer's input and output were 0 apart modulo 4 KiB: a
// depthwise 3×3 layer on 56×112×32 ran 103 µs against 76–79 with the
// output 32 to 4000 bytes off. Each such buffer takes colorPeriod bytes
// of slack and starts colorStep·(its rank by size) into it.
const (
	colorMinBytes = 256 << 10
	colorPeriod   = 4096
	colorStep     = 17 * 64
)

// colorBuffers lets tests and benchmarks turn the coloring off.
var colorBuffers = true
