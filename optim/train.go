package optim

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// LossFunc builds the loss of one batch: params are the model's
// parameters and batch the batch inputs (ops of b), key a u64[2] RNG key
// for dropout. It returns the scalar loss and the next key (key itself
// when it draws no random bits).
type LossFunc func(b *xb.Builder, params, batch []*xb.Op, key *xb.Op) (loss, nextKey *xb.Op)

// Trainer runs one compiled training step per call: loss, gradients and
// the optimizer's update in one module, whose parameters, optimizer state
// and RNG key live in buffers that each step donates and replaces.
type Trainer struct {
	exe   *axle.Executable
	state []*axle.Buffer // params, then optimizer state, then the key
	nP    int
	// donate lists the step's arguments it may write over: everything
	// but the batch.
	donate []int
	args   []*axle.Buffer
	err    error // set when a failed step consumed the state
}

// NewTrainer compiles the training step of loss under opt for parameters
// starting at params and batches of the given shapes, with the RNG key
// seeded by seed. An optional CompileOptions is passed to the compiler
// (Profile: true makes Executable().ProfileTable useful).
func NewTrainer(c *axle.Client, opt Optimizer, params []*hlo.Literal, batch []hlo.Shape, loss LossFunc, seed uint64, opts ...axle.CompileOptions) (*Trainer, error) {
	shapes := make([]hlo.Shape, len(params))
	for i, p := range params {
		shapes[i] = p.Shape()
	}
	init := opt.Init(shapes)
	m, err := buildStep(opt, shapes, init, batch, loss)
	if err != nil {
		return nil, err
	}
	var co axle.CompileOptions
	if len(opts) > 0 {
		co = opts[0]
	}
	exe, err := c.Compile(m, co)
	if err != nil {
		return nil, fmt.Errorf("optim: compiling the training step: %w", err)
	}
	key, err := hlo.LiteralFromSlice([]uint64{seed, 0}, 2)
	if err != nil {
		return nil, err
	}
	t := &Trainer{exe: exe, nP: len(params)}
	for _, l := range append(append(append([]*hlo.Literal(nil), params...), init...), key) {
		buf, err := c.BufferFromLiteral(l)
		if err != nil {
			return nil, err
		}
		t.state = append(t.state, buf)
	}
	for i := range t.state {
		t.donate = append(t.donate, i)
	}
	return t, nil
}

// buildStep builds the step module: parameters params..., state..., key,
// batch...; result (loss, new params..., new state..., next key).
func buildStep(opt Optimizer, shapes []hlo.Shape, init []*hlo.Literal, batch []hlo.Shape, loss LossFunc) (*hlo.Module, error) {
	b := xb.New("train_step")
	params := make([]*xb.Op, len(shapes))
	for i, s := range shapes {
		params[i] = b.Parameter(fmt.Sprintf("param%d", i), s)
	}
	state := make([]*xb.Op, len(init))
	for i, l := range init {
		state[i] = b.Parameter(fmt.Sprintf("state%d", i), l.Shape())
	}
	key := b.Param("key", hlo.U64, 2)
	inputs := make([]*xb.Op, len(batch))
	for i, s := range batch {
		inputs[i] = b.Parameter(fmt.Sprintf("batch%d", i), s)
	}
	l, next := loss(b, params, inputs, key)
	grads := xb.Grad(l, params...)
	newP, newS := opt.Update(params, grads, state)
	outs := append(append(append([]*xb.Op{l}, newP...), newS...), next)
	m, err := b.Build(b.Tuple(outs...))
	if err != nil {
		return nil, fmt.Errorf("optim: building the training step: %w", err)
	}
	return m, nil
}

// Step trains on one batch and returns its loss (before the update). A
// step that fails after the execution started has consumed the donated
// parameters and state: every later Step returns that error.
func (t *Trainer) Step(batch ...*axle.Buffer) (float32, error) {
	if t.err != nil {
		return 0, t.err
	}
	t.args = append(append(t.args[:0], t.state...), batch...)
	outs, err := t.exe.ExecuteWith(axle.ExecuteOptions{Donate: t.donate}, t.args...)
	if err != nil {
		// A rejected call (bad batch buffers) takes nothing.
		if slices.ContainsFunc(t.state, (*axle.Buffer).IsReleased) {
			t.err = fmt.Errorf("optim: the trainer's state was lost in a failed step: %w", err)
		}
		return 0, err
	}
	copy(t.state, outs[1:])
	loss, err := axle.ToSlice[float32](outs[0])
	outs[0].Release()
	if err != nil {
		return 0, err
	}
	return loss[0], nil
}

// Executable is the compiled training step.
func (t *Trainer) Executable() *axle.Executable { return t.exe }

// ParamBuffers returns the current parameter buffers (valid until the
// next Step, which donates them).
func (t *Trainer) ParamBuffers() []*axle.Buffer { return t.state[:t.nP] }

// Params returns copies of the current parameters.
func (t *Trainer) Params() ([]*hlo.Literal, error) {
	out := make([]*hlo.Literal, t.nP)
	for i, b := range t.ParamBuffers() {
		l, err := b.ToLiteral()
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}
