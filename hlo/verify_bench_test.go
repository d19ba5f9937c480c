package hlo_test

import (
	"fmt"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// wideTuple builds, in Go, an entry returning a tuple of n parameters.
func wideTuple(n int) *hlo.Module {
	m := hlo.NewModule("wide")
	c := &hlo.Computation{Name: "e", Parent: m}
	shapes := make([]hlo.Shape, n)
	ops := make([]*hlo.Instruction, n)
	for i := range n {
		shapes[i] = hlo.ScalarShape(hlo.F32)
		p := &hlo.Instruction{Name: fmt.Sprintf("p%d", i), Opcode: hlo.OpParameter, Shape: shapes[i], ParamNumber: int64(i)}
		c.AddInstruction(p)
		c.Params = append(c.Params, p)
		ops[i] = p
	}
	c.Root = c.AddInstruction(&hlo.Instruction{Name: "t", Opcode: hlo.OpTuple, Shape: hlo.TupleShape(shapes...), Operands: ops})
	m.AddComputation(c)
	m.Entry = c
	return m
}

// BenchmarkVerifyWideTuple: verification is linear in the operand count
// (a 40k-operand tuple took about 10 s when it was quadratic).
func BenchmarkVerifyWideTuple(b *testing.B) {
	for _, n := range []int{40000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := wideTuple(n)
			b.ResetTimer()
			for range b.N {
				if err := hlo.Verify(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
