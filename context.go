package axle

import "context"

// ExecuteContext is ExecuteWith under a context. A context already done
// runs nothing and takes nothing: the call returns ctx.Err().
//
// TODO(issue 43): stop a running execution within milliseconds of
// cancellation, a never-ending while loop included.
func (x *Executable) ExecuteContext(ctx context.Context, opts ExecuteOptions, args ...*Buffer) ([]*Buffer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return x.ExecuteWith(opts, args...)
}
