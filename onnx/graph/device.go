package graph

import (
	"fmt"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/ops"
)

// Device is a place nodes run: the compiled cpu device clusters and
// compiles its nodes; the evaluator device runs nodes one at a time.
type Device struct {
	Name     string // "cpu:0", "eval:0"
	Priority int    // higher is preferred (TensorFlow: CPU 50)
	// Compiled devices run clusters of nodes as compiled HLO modules;
	// the others run each node by itself.
	Compiled bool
	// Supports says why the device cannot run a node (nil if it can).
	Supports func(n *onnx.Node, op *ops.Op, t *typeInfo) error
	client   *axle.Client
}

func (d *Device) String() string { return d.Name }

// cpuSupports: a lowering over tensors of numeric types.
func cpuSupports(n *onnx.Node, op *ops.Op, t *typeInfo) error {
	if op.Lower == nil {
		return fmt.Errorf("%s has no HLO lowering (runs on concrete values only)", op.Key())
	}
	if op.Random {
		return fmt.Errorf("%s draws random numbers", op.Key())
	}
	for _, name := range n.Inputs {
		if err := t.tensorOnly(name); err != nil {
			return err
		}
	}
	for _, name := range n.Outputs {
		if err := t.tensorOnly(name); err != nil {
			return err
		}
	}
	return nil
}

// evalSupports: anything with a lowering or a host kernel.
func evalSupports(n *onnx.Node, op *ops.Op, t *typeInfo) error { return nil }
