package opt

import "github.com/axle-ml/axle/pass"

// Standard returns the target-independent pipeline `axle opt` and
// `axle test-cases --opt` run: turn GPU library calls back into HLO,
// inline calls and maps, expand batch-norm
// into reductions and elementwise ops, simplify to a fixed point
// (rules, folding, the structural simplifiers, CSE and DCE feed each
// other), then fold transposes into their consumers and clean up.
func Standard() *pass.Pipeline {
	return &pass.Pipeline{
		Label: "standard",
		Passes: []pass.Pass{
			GPULibraryCalls,
			CallInliner,
			MapInliner,
			BatchNormExpander,
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
			{Before: "gpu-library-calls", After: "simplification", Reason: "the dots, convolutions and epilogues a GPU library call stands for are plain HLO the simplifiers can work on"},
			{Before: "call-inliner", After: "simplification", Reason: "the simplifiers see through calls only once they are inlined"},
			{Before: "call-inliner", After: "map-inliner", Reason: "a call in a map body is inlined first, which can leave the body elementwise"},
			{Before: "map-inliner", After: "simplification", Reason: "an inlined map body is elementwise code the simplifiers and fusion can work on"},
			{Before: "batch-norm-expander", After: "simplification", Reason: "the expansion's tuple and get-tuple-element pairs are left for the tuple simplifier, its constants and broadcasts for the simplifier and CSE"},
			{Before: "simplification", After: "transpose-folding", Reason: "the simplifier cancels transpose pairs first; folding one would hide the pair"},
			{Before: "transpose-folding", After: "late-dce", Reason: "folded transposes are left dead"},
		},
	}
}
