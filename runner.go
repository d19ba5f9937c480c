package axle

import "github.com/axle-ml/axle/hlo"

// ModuleRunner runs modules on literals through a client, compiling each
// through the client's cache: the conformance runner's backend
// (conformance.Backend) and the simplest way to run a module once.
type ModuleRunner struct {
	Client  *Client
	Options CompileOptions
}

// Name is the client's platform ("cpu", "interp").
func (r *ModuleRunner) Name() string {
	if r == nil {
		return ""
	}
	return r.Client.Platform()
}

// Run compiles m and runs it on args, returning the result as one literal
// (a tuple result retupled).
func (r *ModuleRunner) Run(m *hlo.Module, args []*hlo.Literal) (*hlo.Literal, error) {
	if r == nil {
		return nil, errBadClient
	}
	x, err := r.Client.Compile(m, r.Options)
	if err != nil {
		return nil, err
	}
	outs, err := x.ExecuteLiterals(args...)
	if err != nil {
		return nil, err
	}
	if x.tuple {
		return hlo.MakeTupleLiteral(outs...), nil
	}
	return outs[0], nil
}
