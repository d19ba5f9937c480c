package axle

import (
	"context"
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

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

// RunDevices compiles m and runs it on as many devices as it declares
// (replica_count × num_partitions): args[d] are device d's arguments, and
// it returns each device's result, a tuple result retupled (the
// conformance runner's multi-device backend). A client with fewer
// devices is replaced, for this call, by one of its backend with enough.
func (r *ModuleRunner) RunDevices(m *hlo.Module, args [][]*hlo.Literal) ([]*hlo.Literal, error) {
	if r == nil {
		return nil, errBadClient
	}
	c := r.Client
	if err := c.usable(); err != nil {
		return nil, err
	}
	if need := max(int(m.ReplicaCount), 1) * max(int(m.NumPartitions), 1); need > len(c.devices) && c.cluster == nil {
		var err error
		if c, err = NewClient(ClientOptions{Backend: c.backend, Threads: c.threads, Devices: need}); err != nil {
			return nil, err
		}
		defer c.Close()
	}
	x, err := c.Compile(m, r.Options)
	if err != nil {
		return nil, err
	}
	bufs, err := buffersOf(c, args)
	if err != nil {
		return nil, err
	}
	outs, err := x.ExecuteDevices(context.Background(), ExecuteOptions{}, bufs)
	if err != nil {
		return nil, err
	}
	res := make([]*hlo.Literal, len(outs))
	for d, o := range outs {
		if res[d], err = x.resultLiteral(o); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func buffersOf(c *Client, args [][]*hlo.Literal) ([][]*Buffer, error) {
	out := make([][]*Buffer, len(args))
	for d, as := range args {
		for i, a := range as {
			b, err := c.BufferFromLiteral(a)
			if err != nil {
				return nil, fmt.Errorf("device %d argument %d: %w", d, i, err)
			}
			out[d] = append(out[d], b)
		}
	}
	return out, nil
}

// resultLiteral is one device's result buffers as one literal.
func (x *Executable) resultLiteral(bufs []*Buffer) (*hlo.Literal, error) {
	lits := make([]*hlo.Literal, len(bufs))
	for i, b := range bufs {
		l, err := b.ToLiteral()
		if err != nil {
			return nil, err
		}
		lits[i] = l
	}
	if x.tuple {
		return hlo.MakeTupleLiteral(lits...), nil
	}
	return lits[0], nil
}
