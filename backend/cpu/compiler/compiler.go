// Package compiler is the CPU backend's compiler front: the standard
// passes, the pass runner with its dumps and timings, the reference
// evaluator the engine falls back to, and the JIT's code generator. It
// registers itself with package frontend when imported; package cpu's
// Compile needs it, and the runtime package axle imports it. A binary
// that runs modules compiled ahead of time leaves it out, and with it
// everything it links.
package compiler

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu/frontend"
	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

// Importing the compiler registers it, and installs the JIT's code
// generator: compiling generates code, running a plan only loads it.
func init() {
	frontend.Register(Compiler{})
	jit.InstallGenerator()
}

// Compiler implements frontend.Compiler.
type Compiler struct{}

// Prepare rewrites GPU library calls into the HLO they stand for
// (whatever the options: nothing, not even the evaluator, runs them as
// calls) and checks that the evaluator can run every op, so that what no
// kernel takes fails at compile time, not at the first execution.
func (Compiler) Prepare(m *hlo.Module) error {
	if _, err := opt.GPULibraryCalls.Run(m); err != nil {
		return err
	}
	return eval.CheckSupported(m)
}

// Optimize runs the standard pipeline, or only the two passes that give
// map and batch-norm their kernels: they lower, not optimize.
func (Compiler) Optimize(m *hlo.Module, full bool, ctx context.Context) error {
	if full {
		_, err := opt.Standard().RunWith(m, pass.Options{Observers: contextObserver(ctx)})
		return err
	}
	for _, p := range []pass.Pass{opt.MapInliner, opt.BatchNormExpander} {
		if _, err := p.Run(m); err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
	}
	return nil
}

// Fuse runs the engine's fusion passes and verifies the result.
func (Compiler) Fuse(m *hlo.Module, passes []frontend.Pass, orders []frontend.Order, ctx context.Context) error {
	if _, err := FusionPipeline(passes, orders).RunWith(m, pass.Options{Observers: contextObserver(ctx)}); err != nil {
		return err
	}
	if err := hlo.Verify(m); err != nil {
		return fmt.Errorf("after fusion: %w", err)
	}
	return nil
}

// DCE is the standard dead-code elimination.
func (Compiler) DCE(m *hlo.Module) (bool, error) { return opt.DCE.Run(m) }

// Canonical is XLA's canonical text of in.
func (Compiler) Canonical(in *hlo.Instruction) string {
	return hlotext.PrintInstruction(in, hlotext.CanonicalForm)
}

// NewEvaluator makes a reference evaluator polling stop.
func (Compiler) NewEvaluator(stop *atomic.Bool, measurePeak bool) frontend.Evaluator {
	return &evaluator{eval.Evaluator{Interrupt: stop, MeasurePeak: measurePeak}}
}

type evaluator struct{ eval.Evaluator }

func (e *evaluator) SetInterrupt(stop *atomic.Bool) { e.Interrupt = stop }

func (e *evaluator) SetParticipant(p *collective.Participant) {
	e.Participant = p
	e.ReplicaID, e.PartitionID = 0, 0
	if p != nil {
		e.ReplicaID, e.PartitionID = uint32(p.Replica), uint32(p.Partition)
	}
}

// FusionPipeline is the engine's fusion passes as a pipeline.
func FusionPipeline(passes []frontend.Pass, orders []frontend.Order) *pass.Pipeline {
	p := &pass.Pipeline{Label: "fusion"}
	for _, f := range passes {
		p.Passes = append(p.Passes, pass.Func(f.Name, f.Run))
	}
	for _, o := range orders {
		p.Orders = append(p.Orders, pass.Order{Before: o.Before, After: o.After, Reason: o.Reason})
	}
	return p
}

// Pipeline returns the passes package cpu's Compile runs on a module
// before lowering it, in its order: the standard pipeline (without full,
// only the passes that give their ops kernels), then the fusion passes.
// It is what `axle opt --backend cpu` runs, so dumps, --verify-each and
// --timings see the backend's own decisions.
func Pipeline(full bool, passes []frontend.Pass, orders []frontend.Order) *pass.Pipeline {
	var front pass.Pass = opt.Standard()
	if !full {
		front = &pass.Pipeline{Label: "kernel-prep", Passes: []pass.Pass{opt.GPULibraryCalls, opt.MapInliner, opt.BatchNormExpander}}
	}
	return &pass.Pipeline{
		Label:  "cpu",
		Passes: []pass.Pass{front, FusionPipeline(passes, orders)},
		Orders: []pass.Order{
			{Before: "standard", After: "fusion", Reason: "the standard passes do not look inside fusions: they simplify the module fusion then partitions"},
		},
	}
}

// contextObserver stops a pipeline once ctx is done (nil when ctx can
// never be: no observer to call).
func contextObserver(ctx context.Context) []pass.Observer {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	return []pass.Observer{func(pass.Event) error { return ctx.Err() }}
}
