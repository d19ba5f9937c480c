package eval

import "github.com/axle-ml/axle/hlo"

// Backend adapts the evaluator to the conformance runner and the
// runtime's backend choice ("interp").
type Backend struct{ Evaluator }

// Name is the backend's name on the command line.
func (*Backend) Name() string { return "interp" }

// Run evaluates the module's entry computation.
func (b *Backend) Run(m *hlo.Module, args []*hlo.Literal) (*hlo.Literal, error) {
	return b.Evaluator.Run(m, args...)
}
