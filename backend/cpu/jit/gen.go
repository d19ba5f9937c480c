//go:build linux && amd64 && !purego

package jit

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// The generated function takes one argument, in RDI, the address of an
// argument block laid out as args (exec_amd64.go): the outputs'
// addresses, their length in elements (a multiple of 8 unless the code
// computes partial vectors: Program.tails), the constant
// pool, the inputs, the splatted scalars and the spill slots (64 bytes
// each, a ZMM register's worth; YMM code uses the first 32). Registers:
// RSI is the byte offset of the current vector, RCX the end, RDX the
// pool, R13 the main loop's end; the outputs and then the inputs take
// R8, RAX, RBX and R9–R12. RSP, RBP, R14 and R15 (Go's) are not touched.
const (
	argOuts    = 0
	argN       = argOuts + 8*MaxOutputs
	argPool    = argN + 8
	argIns     = argPool + 8
	argSplat   = (argIns + 8*MaxInputs + slotBytes - 1) &^ (slotBytes - 1) // slots 64-byte aligned
	argSpill   = argSplat + slotBytes*MaxScalars
	argRows    = argSpill + slotBytes*maxSpill
	argRowPtrs = argRows + 8
	argStrides = argRowPtrs + 8*MaxScalars // bytes, outputs then inputs
	// The row folds' accumulators, a vector slot for each vector of an
	// iteration, and where each stores its row's partial results.
	argFolds    = (argStrides + 8*MaxArrays + slotBytes - 1) &^ (slotBytes - 1)
	argFoldPtrs = argFolds + slotBytes*MaxRowFolds*maxUnroll
	// Eight all-ones words, then eight zeros: the masks of a row's last
	// partial vector are the eight words from 8 minus its length on.
	argMask = argFoldPtrs + 8*MaxRowFolds
	// The loops' bound (setBound), where R13 reads inputs.
	argBound = argMask + 64
)

// slotBytes is the size of a splat or spill slot.
const slotBytes = 64

var arrayRegs = [...]int{r8, rax, rbx, r9, r10, r11, r12}

// outReg and inReg are the registers holding output k's and input k's
// addresses (an input past regInputs has none: inputMem).
func (g *gen) outReg(k int) int   { return arrayRegs[k] }
func (g *gen) inputReg(k int) int { return arrayRegs[len(g.p.outputs())+k] }

// regInputs is how many inputs hold a register; the others are read
// through R13, loaded with the input's address from the argument block
// right before each read (a fusion of twelve inputs, fp16 ViT's residual
// sum, ran as a tile program otherwise). The loops then keep their bound
// in the argument block (viaR13).
func (g *gen) regInputs() int { return min(g.p.Inputs, len(arrayRegs)-len(g.p.outputs())) }

// viaR13 reports whether some input is read through R13.
func (g *gen) viaR13() bool { return g.regInputs() < g.p.Inputs }

// inputMem is input k's element at RSI·scale + disp.
func (g *gen) inputMem(k, scale int, disp int32) mem {
	if k < g.regInputs() {
		return mem{base: g.inputReg(k), index: rsi, scale: scale, disp: disp}
	}
	return mem{base: r13, index: rsi, scale: scale, disp: disp, via: argIns + 8*int32(k)}
}

// mc holds the constants of the math expansions: the kernels' own, so
// that the two compute the same bits. (The address of a variable is a
// static initializer: no init code refers to the generator's data, and
// the linker drops it from binaries without the generator.)
var mc = &kernels.MathConstants

// gen generates one program's loop.
type gen struct {
	a     *vasm
	p     *Program
	pool  []uint32         // a vector's worth of copies of each constant, in order
	at    map[uint32]int32 // a constant's bits → its byte offset in pool
	uses  map[uint32]int   // how often each constant is read
	loc   []rm             // where each value is, in the stream being generated
	nregs int              // virtual registers used
	nt    bool             // store the result non-temporally
	t     target           // the code's width and the generator's settings
	// unroll is how many vectors the main loop computes at a time.
	unroll int
	// fast is set while the shortcut block is recorded: exp and logistic
	// skip their clamps, test that n is in the window (jumping to the full
	// block if not) and scale by an integer add (see expFast); the stores
	// go to stores, to follow every test.
	fast   bool
	stores []vinst
	// wide generates 16-lane (AVX-512) code, with an 8-lane (AVX2) block
	// for a last half vector; otherwise 8-lane code throughout. wideProg
	// stays set while that last block is generated: the pool's constants
	// are 16 copies for the whole function.
	wide, wideProg bool
	// pin is how many of the pool's constants (its first, the most used)
	// the wide code keeps in registers, loaded once before the loops:
	// constant i in ZMM31-i, out of the allocator's reach, read through
	// the virtual register pinned[bits]. Memory operands cost a load each
	// use, and exp alone reads about a dozen constants a vector, so the
	// loads, two a cycle, bound the loops as much as the arithmetic did.
	pin    int
	pinned map[uint32]int
	// spills counts the values the allocator stored to spill slots.
	spills int
	// masked is set while a row's last partial vector is recorded (8-lane
	// code): inputs are read and outputs written through the mask in
	// variable mask, and the folds take their identity in its other
	// lanes.
	masked bool
	mask   int
	// accVars are the row folds' accumulators of the block being
	// recorded (virtual register → its ZMM), where wide code keeps them
	// in registers (accsInRegs).
	accVars map[int]int
}

// accsInRegs reports whether the wide loops keep the row folds'
// accumulators in registers for a whole row (foldReg) rather than in
// their slots: a slot's load, fold and store chained each iteration to
// the next through store-to-load forwarding (softmax over rows of 128:
// 21 cycles a vector). The 8-lane blocks after them (a last half vector,
// a row's tail) fold in the slots, which the wide loops' registers are
// stored to first.
func (g *gen) accsInRegs() bool {
	return g.wideProg && len(g.p.RowFolds) > 0 && (g.p.RowLen > 0 || g.p.Strided) && g.t.foldRegs
}

// foldRegs lets tests and benchmarks keep the accumulators in their
// slots.
var foldRegs = true

// accRegs is how many ZMM registers the folds' accumulators take.
func (g *gen) accRegs() int {
	if !g.accsInRegs() {
		return 0
	}
	return len(g.p.RowFolds) * g.unroll
}

// foldReg is the ZMM register of fold f's accumulator for the s-th
// vector of an iteration: below the pinned constants.
func (g *gen) foldReg(f, s int) int { return pinReg(g.pin + f*g.unroll + s) }

// lanes is how many elements a vector of the main loops holds.
func (g *gen) lanes() int {
	if g.wide {
		return 16
	}
	return 8
}

// generate returns p's machine code and constant pool for target t. It
// generates twice: the first time only to count each constant's uses,
// so that the second can put the most used first in the pool, where a
// one-byte displacement reaches them (see poolBias). width is the row
// folds' partial results a row (foldWidth). p, nt and t are all it
// reads: they make the program's key in the code book (book_key.go).
func generate(p *Program, nt bool, t target) (code []byte, pool []uint32, width int, err error) {
	if err := p.validate(); err != nil {
		return nil, nil, 0, err
	}
	count := newGen(p, nt, t, nil, 0)
	if _, err := count.function(); err != nil {
		return nil, nil, 0, err
	}
	order := count.byUse()
	g := newGen(p, nt, t, order, 0)
	if code, err = g.function(); err != nil {
		return nil, nil, 0, err
	}
	// Keep as many constants in registers as leave the values their
	// registers: the most that spill no more and unroll as far.
	if g.wide {
		for k := min(len(order), t.maxPinned); k > 0; k /= 2 {
			pg := newGen(p, nt, t, order, k)
			pc, err := pg.function()
			if err == nil && pg.spills <= g.spills && pg.unroll == g.unroll {
				code, g = pc, pg
				break
			}
		}
	}
	return code, g.pool, g.foldWidth(), nil
}

// maxPinned is the most constants wide code keeps in registers: half of
// the 32 (a variable for tests, which compare with none).
var maxPinned = 16

// newGen returns a generator for p, for target t, whose pool starts with
// the constants listed in order.
func newGen(p *Program, nt bool, t target, order []uint32, pin int) *gen {
	g := &gen{p: p, at: map[uint32]int32{}, uses: map[uint32]int{}, nt: nt, t: t, unroll: unrollFor(p), wide: t.wide,
		pin: pin, pinned: map[uint32]int{}}
	g.wideProg = g.wide
	for _, bits := range order {
		g.constant(bits)
	}
	return g
}

// function generates the whole function: unroll vectors at a time, or
// one if their values do not fit.
func (g *gen) function() ([]byte, error) {
	var a asm
	err := g.loop(&a)
	if err == errSpill {
		// Two vectors' values do not fit: one at a time. (The shortcut
		// tests' jumps of the attempt go too: patched into the new code
		// they pointed past its end.)
		g.unroll, a.b, a.jumps = 1, nil, nil
		err = g.loop(&a)
	}
	if err != nil {
		return nil, err
	}
	if len(g.pool) == 0 {
		g.constant(0) // the caller passes the pool's address
	}
	return a.b, nil
}

// loop emits the function: unroll vectors at a time while as many
// remain, then one at a time; wide, then a last 8-lane half vector.
func (g *gen) loop(a *asm) error {
	a.wide = g.wide
	defer func() { a.wide = false }()
	g.loadArgs(a)
	// With rows, the loops below run once per row.
	rows := g.p.RowLen > 0 || g.p.Strided
	rowTop, rowExit := len(a.b), -1
	if rows {
		rowExit = g.startRow(a)
	}
	if err := g.vectors(a); err != nil {
		return err
	}
	if rows {
		g.endRow(a, rowTop, rowExit)
	}
	if g.nt {
		a.sfence() // order the weakly-ordered stores before anything later
	}
	a.vzeroupper()
	a.ret()
	return nil
}

// loadArgs loads the array, length and pool registers from the argument
// block, and the pinned constants from the pool.
func (g *gen) loadArgs(a *asm) {
	for k := range g.p.outputs() {
		a.loadGP(g.outReg(k), mem{base: rdi, index: -1, disp: argOuts + 8*int32(k)})
	}
	a.loadGP(rcx, mem{base: rdi, index: -1, disp: argN})
	a.loadGP(rdx, mem{base: rdi, index: -1, disp: argPool})
	a.addImm(rdx, poolBias)
	if g.wide {
		for i := range g.pin {
			a.load(pinReg(i), mem{base: rdx, index: -1, disp: int32(4*g.copies()*i) - poolBias})
		}
	}
	for k := range g.regInputs() {
		a.loadGP(g.inputReg(k), mem{base: rdi, index: -1, disp: argIns + 8*int32(k)})
	}
}

// vectors emits the loops over one row's (or the whole array's) vectors.
//
// RSI counts elements: f32 arrays are addressed with scale 4, bf16
// and f16 ones with scale 2. R13 = n + slack - lanes·unroll: the main loop
// runs while RSI < R13 (signed, as R13 may be negative), that is
// while unroll whole vectors remain. slack is 1, or 8 where n is a
// multiple of 8 (the same test then, with R13 a multiple of 8 too).
func (g *gen) vectors(a *asm) error {
	lanes := int32(g.lanes())
	slack := int32(8)
	tails := g.p.tails()
	if tails {
		slack = 1
	}
	g.setBound(a, slack, lanes*int32(g.unroll))
	a.zero(rsi)
	main := len(a.b)
	toRest := g.pastBound(a)
	if err := g.block(a, g.unroll); err != nil {
		return err
	}
	g.prefetch(a)
	a.addImm(rsi, lanes*int32(g.unroll))
	a.patch(a.jmp(), main)
	a.patch(toRest, len(a.b))
	// Then one vector at a time while a whole one remains.
	g.setBound(a, slack, lanes)
	rest := len(a.b)
	exit := g.pastBound(a)
	if err := g.block(a, 1); err != nil {
		return err
	}
	a.addImm(rsi, lanes)
	a.patch(a.jmp(), rest)
	a.patch(exit, len(a.b))
	if g.wide && g.accsInRegs() {
		g.storeFoldRegs(a)
	}
	if g.wide {
		if err := g.halfVector(a, slack, tails); err != nil {
			return err
		}
	}
	if tails {
		return g.tail(a)
	}
	return nil
}

// halfVector emits wide code's last half vector, in the 8-lane code.
func (g *gen) halfVector(a *asm, slack int32, tails bool) error {
	g.setBound(a, slack, 8)
	done := g.pastBound(a)
	g.wide, a.wide = false, false
	err := g.block(a, 1)
	g.wide, a.wide = true, true
	if err != nil {
		return err
	}
	if tails {
		a.addImm(rsi, 8)
	}
	a.patch(done, len(a.b))
	return nil
}

// setBound sets R13 = n + slack - v (loop's slack), outside the loop
// that pastBound then tests: fewer than v elements remain from RSI when
// RSI >= R13.
// With inputs read through R13 the bound goes to the argument block.
func (g *gen) setBound(a *asm, slack, v int32) {
	a.movGP(r13, rcx)
	a.addImm(r13, slack-v)
	if g.viaR13() {
		a.storeGP(mem{base: rdi, index: -1, disp: argBound}, r13)
	}
}

// pastBound emits the jump taken when RSI >= R13 (signed: short rows
// make R13 negative) and returns its displacement to patch.
func (g *gen) pastBound(a *asm) int {
	if g.viaR13() {
		a.cmpGPMem(rsi, mem{base: rdi, index: -1, disp: argBound})
	} else {
		a.cmpGP(rsi, r13)
	}
	return a.jge()
}

// tail emits a row's last partial vector, where 1 to 7 elements remain:
// the 8-lane code with R13 = 8 minus their count, so that the mask, read
// from the argument block's table at R13, selects them.
func (g *gen) tail(a *asm) error {
	a.cmpGP(rsi, rcx)
	done := a.jae()
	a.movGP(r13, rsi)
	a.subGP(r13, rcx)
	a.addImm(r13, 8)
	wide := g.wide
	g.wide, a.wide, g.masked = false, false, true
	err := g.blockWith(a, 1, false)
	g.wide, a.wide, g.masked = wide, wide, false
	if err != nil {
		return err
	}
	a.patch(done, len(a.b))
	return nil
}

// prefetchHint is the PREFETCH variant the loops use: 1 is T0 (into
// L1). T1 (2, into L2) measured the same on softmax.
const prefetchHint = 1

// prefetch asks for the lines PrefetchAhead elements past the unroll
// vectors the main loop's iteration reads, of each input listed: one line
// per 64 bytes read, rounded up, so a stream is covered whatever the
// unroll.
func (g *gen) prefetch(a *asm) {
	for _, k := range g.p.PrefetchInputs {
		size := int32(g.p.inputType(k).size())
		bytes := int32(g.lanes()) * size * int32(g.unroll)
		m := g.inputMem(k, int(size), size*int32(g.p.PrefetchAhead))
		if m.via != 0 {
			a.loadGP(r13, mem{base: rdi, index: -1, disp: m.via})
		}
		for off := int32(0); off < bytes; off += 64 {
			a.prefetch(mem{base: m.base, index: rsi, scale: int(size), disp: m.disp + off}, prefetchHint)
		}
	}
}

// block emits the code for n consecutive vectors, interleaved.
func (g *gen) block(a *asm, n int) error {
	if !g.hasShortcut() {
		return g.blockWith(a, n, false)
	}
	// The shortcut block, then out of its way the full one, which its
	// test jumps to when a lane is outside the window.
	if err := g.blockWith(a, n, true); err != nil {
		return err
	}
	jumps := a.jumps
	a.jumps = nil
	over := a.jmp()
	for _, j := range jumps {
		a.patch(j, len(a.b))
	}
	if err := g.blockWith(a, n, false); err != nil {
		return err
	}
	a.patch(over, len(a.b))
	return nil
}

// shortcuts turns the shortcut blocks on (off: for benchmarks' A/B).
var shortcuts = true

// hasShortcut reports whether p has an op with a shortcut (exp and
// logistic: the kernels' fast path for arguments in a window).
func (g *gen) hasShortcut() bool {
	if !g.t.shortcuts {
		return false
	}
	for _, v := range g.p.Values {
		if v.Op == Exp || v.Op == Logistic {
			return true
		}
	}
	return false
}

// blockWith emits n vectors interleaved; with fast, the shortcut
// versions, then the stores.
func (g *gen) blockWith(a *asm, n int, fast bool) error {
	g.fast, g.stores, g.accVars = fast, nil, map[int]int{}
	defer func() { g.fast, g.stores = false, nil }()
	lists := make([][]vinst, n)
	for s := range n {
		g.a = &vasm{nregs: &g.nregs}
		if err := g.body(int32(g.lanes() * s)); err != nil {
			return err
		}
		lists[s] = g.a.ins
	}
	regs, pins := numYMM, map[int]int{}
	if g.wide {
		regs = numZMM - g.pin - g.accRegs() // a block may not read them all, but all hold theirs
		for bits, v := range g.pinned {
			pins[v] = pinReg(int(g.at[bits]) / (4 * g.copies()))
		}
		for v, r := range g.accVars {
			pins[v] = r
		}
	}
	spills, err := allocate(a, append(interleave(lists), g.stores...), g.nregs, regs, pins)
	g.spills += spills
	return err
}

// pinReg is the register of the pool's i-th constant, when pinned.
func pinReg(i int) int { return numZMM - 1 - i }

// body records one vector's worth of the program, at element offset off
// from the current position.
func (g *gen) body(off int32) error {
	g.loc = make([]rm, len(g.p.Values))
	if g.masked {
		g.mask = g.a.reg()
		g.a.load(g.mask, mem{base: rdi, index: r13, scale: 4, disp: argMask})
	}
	for i, v := range g.p.Values {
		if err := g.value(i, v, off); err != nil {
			return fmt.Errorf("jit: value %d (%s): %w", i, v.Op, err)
		}
	}
	if g.fast { // the stores go after the window test
		body := g.a
		g.a = &vasm{nregs: &g.nregs}
		defer func() { g.stores, g.a = append(g.stores, g.a.ins...), body }()
	}
	for k, v := range g.p.outputs() {
		r := g.inReg(g.loc[v])
		switch t := g.p.outputType(k); t {
		case BF16:
			g.storeBF16(mem{base: g.outReg(k), index: rsi, scale: 2, disp: 2 * off}, r)
			continue
		case F16:
			g.storeF16(mem{base: g.outReg(k), index: rsi, scale: 2, disp: 2 * off}, r, g.p.Values[v].Op == RoundF16)
			continue
		case U8, S8:
			g.storeBytes(mem{base: g.outReg(k), index: rsi, scale: 1, disp: off}, r, t == S8)
			continue
		}
		m := mem{base: g.outReg(k), index: rsi, scale: 4, disp: 4 * off}
		if g.masked {
			g.a.maskStore(m, g.mask, r)
			continue
		}
		g.a.store(m, r, g.nt && !slices.Contains(g.p.CachedOutputs, k))
	}
	for f, fd := range g.p.RowFolds {
		g.fold(f, fd, int(off)/g.lanes())
	}
	return nil
}

// inReg returns a register holding o, loading a memory operand into a
// new one.
func (g *gen) inReg(o rm) int {
	if !o.isMem {
		return o.reg
	}
	r := g.a.reg()
	g.a.load(r, o.m)
	return r
}

// value records value i and where it is.
func (g *gen) value(i int, v Value, off int32) error {
	switch v.Op {
	case Input:
		g.loc[i] = ymm(g.input(v, off))
		return nil
	case Splat:
		g.loc[i] = at(mem{base: rdi, index: -1, disp: argSplat + slotBytes*int32(v.Arg)})
		return nil
	case Const:
		g.loc[i] = g.f32(v.Value)
		return nil
	}
	args := make([]rm, v.Op.arity())
	for k := range args {
		args[k] = g.loc[v.Args[k]]
	}
	r := g.a.reg()
	if (v.Op == Max || v.Op == Min || v.Op == Clamp) && g.numbers(v) {
		return g.extremeOfNumbers(i, v, r, args)
	}
	if err := g.emit(v.Op, r, args); err != nil {
		return err
	}
	g.loc[i] = ymm(r)
	return nil
}

// input returns a register holding input value v's vector at element
// offset off, widened to f32.
func (g *gen) input(v Value, off int32) int {
	r := g.a.reg()
	t := g.p.inputType(v.Arg)
	narrow := g.inputMem(v.Arg, 2, 2*off) // Off is 0 (validate)
	switch t {
	case BF16:
		// A bf16 value is the top half of its f32.
		g.a.loadWords(r, narrow)
		g.a.shift(shiftLeft, r, r, 16)
		return r
	case F16:
		g.loadF16(r, narrow)
		return r
	}
	if m := g.inputMem(v.Arg, 4, 4*off+4*int32(v.Off)); g.masked {
		g.a.maskLoad(r, g.mask, m)
	} else {
		g.a.load(r, m)
	}
	if t == I32 {
		g.a.cvt(cvtDQ2PS, r, ymm(r))
	}
	return r
}

// binary ops: the kernels compute a op b with a as Intel's first source.
// (Tables are static arrays, not maps: a map literal is built by init
// code, which would keep it in binaries without the generator.)
var psOps = [...]byte{Add: opAdd, Sub: opSub, Mul: opMul, Div: opDiv, And: opAnd, Or: opOr, Xor: opXor}

// Comparison predicates, as kernels' compare kernels use them.
var cmpPreds = [...]byte{CmpEQ: 0x00, CmpNE: 0x04, CmpLT: 0x01, CmpLE: 0x02, CmpGT: 0x0E, CmpGE: 0x0D}

const unordered = 3

// emit computes op of args into register r.
func (g *gen) emit(op Op, r int, args []rm) error {
	a := g.a
	switch op {
	case Add, Sub, Mul, Div, And, Or, Xor:
		// A memory operand can only be the second source.
		a.ps(psOps[op], r, g.inReg(args[0]), args[1])
	case CmpEQ, CmpNE, CmpLT, CmpLE, CmpGT, CmpGE:
		a.cmp(cmpPreds[op], r, g.inReg(args[0]), args[1])
	case Abs:
		a.ps(opAnd, r, g.inReg(args[0]), g.constant(0x7fffffff))
	case Neg:
		a.ps(opXor, r, g.inReg(args[0]), g.constant(0x80000000))
	case Sqrt:
		a.sqrt(r, args[0])
	case RoundEven:
		a.round(r, args[0], roundNearest)
	case Max, Min:
		g.extreme(op, r, args[0], args[1])
	case Clamp: // nanMin(nanMax(x, lo), hi), as kernels.ClampF32
		t := a.reg()
		g.extreme(Max, t, args[1], args[0])
		g.extreme(Min, r, ymm(t), args[2])
	case Select: // VBLENDVPS with the mask in a register
		a.blendv(r, g.inReg(args[2]), args[1], g.inReg(args[0]))
	case RoundBF16:
		g.roundBF16(r, g.inReg(args[0]))
	case RoundF16:
		g.roundF16(r, g.inReg(args[0]))
	case Exp, Tanh, Logistic, Erf:
		g.math(op, r, g.inReg(args[0]))
	default:
		return fmt.Errorf("no code for %s", op)
	}
	return nil
}

// numbers reports whether v's bounds (a maximum's or minimum's second
// operand, a clamp's lo and hi) are constants other than NaN.
func (g *gen) numbers(v Value) bool {
	bounds := v.Args[1:2]
	if v.Op == Clamp {
		bounds = []int{v.Args[0], v.Args[2]}
	}
	for _, b := range bounds {
		if c := g.p.Values[b]; c.Op != Const || c.Value != c.Value {
			return false
		}
	}
	return true
}

// extremeOfNumbers is extreme with a bound that is never NaN: MAXPS with
// the bound first returns the other operand, NaN or not, where it does
// not exceed the bound (equal values included), which is all the blends
// would make it (a ReLU, a quantizer's clamp: one instruction a bound).
func (g *gen) extremeOfNumbers(i int, v Value, r int, args []rm) error {
	a := g.a
	switch v.Op {
	case Max:
		a.ps(opMax, r, g.inReg(args[1]), args[0])
	case Min:
		a.ps(opMin, r, g.inReg(args[1]), args[0])
	case Clamp:
		t := a.reg()
		a.ps(opMax, t, g.inReg(args[0]), args[1])
		a.ps(opMin, r, g.inReg(args[2]), ymm(t))
	}
	g.loc[i] = ymm(r)
	return nil
}

// extreme is XLA's maximum or minimum as kernels' nanExtreme computes
// it: MAXPS with b first, then a NaN b blended in, then a NaN a over it.
func (g *gen) extreme(op Op, r int, ao, bo rm) {
	a := g.a
	x, y, m := g.inReg(ao), g.inReg(bo), a.reg()
	code := byte(opMax)
	if op == Min {
		code = opMin
	}
	a.ps(code, r, y, ymm(x))
	if g.wide {
		a.cmpBlend(unordered, r, r, y, y, ymm(y))
		a.cmpBlend(unordered, r, r, x, x, ymm(x))
		return
	}
	a.cmp(unordered, m, y, ymm(y))
	a.blendv(r, r, ymm(y), m)
	a.cmp(unordered, m, x, ymm(x))
	a.blendv(r, r, ymm(x), m)
}

// unrollFor is how many vectors the main loop interleaves for p: three
// when it has two or more of exp, tanh and logistic, two otherwise. More
// vectors in flight hide longer dependency chains, fewer spill less and
// keep the loop short. Medians of five runs in L1, ns a vector, two
// against three: exp 3.32/3.73, gelu 6.23/6.91, softmax's e^(x-m)
// 3.65/3.96, tanh 5.29/5.45, logistic 5.45/5.29; tanh then exp
// 10.24/9.76, chain10 13.61/12.61. From four on chain10's values spill
// and it gets slower (15.2–16.9 at six).
func unrollFor(p *Program) int {
	if p.unroll > 0 {
		return p.unroll
	}
	long := 0
	for _, v := range p.Values {
		if v.Op.long() {
			long++
		}
	}
	if long >= 2 {
		return 3
	}
	return 2
}
