package opt

import "github.com/axle-ml/axle/pass"

// Standard returns the target-independent pipeline `axle opt` and
// `axle test-cases --opt` run: inline calls, then simplify to a fixed
// point (rules, folding, CSE, DCE and the structural simplifiers feed each
// other), then fold transposes into their consumers and clean up.
func Standard() *pass.Pipeline {
	return &pass.Pipeline{
		Label: "standard",
		Passes: []pass.Pass{
			pass.Rename("early-dce", DCE),
			&pass.Fix{Label: "simplification", Passes: []pass.Pass{
				Simplify,
				ConstantFolding,
				CSE,
				DCE,
			}},
			pass.Rename("late-cse", CSE),
			pass.Rename("late-dce", DCE),
		},
	}
}
