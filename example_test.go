package axle_test

import (
	"fmt"

	"github.com/axle-ml/axle"
)

const addText = `HloModule add
ENTRY main {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT sum = f32[3] add(x, y)
}
`

// Compile HLO text, put two vectors on the device, add them and read the
// sum back.
func Example() {
	c, err := axle.NewClient(axle.ClientOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := c.CompileText(addText, axle.CompileOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, _ := axle.BufferFromSlice(c, []float32{1, 2, 3}, 3)
	b, _ := axle.BufferFromSlice(c, []float32{10, 20, 30}, 3)
	outs, err := x.Execute(a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, _ := axle.ToSlice[float32](outs[0])
	fmt.Println(outs[0].Shape().HumanString(), sum)
	outs[0].Release()
	// Output: f32[3] [11 22 33]
}

// Donating an argument lets the execution reuse its storage; releasing an
// output gives its storage back to the executable for the next execution.
// Either way the Buffer is unusable afterwards.
func ExampleExecutable_ExecuteWith() {
	c, _ := axle.NewClient(axle.ClientOptions{})
	x, _ := c.CompileText(addText, axle.CompileOptions{})
	a, _ := axle.BufferFromSlice(c, []float32{1, 2, 3})
	b, _ := axle.BufferFromSlice(c, []float32{4, 5, 6})
	outs, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, _ := axle.ToSlice[float32](outs[0])
	fmt.Println(sum)
	_, err = axle.ToSlice[float32](a)
	fmt.Println(err)
	_, err = x.Execute(a, b)
	fmt.Println(err)
	outs[0].Release()
	_, err = outs[0].ToLiteral()
	fmt.Println(err)
	// Output:
	// [5 7 9]
	// axle: buffer was donated to an execution
	// axle: argument 0 (parameter x): buffer was donated to an execution
	// axle: buffer was released
}

// Compiling a module again, even from a new parse of the same text, is
// answered by the client's compile cache.
func ExampleClient_CacheStats() {
	c, _ := axle.NewClient(axle.ClientOptions{})
	x1, _ := c.CompileText(addText, axle.CompileOptions{})
	x2, _ := c.CompileText(addText, axle.CompileOptions{})
	fmt.Println(x1 == x2)
	x3, _ := c.CompileText(addText, axle.CompileOptions{NoOptimize: true})
	fmt.Println(x3 == x1)
	s := c.CacheStats()
	fmt.Println(s.Hits, "hit,", s.Misses, "misses,", s.Entries, "entries")
	// Output:
	// true
	// false
	// 1 hit, 2 misses, 2 entries
}
