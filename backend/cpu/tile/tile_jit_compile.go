package tile

import (
	"math"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// Compiling a tile program to generated code: which slots the generator
// takes, and the program it is given for them.

// compileJIT generates code for p, or returns nil when p has a part the
// generator does not take (row programs, predicate or 8-bit float
// operands, ops without code) or the platform runs none (nor f16 code,
// without F16C).
func (p *Prog) compileJIT() *jitProg {
	// Contiguous slices of an operand (a GRU step's gates, each a third
	// of one projection; an LSTM step's slice of the input projections
	// of all steps) read it in place, not through gather buffers, the
	// slices of one operand sharing one input at their displacements: a
	// program with many such slices then fits the generator's registers.
	if bases := p.sharedBases(); len(bases) > 0 {
		if j := p.compileJITForm(bases); j != nil {
			return j
		}
	}
	return p.compileJITForm(nil)
}

// contiguous reports whether gather map m reads elements off, off+1, …
// in order for the program's n elements.
func (p *Prog) contiguous(m affineMap) bool {
	n := 1
	for _, d := range m.dims {
		n *= d
	}
	s, ok := collapseDims(m.dims, m.strides)
	return ok && n == p.n && s == 1
}

// sharedGather reports whether slot s is a gather the shared form reads
// in place: contiguous, of an f32 operand, or of a narrow one from its
// first element (generated code reads narrow arrays undisplaced: a
// reshape, which is most of them).
func (p *Prog) sharedGather(s *slot) bool {
	if s.kind != slotGather || !p.contiguous(s.m) {
		return false
	}
	if s.t == hlo.F32 {
		return true
	}
	_, ok := jitType(s.t)
	return ok && s.t != hlo.S32 && s.m.off == 0
}

// sharedBases is, for each operand the shared form reads in place, the
// first element it reads: the smallest offset of its contiguous gathers
// (0 where it is also read whole).
func (p *Prog) sharedBases() map[int]int {
	bases := map[int]int{}
	for i := range p.slots {
		s := &p.slots[i]
		if p.sharedGather(s) {
			if b, ok := bases[s.param]; !ok || s.m.off < b {
				bases[s.param] = s.m.off
			}
		}
	}
	for i := range p.slots {
		if s := &p.slots[i]; s.kind == slotParam {
			if _, ok := bases[s.param]; ok {
				bases[s.param] = 0
			}
		}
	}
	return bases
}

// compileJITForm is compileJIT's plain form (shared nil) or its shared
// form: contiguous gathers of the operands in shared read them in place
// from the base it gives.
func (p *Prog) compileJITForm(shared map[int]int) *jitProg {
	if !useJIT || p.rowLen > 0 || len(p.outs) > jit.MaxOutputs {
		return nil
	}
	b := jitForm{p: p, prog: &jit.Program{}, j: &jitProg{shared: shared != nil}, inputOf: map[int]int{}, shared: shared}
	prog, j := b.prog, b.j
	for _, o := range p.outs {
		t, ok := jitType(p.slots[o].t)
		if p.intOut != hlo.Invalid {
			t, ok = jitIntType(p.intOut)
		}
		if !ok {
			return nil
		}
		prog.OutputTypes = append(prog.OutputTypes, t)
	}
	value, ok := b.values()
	if !ok {
		return nil
	}
	prog.Inputs, prog.Scalars = len(j.inputs), len(j.scalars)
	j.prefetch(prog)
	for _, o := range p.outs {
		if k := p.slots[o].kind; k == slotRaw {
			return nil
		}
		prog.Outputs = append(prog.Outputs, value[o])
	}
	f, err := jit.Compile(prog)
	if err != nil {
		return nil // too many live values, say: the tile program runs
	}
	j.f, j.prog = f, prog
	j.directInputs(p)
	j.recordStrided()
	return j
}

// jitForm is the state of one compileJITForm: the program being built,
// how it is fed, and which input reads each operand in place (inputOf),
// so that the slices of one operand share it.
type jitForm struct {
	p       *Prog
	prog    *jit.Program
	j       *jitProg
	inputOf map[int]int
	shared  map[int]int
}

// values adds the program's values for p's slots and returns each slot's
// value, or false where a slot has no code.
func (b *jitForm) values() ([]int, bool) {
	p, prog := b.p, b.prog
	value := make([]int, len(p.slots)) // slot → jit value
	for i, s := range p.slots {
		var v jit.Value
		switch s.kind {
		case slotParam:
			t, ok := jitType(s.t)
			if !ok {
				return nil, false
			}
			v = jit.Value{Op: jit.Input, Arg: b.inPlace(s.param, t)}
		case slotGather:
			v = b.gather(i, &s)
		case slotRaw: // read only through the gathers' maps
			continue
		case slotAlias:
			value[i] = value[s.from]
			continue
		case slotSplat:
			if s.from >= 0 {
				value[i] = value[s.from]
				continue
			}
			v = b.splat(&s)
		case slotOp:
			args := make([]int, s.nargs)
			for k := range args {
				args[k] = value[s.args[k]]
			}
			var ok bool
			if value[i], ok = p.jitOp(prog, &s, args); !ok {
				return nil, false
			}
			continue
		default:
			return nil, false
		}
		value[i] = len(prog.Values)
		prog.Values = append(prog.Values, v)
	}
	return value, true
}

// gather is the value of gather slot s (slot i): its operand read in
// place at its displacement in the shared form, else a buffer the slot's
// values are gathered into, as f32 whatever the operand's type.
func (b *jitForm) gather(i int, s *slot) jit.Value {
	if base, ok := b.shared[s.param]; ok && b.p.sharedGather(s) {
		t, _ := jitType(s.t)
		k := b.inPlace(s.param, t)
		return jit.Value{Op: jit.Input, Arg: k, Off: s.m.off - base}
	}
	j := b.j
	v := jit.Value{Op: jit.Input, Arg: len(j.inputs)}
	j.inputs = append(j.inputs, jitInput{param: s.param, gather: i})
	b.prog.InputTypes = append(b.prog.InputTypes, jit.F32)
	j.gathers++
	return v
}

// splat is the value of splat slot s: a fusion operand's scalar or a
// constant.
func (b *jitForm) splat(s *slot) jit.Value {
	if s.param >= 0 {
		v := jit.Value{Op: jit.Splat, Arg: len(b.j.scalars)}
		b.j.scalars = append(b.j.scalars, s.param)
		return v
	}
	return jit.Value{Op: jit.Const, Value: s.value}
}

// prefetch has the loop ask for the operands it reads in place a little
// ahead: over arrays larger than the caches the math then overlaps the
// memory traffic (gelu over 16M f32 on two threads: 4.2 → 3.8 ms), and
// over cached ones it costs a PREFETCH per 64 bytes read.
func (j *jitProg) prefetch(prog *jit.Program) {
	for k, in := range j.inputs {
		if in.gather < 0 {
			prog.PrefetchInputs = append(prog.PrefetchInputs, k)
		}
	}
	if len(prog.PrefetchInputs) > 0 {
		prog.PrefetchAhead = jitPrefetchAhead
	}
}

// inPlace returns the input reading operand param in place, adding it
// (of type t, from its base in shared) if it is new.
func (b *jitForm) inPlace(param int, t jit.Type) int {
	k, seen := b.inputOf[param]
	if !seen {
		k = len(b.j.inputs)
		b.inputOf[param] = k
		b.j.inputs = append(b.j.inputs, jitInput{param: param, gather: -1, off: b.shared[param]})
		b.prog.InputTypes = append(b.prog.InputTypes, t)
	}
	return k
}

// jitPrefetchAhead is how many elements ahead the generated loops of
// loop fusions prefetch their inputs (1 KiB of f32; 256 to 1024
// elements measured the same).
const jitPrefetchAhead = 256

// jitType is the generated code's array type for t.
func jitType(t hlo.DType) (jit.Type, bool) {
	switch t {
	case hlo.F32:
		return jit.F32, true
	case hlo.BF16:
		return jit.BF16, true
	case hlo.F16:
		return jit.F16, true
	case hlo.S32: // an operand, read converted
		return jit.I32, true
	}
	return 0, false
}

// hasCode reports whether op slot s has generated code: an f32, bf16,
// f16 or predicate result of an op with code, or a convert to f32, bf16
// or f16 from one of them or s32 (read converted).
func (p *Prog) hasCode(s *slot) bool {
	if !codeFloat(s.t) && s.t != hlo.Pred {
		return false
	}
	if s.op == hlo.OpConvert {
		from := p.slots[s.args[0]].t
		return (codeFloat(from) || from == hlo.S32) && s.t != hlo.Pred
	}
	_, ok := jitOpOf(s)
	return ok
}

// codeFloat reports whether generated code computes values of float type
// t: f32, or bf16 and f16 in f32 rounded after each op.
func codeFloat(t hlo.DType) bool { return t == hlo.F32 || t == hlo.BF16 || t == hlo.F16 }

// roundOp is the op rounding an f32 to narrow type t's precision.
func roundOp(t hlo.DType) (jit.Op, bool) {
	switch t {
	case hlo.BF16:
		return jit.RoundBF16, true
	case hlo.F16:
		return jit.RoundF16, true
	}
	return 0, false
}

// jitOp appends the values computing op slot s from values args and
// returns the last: the op, then its rounding to bf16 or f16 for a
// narrow result. A convert between float types is only that rounding
// (or nothing).
func (p *Prog) jitOp(prog *jit.Program, s *slot, args []int) (int, bool) {
	if !p.hasCode(s) {
		return 0, false
	}
	v := args[0] // a convert
	if s.op != hlo.OpConvert {
		op, _ := jitOpOf(s)
		val := jit.Value{Op: op}
		copy(val.Args[:], args)
		v = len(prog.Values)
		prog.Values = append(prog.Values, val)
	}
	if op, ok := roundOp(s.t); ok && !roundedBy(prog, v, op) {
		prog.Values = append(prog.Values, jit.Value{Op: op, Args: [3]int{v}})
		v = len(prog.Values) - 1
	}
	return v, true
}

// roundedBy reports whether value v of prog is one rounding op round
// would leave as it is, NaNs included: round's own result, a constant
// of that precision, or a maximum, minimum, clamp, select, negation or
// absolute value of such values (each yields one of its operands, or
// its sign changed; a NaN among them is already the canonical NaN with
// its sign). An f16 ReLU6 after a product, round(min(round(max(
// round(x), 0)), 6)), then rounds once: 0.80 → 0.42 ms over 112²×96 (f32: 0.37).
// (An f16 input is not: its NaNs keep their payloads until rounded.)
func roundedBy(prog *jit.Program, v int, round jit.Op) bool {
	x := prog.Values[v]
	switch x.Op {
	case round:
		return true
	case jit.Const:
		return x.Value == x.Value && math.Float32bits(roundConst(round, x.Value)) == math.Float32bits(x.Value)
	case jit.Max, jit.Min, jit.Neg, jit.Abs:
		for _, a := range x.Args[:arity(x.Op)] {
			if !roundedBy(prog, a, round) {
				return false
			}
		}
		return true
	case jit.Clamp:
		return roundedBy(prog, x.Args[0], round) && roundedBy(prog, x.Args[1], round) && roundedBy(prog, x.Args[2], round)
	case jit.Select:
		return roundedBy(prog, x.Args[1], round) && roundedBy(prog, x.Args[2], round)
	}
	return false
}

// arity is the operands of the ops roundedBy looks through.
func arity(op jit.Op) int {
	if op == jit.Neg || op == jit.Abs {
		return 1
	}
	return 2
}

// roundConst is constant c rounded as round rounds.
func roundConst(round jit.Op, c float32) float32 {
	if round == jit.RoundF16 {
		return minifloat.RoundF16(c)
	}
	return minifloat.BF16.ToFloat32(minifloat.BF16.FromFloat32(c))
}
