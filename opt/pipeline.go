package opt

import "github.com/axle-ml/axle/pass"

// Standard returns the target-independent pipeline `axle opt` and
// `axle test-cases --opt` run: inline calls, simplify to a fixed point
// (rules, folding, the structural simplifiers, CSE and DCE feed each
// other), then fold transposes into their consumers and clean up.
func Standard() *pass.Pipeline {
	return &pass.Pipeline{
		Label: "standard",
		Passes: []pass.Pass{
			CallInliner,
			pass.Rename("early-dce", DCE),
			&pass.Fix{Label: "simplification", Passes: []pass.Pass{
				Simplify,
				ConstantFolding,
				TupleSimplifier,
				ConditionalSimplifier,
				WhileSimplifier,
				WhileDeadState,
				pass.Rename("fix-call-inliner", CallInliner),
				LoopInvariantCodeMotion,
				SortSimplifier,
				ReshapeMover,
				ZeroSizedElimination,
				CSE,
				DCE,
			}},
			TransposeFolding,
			pass.Rename("late-cse", CSE),
			pass.Rename("late-dce", DCE),
		},
		Orders: []pass.Order{
			{Before: "call-inliner", After: "simplification", Reason: "the simplifiers see through calls only once they are inlined"},
			{Before: "simplification", After: "transpose-folding", Reason: "the simplifier cancels transpose pairs first; folding one would hide the pair"},
			{Before: "transpose-folding", After: "late-dce", Reason: "folded transposes are left dead"},
		},
	}
}
