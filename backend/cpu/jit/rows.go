//go:build linux && amd64 && !purego

package jit

// A program with rows (RowLen, or Strided) runs the generated loops once
// per row: the row scalars are splatted and the row folds' accumulators
// set at each row's start, and stored at its end.

// startRow emits a row's start: the exit once no row remains, then each
// row scalar's value broadcast into its splat slot. It returns the exit
// jump's displacement to patch.
func (g *gen) startRow(a *asm) int {
	a.cmpMemZero(mem{base: rdi, index: -1, disp: argRows})
	rowExit := a.je()
	for _, k := range g.p.RowScalars {
		ptr := mem{base: rdi, index: -1, disp: argRowPtrs + 8*int32(k)}
		a.loadGP(rsi, ptr)
		a.broadcast(0, mem{base: rsi, index: -1})
		a.store(mem{base: rdi, index: -1, disp: argSplat + slotBytes*int32(k)}, 0)
		a.addMem(ptr, 4)
	}
	g.startFolds(a)
	return rowExit
}

// endRow emits a row's end: the folds stored, every array moved on to
// its next row, the row count decremented and the jump back to rowTop.
func (g *gen) endRow(a *asm, rowTop, rowExit int) {
	g.endFolds(a)
	outs := len(g.p.outputs())
	for k := range outs {
		g.nextRow(a, g.outReg(k), k, g.p.outputType(k))
	}
	for k := range g.regInputs() {
		g.nextRow(a, g.inputReg(k), outs+k, g.p.inputType(k))
	}
	for k := g.regInputs(); k < g.p.Inputs; k++ { // through R13: the slot itself
		slot := mem{base: rdi, index: -1, disp: argIns + 8*int32(k)}
		a.loadGP(r13, slot)
		g.nextRow(a, r13, outs+k, g.p.inputType(k))
		a.storeGP(slot, r13)
	}
	a.decMem(mem{base: rdi, index: -1, disp: argRows})
	a.patch(a.jmp(), rowTop)
	a.patch(rowExit, len(a.b))
}

// nextRow moves array register r, the slot-th array (outputs first), on
// to its next row: by one row of RowLen elements, or by the array's
// stride in the argument block for a strided program.
func (g *gen) nextRow(a *asm, r, slot int, t Type) {
	if g.p.Strided {
		a.addGPMem(r, mem{base: rdi, index: -1, disp: argStrides + 8*int32(slot)})
		return
	}
	a.addImm(r, int32(g.p.RowLen*t.size()))
}

// foldSlot is the accumulator of row fold f for the s-th vector of an
// iteration.
func foldSlot(f, s int) mem {
	return mem{base: rdi, index: -1, disp: argFolds + int32(slotBytes*(f*maxUnroll+s))}
}

// fold adds the current vector of fold fd's value into accumulator f of
// the s-th vector of the iteration. It goes with the stores, after every
// shortcut test: a vector the full block redoes is folded once.
func (g *gen) fold(f int, fd RowFold, s int) {
	if g.wide && g.accsInRegs() {
		g.foldInReg(f, fd, s)
		return
	}
	a := g.a
	m := foldSlot(f, s)
	acc, r, x := a.reg(), a.reg(), g.inReg(g.loc[fd.Value])
	if g.masked { // the lanes past the row fold the identity
		y := a.reg()
		a.blendv(y, g.inReg(g.constant(foldIdentity(fd.Op))), ymm(x), g.mask)
		x = y
	}
	a.load(acc, m)
	foldOps(a, fd.Op, r, acc, x)
	a.store(m, r, false)
}

// foldInReg is fold with the accumulator in its register (foldReg):
// the same operations in the same order, so the same bits.
func (g *gen) foldInReg(f int, fd RowFold, s int) {
	a := g.a
	acc := a.reg()
	g.accVars[acc] = g.foldReg(f, s)
	foldOps(a, fd.Op, acc, acc, g.inReg(g.loc[fd.Value]))
}

// foldOps emits dst = the fold op of accumulator acc and value x.
func foldOps(a *vasm, op Op, dst, acc, x int) {
	if op == Add {
		a.ps(opAdd, dst, acc, ymm(x))
		return
	}
	// MAXPS (MINPS) gives its second source when either is NaN: the
	// accumulator taken both ways round, one of the two is NaN if either
	// was, and the OR of their bits then is a NaN too (a NaN's exponent
	// is all ones and its fraction not zero); without NaNs the two are
	// the same. The accumulator's chain from one iteration to the next is
	// two ops, where extreme's blends would make it four (eight, wide,
	// through the mask registers).
	code := byte(opMax)
	if op == Min {
		code = opMin
	}
	r, r2 := a.reg(), a.reg()
	a.ps(code, r, x, ymm(acc))
	a.ps(code, r2, acc, ymm(x))
	a.ps(opOr, dst, r, ymm(r2))
}

// storeFoldRegs stores the folds' accumulator registers to their slots,
// after the wide loops (the 8-lane blocks and the row's end read them
// there).
func (g *gen) storeFoldRegs(a *asm) {
	for f := range g.p.RowFolds {
		for s := range g.unroll {
			a.store(foldSlot(f, s), g.foldReg(f, s))
		}
	}
}

// foldIdentity is the value a fold's accumulators start a row with.
func foldIdentity(op Op) uint32 {
	switch op {
	case Max:
		return 0xff800000 // -inf
	case Min:
		return 0x7f800000
	}
	return 0
}

// foldWidth is how many partial results a row's fold leaves: one per
// lane of each vector of an iteration.
func (g *gen) foldWidth() int { return g.unroll * g.lanes() }

// startFolds sets the folds' accumulators to their identity, at a row's
// start (machine registers: nothing is live between rows).
func (g *gen) startFolds(a *asm) {
	for f, fd := range g.p.RowFolds {
		a.load(0, g.constMem(foldIdentity(fd.Op)))
		for s := range g.unroll {
			a.store(foldSlot(f, s), 0)
			if g.wide && g.accsInRegs() {
				a.load(g.foldReg(f, s), g.constMem(foldIdentity(fd.Op)))
			}
		}
	}
}

// endFolds stores the folds' accumulators, at a row's end, where their
// pointers say, and moves the pointers on by a row's partial results.
func (g *gen) endFolds(a *asm) {
	for f := range g.p.RowFolds {
		ptr := mem{base: rdi, index: -1, disp: argFoldPtrs + 8*int32(f)}
		a.loadGP(rsi, ptr)
		for s := range g.unroll {
			a.load(0, foldSlot(f, s))
			a.store(mem{base: rsi, index: -1, disp: int32(4 * g.lanes() * s)}, 0)
		}
		a.addMem32(ptr, int32(4*g.foldWidth()))
	}
}
