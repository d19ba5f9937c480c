package cpu

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/axle-ml/axle/hlo"
)

// Execution: each call takes a frame (an arena with the literals that
// view it, built once per frame) from the executable's pool, draws its
// output buffers from the output pool (or from donated arguments), runs
// the steps in schedule order and puts the frame back. Fresh memory costs
// a page fault per 4 KiB on its first write, more than most kernels, so a
// steady stream of executions allocates nothing big.

// frame is one execution's working state.
type frame struct {
	arena []byte
	lits  []*hlo.Literal // per step: arena values and constants, built once
	// parts are, per step with per-element buffers, the views of its
	// arena elements (nil at outputs), built once.
	parts [][]*hlo.Literal
	vals  []*hlo.Literal // per step: this execution's values
	ops   []*hlo.Literal // operand list scratch
	opsB  []*hlo.Literal // the same for a section's other branch
	outs  []pooled       // this execution's output storage
	ev    runState
}

// framePool keeps idle frames: one in a slot taken and refilled with a
// single atomic swap (a serving loop's one frame; the mutex's lock and
// unlock around the list were a tenth of a scalar call), the rest of a
// concurrent burst's in the list.
type framePool struct {
	one  atomic.Pointer[frame]
	mu   sync.Mutex
	free []*frame
}

func (x *Executable) getFrame() *frame {
	p := &x.frames
	if f := p.one.Swap(nil); f != nil {
		return f
	}
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		f := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return f
	}
	p.mu.Unlock()
	f := &frame{arena: alignedBytes(x.asg.arena), lits: make([]*hlo.Literal, len(x.steps)),
		vals: make([]*hlo.Literal, len(x.steps)), ops: make([]*hlo.Literal, 0, 8), parts: make([][]*hlo.Literal, len(x.steps))}
	if x.poison {
		poison(f.arena)
	}
	for i, s := range x.steps {
		switch b := x.asg.bufs[x.asg.bufOf[i]]; {
		case s.in.Opcode == hlo.OpConstant && s.k == nil:
			f.lits[i] = s.in.Literal
		case s.part >= 0: // a view of its tuple's element, set per execution
		case b.kind == bufArena:
			f.lits[i] = viewBytes(s.in.Shape, f.arena[b.offset:b.offset+b.bytes])
		case x.asg.partsOf[i] != nil:
			f.lits[i], f.parts[i] = x.partViews(f, i)
		}
	}
	return f
}

// partViews builds the views of step i's arena elements and, when none
// is an output, the tuple of them (else runStep builds it per execution).
func (x *Executable) partViews(f *frame, i int) (*hlo.Literal, []*hlo.Literal) {
	shapes := x.steps[i].in.Shape.Tuple
	views := make([]*hlo.Literal, len(shapes))
	all := true
	for k, b := range x.asg.partsOf[i] {
		if buf := x.asg.bufs[b]; buf.kind == bufArena {
			views[k] = viewBytes(shapes[k], f.arena[buf.offset:buf.offset+buf.bytes])
		} else {
			all = false
		}
	}
	if all {
		return hlo.MakeTupleLiteral(views...), views
	}
	return nil, views
}

// partsTuple is step i's tuple over its element buffers this execution:
// arena views, and output storage.
func (x *Executable) partsTuple(f *frame, i int, outs []pooled) *hlo.Literal {
	shapes := x.steps[i].in.Shape.Tuple
	elems := slices.Clone(f.parts[i])
	for k, b := range x.asg.partsOf[i] {
		if elems[k] == nil {
			elems[k] = outputView(&shapes[k], outs[x.outIdx[b]])
		}
	}
	return hlo.MakeTupleLiteral(elems...)
}

// outputView is a literal of shape s over an output's storage (the
// pooled one when it has that shape).
func outputView(s *hlo.Shape, o pooled) *hlo.Literal {
	if o.lit != nil && o.lit.HasShape(s) {
		return o.lit
	}
	return viewBytes(*s, o.mem)
}

func (x *Executable) putFrame(f *frame) {
	clear(f.vals) // drop the caller's arguments and outputs
	clear(f.outs)
	p := &x.frames
	if p.one.CompareAndSwap(nil, f) {
		return
	}
	p.mu.Lock()
	p.free = append(p.free, f)
	p.mu.Unlock()
}

// outputPool keeps recycled outputs by size: their storage, and the
// literal that viewed it, reused as is when the next output has its shape.
// Each of the executable's output sizes has one slot taken and refilled
// with an atomic swap (a serving loop's outputs come back one at a time);
// the rest wait in the map, under the lock.
type outputPool struct {
	sizes  []int64
	one    []atomic.Pointer[hlo.Literal]
	mu     sync.Mutex
	free   map[int64][]pooled
	poison bool
}

type pooled struct {
	mem []byte
	lit *hlo.Literal // nil, or a literal over mem
}

const maxPooledOutputs = 4 // per size, besides the slot

// addSize gives outputs of n bytes a slot (at compile time, before any
// execution).
func (p *outputPool) addSize(n int64) {
	if !slices.Contains(p.sizes, n) {
		p.sizes = append(p.sizes, n)
		p.one = append(p.one, atomic.Pointer[hlo.Literal]{})
	}
}

// slot is the slot of outputs of n bytes, or nil.
func (p *outputPool) slot(n int64) *atomic.Pointer[hlo.Literal] {
	for i, s := range p.sizes {
		if s == n {
			return &p.one[i]
		}
	}
	return nil
}

func (p *outputPool) get(n int64) pooled {
	if s := p.slot(n); s != nil {
		if l := s.Swap(nil); l != nil {
			return pooled{mem: bytesOf(l), lit: l}
		}
	}
	p.mu.Lock()
	if l := p.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	b := alignedBytes(n)
	if p.poison {
		poison(b)
	}
	return pooled{mem: b}
}

// put keeps b for a later output of its size; storage of any other size
// (not one of the executable's outputs) is dropped.
func (p *outputPool) put(b pooled) {
	s := p.slot(int64(len(b.mem)))
	if s == nil || b.lit != nil && s.CompareAndSwap(nil, b.lit) {
		return
	}
	n := int64(len(b.mem))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = map[int64][]pooled{}
	}
	if len(p.free[n]) < maxPooledOutputs {
		p.free[n] = append(p.free[n], b)
	}
}

// warmPools gives the pools the storage the first execution would
// otherwise take fresh from the system and fault in page by page: one
// frame (its arena and views) and a buffer for each output, where they
// come to at most warmPoolBytes. That is what the pools hold after any
// execution (idle storage, outside the memory limit's accounting), so a
// process's first call runs as its later ones: gemm_f32_1024's first
// call faulted in 1,418 pages (its 4 MiB output and more), 11–14 ms
// against 6.8 ms for the next. An executable whose storage is larger
// (a module with a 40 GB output, refused at run time by a memory limit)
// gets nothing ahead.
func (x *Executable) warmPools() {
	if x.interp || x.asg == nil {
		return
	}
	total := x.asg.arena
	for _, b := range x.asg.outputs {
		total += x.asg.bufs[b].bytes
	}
	if total > warmPoolBytes {
		return
	}
	x.putFrame(x.getFrame())
	outs := make([]pooled, len(x.asg.outputs))
	for i, b := range x.asg.outputs {
		outs[i] = x.outs.get(x.asg.bufs[b].bytes)
	}
	for _, o := range outs {
		x.outs.put(o)
	}
}

// warmPoolBytes bounds the storage warmPools allocates at compile time.
const warmPoolBytes = 64 << 20

func poison(b []byte) {
	for i := range b {
		b[i] = 0xff
	}
}

// Execute runs the compiled module on args, one per entry parameter. It
// may be called from several goroutines at once. The result belongs to
// the caller; Recycle gives its storage back for reuse.
func (x *Executable) Execute(args ...*hlo.Literal) (*hlo.Literal, error) {
	return x.Run(args, nil)
}

// Run is Execute with donation: donated[i] says the caller gives up
// args[i], whose storage may then hold an output (the caller must not
// read it afterwards). donated may be nil.
func (x *Executable) Run(args []*hlo.Literal, donated []bool) (*hlo.Literal, error) {
	if err := x.entry.CheckArguments(args); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	return x.RunChecked(args, donated)
}

// RunChecked is Run for a caller that has already checked args against
// the entry's parameters (count and compatible shapes, as
// hlo.Computation.CheckArguments does): the runtime API checks them to
// name the parameter in its errors, and a second check cost as much as a
// scalar kernel.
func (x *Executable) RunChecked(args []*hlo.Literal, donated []bool) (*hlo.Literal, error) {
	return x.RunControlled(args, donated, nil)
}

// outputBuffers picks storage for each output: a donated argument that
// may hold it, else pooled memory.
func (x *Executable) outputBuffers(f *frame, args []*hlo.Literal, donated []bool) []pooled {
	if len(f.outs) != len(x.asg.outputs) {
		f.outs = make([]pooled, len(x.asg.outputs))
	}
	outs := f.outs // the frame's: an execution allocates no list
	clear(outs)
	var taken []int
	for i, b := range x.asg.outputs {
		buf := x.asg.bufs[b]
		for _, p := range buf.donors {
			if p < len(donated) && donated[p] && !contains(taken, p) && !sharedArg(args, p) {
				if mem := bytesOf(args[p]); int64(len(mem)) == buf.bytes {
					outs[i], taken = pooled{mem: mem}, append(taken, p)
					break
				}
			}
		}
		if outs[i].mem == nil {
			outs[i] = x.outs.get(buf.bytes)
		}
	}
	return outs
}

func contains(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// sharedArg reports whether args[p]'s storage is also passed as another
// argument (then it is read under another name and cannot be reused).
func sharedArg(args []*hlo.Literal, p int) bool {
	for i, a := range args {
		if i != p && a.Shape().IsArray() && sameStorage(a, args[p]) {
			return true
		}
	}
	return false
}

// runStep computes step i's value into f.vals[i], with ops as its
// operand list's scratch (one per goroutine running steps of the frame:
// see runSection).
func (x *Executable) runStep(f *frame, ops *[]*hlo.Literal, i int, args []*hlo.Literal, outs []pooled) error {
	s := &x.steps[i]
	if s.param > 0 {
		f.vals[i] = args[s.param-1]
		return nil
	}
	b := x.asg.bufOf[i]
	buf := &x.asg.bufs[b]
	switch {
	case f.vals[i] != nil && s.k == nil: // a constant
		return nil
	case s.part >= 0: // the element the tuple's kernel wrote
		f.vals[i] = f.vals[s.ops[0]].Elements()[s.part]
		return nil
	case buf.kind == bufOutput:
		f.vals[i] = outputView(&s.in.Shape, outs[x.outIdx[b]])
	case f.vals[i] == nil && x.asg.partsOf[i] != nil:
		f.vals[i] = x.partsTuple(f, i, outs)
	}
	if s.view {
		if f.vals[i] == nil {
			f.vals[i] = viewBytes(s.in.Shape, bytesOf(f.vals[s.ops[0]]))
		}
		return nil
	}
	*ops = (*ops)[:0]
	for _, j := range s.ops {
		*ops = append(*ops, f.vals[j])
	}
	out := f.vals[i]
	v, err := s.k(&f.ev, out, *ops)
	if err != nil {
		return fmt.Errorf("cpu: instruction %s: %w", s.in.Name, err)
	}
	switch {
	case out == nil:
		f.vals[i] = v
	case v != out:
		if err := copyValue(out, v); err != nil {
			return fmt.Errorf("cpu: instruction %s: %w", s.in.Name, err)
		}
	}
	return nil
}

// copyValue copies a kernel's own result into the value's buffers (each
// element's, for a tuple with per-element buffers).
func copyValue(out, v *hlo.Literal) error {
	if out.Shape().IsTuple() {
		oe, ve := out.Elements(), v.Elements()
		if len(oe) != len(ve) {
			return fmt.Errorf("kernel returned %s for %s", v.Shape().HumanString(), out.Shape().HumanString())
		}
		for k := range oe {
			if oe[k] != ve[k] {
				if err := copyValue(oe[k], ve[k]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if v.Len() != out.Len() || v.DType() != out.DType() {
		return fmt.Errorf("kernel returned %s for %s", v.Shape().HumanString(), out.Shape().HumanString())
	}
	copy(bytesOf(out), bytesOf(v))
	return nil
}

// result assembles the root's value for the caller: output buffers as
// they are, anything else (an argument, a constant, an arena value, a
// repeated element, a value the evaluator made) copied, so the caller
// owns all of it.
func (x *Executable) result(f *frame) *hlo.Literal {
	root := x.steps[x.root].in
	if root.Opcode != hlo.OpTuple {
		return x.owned(f, x.root, nil)
	}
	seen := map[int]bool{}
	elems := make([]*hlo.Literal, len(root.Operands))
	for k, j := range x.steps[x.root].ops {
		elems[k] = x.owned(f, j, seen)
	}
	return hlo.MakeTupleLiteral(elems...)
}

func (x *Executable) owned(f *frame, i int, seen map[int]bool) *hlo.Literal {
	b := x.asg.bufOf[i]
	if x.asg.bufs[b].kind == bufOutput && !seen[b] {
		if seen != nil {
			seen[b] = true
		}
		return f.vals[i]
	}
	return f.vals[i].Clone()
}

// Recycle gives an output of this executable back to its buffer pool
// once the caller is done with it (a tuple gives back its elements);
// later executions may reuse its storage, so the caller must not touch it
// again. Recycling anything else is harmless.
func (x *Executable) Recycle(out *hlo.Literal) {
	if out == nil {
		return
	}
	if out.Shape().IsTuple() {
		for _, e := range out.Elements() {
			x.Recycle(e)
		}
		return
	}
	x.outs.put(pooled{mem: bytesOf(out), lit: out})
}
