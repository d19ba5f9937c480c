package xb_test

import (
	"fmt"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Build a 2-layer MLP, relu(x·w1 + b1)·w2 + b2, compile it and run it on
// two examples.
func Example() {
	b := xb.New("mlp")
	x := b.Param("x", hlo.F32, 2, 2)
	w1 := xb.Const(b, []float32{1, 2, 0, 0, 1, -1}, 2, 3)
	b1 := xb.Const(b, []float32{0, 0, 1}, 3)
	w2 := xb.Const(b, []float32{1, 1, 2}, 3, 1)
	b2 := xb.Const(b, []float32{0.5}, 1)
	y := xb.Linear(xb.ReLU(xb.Linear(x, w1, b1)), w2, b2)
	m, err := b.Build(y)
	if err != nil {
		fmt.Println(err)
		return
	}

	c, _ := axle.NewClient(axle.ClientOptions{})
	exe, err := c.Compile(m, axle.CompileOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Example 1: [1,-2]·w1 + b1 = [1,0,2]+[0,0,1] = [1,0,3]; relu keeps it;
	// ·w2 = 1+0+6 = 7, + 0.5 = 7.5.
	// Example 2: [0,1]·w1 + b1 = [0,1,-1]+[0,0,1] = [0,1,0]; ·w2 = 1, + 0.5 = 1.5.
	in, _ := axle.BufferFromSlice(c, []float32{1, -2, 0, 1}, 2, 2)
	outs, err := exe.Execute(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := axle.ToSlice[float32](outs[0])
	fmt.Println(outs[0].Shape().HumanString(), out)
	// Output: f32[2,1] [7.5 1.5]
}

// Shape errors name the line of the model code that caused them, and
// surface at Build.
func Example_error() {
	b := xb.New("bad")
	x := b.Param("x", hlo.F32, 100, 10)
	bias := b.Param("bias", hlo.F32, 10)
	y := xb.Add(x, bias) // should have been xb.BroadcastTo(bias, 100, 10)
	_, err := b.Build(xb.ReLU(y))
	fmt.Println(err)
	// Output: example_test.go:53: add: shapes f32[100,10] and f32[10] differ
}
