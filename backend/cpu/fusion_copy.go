package cpu

import "github.com/axle-ml/axle/hlo"

// copyPays reports whether copying cheap producer o into a second fusion
// (grow) saves storing it: only when nothing o reads is a computation
// that would have to be stored instead for the copy to read. A copy
// reads its non-cheap operands as parameters, so they could no longer be
// computed inside o's own fusion; an LSTM step's cell state c' = f·c + i·g,
// read by the step's h' = o·tanh(c') and by the next step, copied into
// h's fusion would make f, i and g (logistic and tanh) separate passes,
// and the copy's own cheap operands copied in turn (the previous steps'
// cells) would repeat the recurrence in every step's fusion.
func copyPays(o *hlo.Instruction, users map[*hlo.Instruction][]*hlo.Instruction) bool {
	return copyPaysWithin(o, users, maxCopied)
}

// copyPaysWithin is copyPays for a copy of at most budget instructions:
// cheap operands are copied too, so what they read counts as well.
func copyPaysWithin(o *hlo.Instruction, users map[*hlo.Instruction][]*hlo.Instruction, budget int) bool {
	for _, p := range o.Operands {
		switch {
		case !fusible(p) || scalarSplat(p) || viewOp(p) || anyView(users[p]):
			// stored (or free) whether or not o is copied
		case cheap(p) && budget > 1 && copyPaysWithin(p, users, budget-1):
		default:
			return false
		}
	}
	return true
}
