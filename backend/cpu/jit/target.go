//go:build linux && amd64 && !purego

package jit

// targetOf is the target p's code is generated for here and now: the
// settings of this machine and process that change the code. Compile
// takes it once, so a Func's code, its streaming loop and its key in the
// code book all agree even if a test changes the settings later.
func targetOf(p *Program) target {
	return target{wide: usesWide(p), maxPinned: maxPinned, shortcuts: shortcuts, foldRegs: foldRegs}
}

// usesWide reports whether p's code is generated wide: on a machine
// with AVX-512 (wideCode), for programs of f32 arrays (bf16's packing
// instructions have only their YMM forms here, and f16 arrays stay with
// bf16 ones; an f16 rounding is 16-lane in wide code) with an exp, tanh or
// logistic, whose polynomials make them compute-bound, or with row
// folds, whose rows sit in cache and whose accumulators wide code keeps
// in registers (accsInRegs): the 8-lane loops folded through memory
// slots, each vector waiting on the last one's store (attention's
// softmax maximum over 12×128 rows of 128, one thread: the whole
// softmax 0.162 → 0.143 ms; MiniLM's layer norms after their products
// 0.280 → 0.266). Other programs stream at memory speed either way, and
// 16-lane streaming stores ran 10% slower than 8-lane ones (a 16M
// negate on two threads: 57–59 against 63–64 GB/s).
func usesWide(p *Program) bool {
	if !wideCode {
		return false
	}
	if p.lanes != 0 {
		return p.lanes == 16
	}
	if !p.wideTypes() {
		return false
	}
	if wideAlways {
		return true
	}
	if len(p.RowFolds) > 0 {
		return true
	}
	for _, v := range p.Values {
		if v.Op.long() {
			return true
		}
	}
	return false
}

// wideAlways makes every f32 program wide where wideCode holds (tests).
var wideAlways = false
