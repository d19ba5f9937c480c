package cpu

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
)

// fuse runs the backend's fusion passes over mod's entry computation
// (none with opts.noFusion) and verifies the result.
func fuse(mod *hlo.Module, opts Options) error {
	if opts.noFusion {
		return nil
	}
	names := hlo.NewNameSet(mod)
	if _, err := fuseReduceIotas(mod, mod.Entry, names); err != nil {
		return fmt.Errorf("cpu: index fusion: %w", err)
	}
	if _, err := fuseLoops(mod, mod.Entry, names); err != nil {
		return fmt.Errorf("cpu: fusion: %w", err)
	}
	// Fusion copies index ops into their readers and may leave the
	// originals without users.
	if _, err := opt.DCE.Run(mod); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	// After DCE: a product's dead readers would keep it from folding.
	// Before multi-output fusion, which takes only kLoop fusions: a dot's
	// epilogue stays with its dot.
	if !opts.NoOutputFusion {
		if _, err := fuseEpilogues(mod.Entry, names, effectiveThreads(opts.Threads)); err != nil {
			return fmt.Errorf("cpu: output fusion: %w", err)
		}
	}
	// Sibling fusions are merged once dead ones are gone (a merged dead
	// value would still be computed).
	if n, err := fuseMultiOutput(mod, mod.Entry, names); err != nil {
		return fmt.Errorf("cpu: multi-output fusion: %w", err)
	} else if n > 0 {
		if _, err := opt.DCE.Run(mod); err != nil { // the members' fused computations
			return fmt.Errorf("cpu: %w", err)
		}
	}
	if err := hlo.Verify(mod); err != nil {
		return fmt.Errorf("cpu: after fusion: %w", err)
	}
	return nil
}
