package cpu

import (
	cc "github.com/axle-ml/axle/backend/cpu/compiler"
	"github.com/axle-ml/axle/pass"
)

// Compile needs the compiler registered (package frontend); importing it
// registers it. It does not import this package, so its tests may.

// Pipeline is what Compile runs before lowering, as `axle opt --backend
// cpu` builds it.
func Pipeline(opts Options) *pass.Pipeline {
	return cc.Pipeline(!opts.NoOptimize, FusionPasses(opts, cc.Compiler{}), FusionOrders)
}

// FusionPipeline is the fusion passes as the compiler runs them.
func FusionPipeline(opts Options) *pass.Pipeline {
	return cc.FusionPipeline(FusionPasses(opts, cc.Compiler{}), FusionOrders)
}
