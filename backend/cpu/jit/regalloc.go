//go:build linux && amd64 && !purego

package jit

import (
	"errors"
	"math"
	"slices"
	"sort"
)

// Register allocation for straight-line code: virtual registers are
// variables (an FMA reads and writes its destination; an expansion may
// write a temporary more than once), each kept in a vector register
// from a write to its last read before the next write. When all are
// taken (16, or 32 in wide code), the variable whose next read is
// farthest away is evicted (Belady's rule), stored to its spill slot in the argument block first if its
// value is still needed. A spilled variable read as an instruction's
// last source is read from its slot directly, as a memory operand.

var errSpill = errors.New("jit: too many spilled values")

type event struct {
	pos         int
	read, write bool
}

type allocator struct {
	a      *asm
	ins    []vinst
	events [][]event // per variable, in order
	phys   []int     // variable → vector register, or -1
	slot   []int     // variable → spill slot, or -1
	saved  []bool    // the slot holds the variable's current value
	owner  []int     // register → variable, or -1: 16 registers, or 32 in wide code
	slots  int       // slots handed out
	free   []int     // slots of variables that died
	pinned []bool    // variable → kept in its register throughout
}

// allocate emits ins with physical registers into a, allocating
// registers 0 to regs-1, and returns how many spill slots it used. The
// variables in pins (variable → register, regs or above) live in their
// registers throughout: constants loaded before the loop, only ever read.
func allocate(a *asm, ins []vinst, nregs, regs int, pins map[int]int) (int, error) {
	al := &allocator{a: a, ins: ins, events: make([][]event, nregs),
		phys: make([]int, nregs), slot: make([]int, nregs), saved: make([]bool, nregs), pinned: make([]bool, nregs)}
	for v := range nregs {
		al.phys[v], al.slot[v] = -1, -1
	}
	for v, r := range pins {
		al.phys[v], al.pinned[v] = r, true
	}
	al.owner = make([]int, regs)
	for r := range al.owner {
		al.owner[r] = -1
	}
	for pos := range ins {
		ops := ins[pos].reads()
		regs, src2 := ops.list(), ops.src2
		note := func(v int, read, write bool) {
			e := al.events[v]
			if n := len(e); n > 0 && e[n-1].pos == pos {
				e[n-1].read, e[n-1].write = e[n-1].read || read, e[n-1].write || write
				return
			}
			al.events[v] = append(e, event{pos, read, write})
		}
		for _, v := range regs {
			note(v, true, false)
		}
		if src2 >= 0 {
			note(src2, true, false)
		}
		if w := ins[pos].writes(); w >= 0 {
			note(w, false, true)
		}
	}
	for pos := range ins {
		if err := al.step(pos); err != nil {
			return 0, err
		}
	}
	return al.slots, nil
}

// next returns v's first event after pos (ok false: none).
func (al *allocator) next(v, pos int) (event, bool) {
	e := al.events[v]
	c := sort.Search(len(e), func(k int) bool { return e[k].pos > pos })
	if c == len(e) {
		return event{}, false
	}
	return e[c], true
}

// needed reports whether v's value at pos is read later (before being
// overwritten).
func (al *allocator) needed(v, pos int) bool {
	e, ok := al.next(v, pos)
	return ok && e.read
}

// reg returns a free vector register, evicting a variable if none is;
// the registers in keep are not evicted.
func (al *allocator) reg(pos int, keep []int) (int, error) {
	for r, v := range al.owner {
		if v < 0 {
			return r, nil
		}
	}
	victim, far := -1, -1
	for r, v := range al.owner {
		if contains(keep, r) {
			continue
		}
		d := math.MaxInt
		if e, ok := al.next(v, pos); ok && e.read {
			d = e.pos
		}
		if d > far {
			victim, far = r, d
		}
	}
	v := al.owner[victim]
	if al.needed(v, pos-1) && !al.saved[v] {
		if al.slot[v] < 0 {
			switch n := len(al.free); {
			case n > 0:
				al.slot[v], al.free = al.free[n-1], al.free[:n-1]
			case al.slots == maxSpill:
				return 0, errSpill
			default:
				al.slot[v] = al.slots
				al.slots++
			}
		}
		al.a.store(al.spillAt(v), victim)
		al.saved[v] = true
	}
	al.phys[v], al.owner[victim] = -1, -1
	return victim, nil
}

func (al *allocator) spillAt(v int) mem {
	return mem{base: rdi, index: -1, disp: argSpill + slotBytes*int32(al.slot[v])}
}

func contains(rs []int, r int) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// inReg makes sure variable v is in a register (reloading it) and
// returns the register.
func (al *allocator) inReg(v, pos int, keep *[]int) (int, error) {
	if r := al.phys[v]; r >= 0 {
		return r, nil
	}
	r, err := al.reg(pos, *keep)
	if err != nil {
		return 0, err
	}
	if al.slot[v] < 0 || !al.saved[v] {
		return 0, errors.New("jit: read of a variable that holds no value")
	}
	al.a.load(r, al.spillAt(v))
	al.phys[v], al.owner[r] = r, v
	*keep = append(*keep, r)
	return r, nil
}

func (al *allocator) step(pos int) error {
	in := &al.ins[pos]
	ops := in.reads()
	regs, src2 := ops.list(), ops.src2
	var allArr [4]int
	all := append(append(allArr[:0], regs...), src2)
	var keepArr [5]int
	keep := keepArr[:0]
	for _, v := range all {
		if v >= 0 && al.phys[v] >= 0 {
			keep = append(keep, al.phys[v])
		}
	}
	var phys [3]int // the registers of regs
	for k, v := range regs {
		r, err := al.inReg(v, pos, &keep)
		if err != nil {
			return err
		}
		phys[k] = r
	}
	op2 := in.src2
	if src2 >= 0 {
		if r := al.phys[src2]; r >= 0 {
			op2 = ymm(r)
		} else {
			op2 = at(al.spillAt(src2))
		}
	}
	// Sources whose values die here free their registers, which the
	// result may then take: every instruction reads its sources before
	// it writes. Their spill slots are released only after the
	// instruction: an eviction made to find the result a register may
	// store into a freed slot, and the instruction may still read a dying
	// source there.
	w := in.writes()
	var dyingArr [4]int
	dying := dyingArr[:0]
	for _, v := range all {
		if v >= 0 && v != w && !al.pinned[v] && !al.needed(v, pos) && !slices.Contains(dying, v) {
			dying = append(dying, v)
			if r := al.phys[v]; r >= 0 {
				al.owner[r], al.phys[v] = -1, -1
			}
		}
	}
	dst := -1
	if w >= 0 {
		if r := al.phys[w]; r >= 0 {
			dst = r
		} else {
			r, err := al.reg(pos, keep)
			if err != nil {
				return err
			}
			dst = r
			al.phys[w], al.owner[r] = r, w
		}
		al.saved[w] = false
	}
	al.emit(in, dst, phys, op2)
	for _, v := range dying {
		al.drop(v)
	}
	if w >= 0 && !al.pinned[w] && !al.needed(w, pos) {
		al.drop(w)
	}
	return nil
}

// drop frees the register and spill slot of a variable whose value is
// read no more.
func (al *allocator) drop(v int) {
	if r := al.phys[v]; r >= 0 {
		al.owner[r], al.phys[v] = -1, -1
	}
	if s := al.slot[v]; s >= 0 {
		al.free = append(al.free, s)
		al.slot[v], al.saved[v] = -1, false
	}
}

// emit writes in with physical registers: phys holds those of the
// variables in.reads() lists, in its order.
func (al *allocator) emit(in *vinst, dst int, phys [3]int, op2 rm) {
	a := al.a
	// An input read through R13: its address first (inputMem).
	if via := max(in.m.via, op2.m.via); via != 0 {
		a.loadGP(r13, mem{base: rdi, index: -1, disp: via})
	}
	src1 := phys[0]
	mask := phys[1] // kBlend, kPack and kMaskStore: their second register operand
	switch in.kind {
	case kPS:
		a.ps(in.op, dst, src1, op2)
	case kPD:
		a.pd(in.op, dst, src1, op2)
	case kFMA:
		a.fma(in.op, dst, phys[1], op2) // reads lists dst, then src1
	case kCmp:
		a.cmp(in.op, dst, src1, op2)
	case kBlend:
		a.blendv(dst, src1, op2, mask)
	case kCmpBlend:
		a.cmpBlend(in.op, dst, src1, mask, phys[2], op2)
	case kShift:
		a.shift(int(in.op), dst, src1, in.imm)
	case kSqrt:
		a.sqrt(dst, op2)
	case kRound:
		a.round(dst, op2, in.imm)
	case kLoad:
		a.load(dst, in.m)
	case kStore:
		if in.op != 0 {
			a.storeNT(in.m, src1)
		} else {
			a.store(in.m, src1)
		}
	case kMov:
		if dst != src1 { // the allocator gave both the same register
			a.mov(dst, src1)
		}
	case kLoadWords:
		a.loadWords(dst, in.m)
	case kExtract:
		a.extractHigh(dst, src1)
	case kPack:
		a.pack(in.op, dst, src1, mask)
	case kCvt:
		a.cvt(in.op, dst, op2)
	case kStore64:
		a.store64(in.m, src1)
	case kStore128:
		a.store128(in.m, src1)
	case kMaskLoad:
		a.maskLoad(dst, src1, in.m)
	case kMaskStore:
		a.maskStore(in.m, mask, src1)
	case kFromF16:
		a.cvtPH2PS(dst, op2)
	case kToF16:
		a.cvtPS2PH(ymm(dst), src1)
	case kStoreF16:
		a.cvtPS2PH(at(in.m), src1)
	case kTestJump:
		a.ptest(src1, op2)
		a.jumps = append(a.jumps, a.jnz())
	}
}
