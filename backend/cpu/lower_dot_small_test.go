package cpu

import (
	"fmt"
	"testing"
)

// Small-M products (gemvDot), alone and batched, with an epilogue: the
// results match the evaluator's and the unfused module's (checkEpilogue),
// on one to three threads (batches of two and three products large
// enough to split across them: a bidirectional LSTM step's).
func TestGemvDotEpilogue(t *testing.T) {
	const text = `HloModule small
ENTRY e {
  h = f32[%[4]d,%[1]d,%[3]d] parameter(0)
  r = f32[%[4]d,%[3]d,%[2]d] parameter(1)
  x = f32[%[4]d,%[1]d,%[2]d] parameter(2)
  d = f32[%[4]d,%[1]d,%[2]d] dot(h, r), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT y = f32[%[4]d,%[1]d,%[2]d] add(d, x)
}`
	for _, size := range [][4]int{{1, 288, 96, 1}, {2, 512, 128, 2}, {2, 512, 128, 3}, {3, 40, 17, 2}, {8, 70, 33, 1}, {5, 16, 9, 3}} {
		checkEpilogue(t, fmt.Sprintf(text, size[0], size[1], size[2], size[3]), map[string]int{"gemm+epilogue": 1})
	}
}

// The plain dot's small-M path, with B row-major and (declined) read
// through its transpose, against the evaluator.
func TestGemvDot(t *testing.T) {
	for _, text := range []string{
		`HloModule m
ENTRY e {
  h = f32[2,2,96] parameter(0)
  r = f32[2,96,288] parameter(1)
  ROOT d = f32[2,2,288] dot(h, r), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}`,
		`HloModule m
ENTRY e {
  h = f32[3,2,128] parameter(0)
  r = f32[3,128,512] parameter(1)
  ROOT d = f32[3,2,512] dot(h, r), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}`,
		`HloModule m
ENTRY e {
  h = f32[1,96] parameter(0)
  r = f32[288,96] parameter(1)
  ROOT d = f32[1,288] dot(h, r), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}`,
		`HloModule m
ENTRY e {
  h = f32[4,130] parameter(0)
  r = f32[130,77] parameter(1)
  ROOT d = f32[4,77] dot(h, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`,
	} {
		checkEpilogue(t, text, nil)
	}
}
