package eval_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Hand-worked checks of the data-movement ops. Each test quotes the
// statement of openxla/xla docs/operation_semantics.md it pins; expected
// values are worked out by hand from that statement.

func mvTry(t *testing.T, text string, args ...*hlo.Literal) (*hlo.Literal, error) {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eval.Run(m, args...)
}

func mvWant[T hlo.Native](t *testing.T, got *hlo.Literal, dims []int64, want ...T) {
	t.Helper()
	if !slices.Equal(got.Shape().Dims, dims) {
		t.Fatalf("got dimensions %v, want %v", got.Shape().Dims, dims)
	}
	g, ok := got.Data().([]T)
	if !ok {
		t.Fatalf("got storage %T, want %T", got.Data(), want)
	}
	if !slices.Equal(g, want) {
		t.Fatalf("got %v, want %v", g, want)
	}
}

// "The amount of edge padding can be negative -- the absolute value of
// negative padding indicates the number of elements to remove from the
// specified dimension." and "Interior padding occurs logically before edge
// padding, so in the case of negative edge padding, elements are removed
// from the interior-padded operand."
func TestPadNegativeEdgesAfterInterior(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  v = s32[] constant(9)
  ROOT r = s32[7] pad(p, v), padding=-2_-1_2
}`
	// Interior 2: 1 9 9 2 9 9 3 9 9 4; drop 2 at the low end, 1 at the high end.
	got := laRunHLO(t, text, laLit(t, []int32{1, 2, 3, 4}))
	mvWant(t, got, []int64{7}, int32(9), 2, 9, 9, 3, 9, 9)
}

// Same statements, per dimension: dimension 0 gains a padding row,
// dimension 1 is interior-padded to a _ b, loses its first element and
// gains one at the high end.
func TestPadTwoDimensionsMixedSigns(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = f32[2,2] parameter(0)
  v = f32[] constant(0)
  ROOT r = f32[3,3] pad(p, v), padding=1_0_0x-1_1_1
}`
	got := laRunHLO(t, text, laLit(t, []float32{1, 2, 3, 4}, 2, 2))
	mvWant(t, got, []int64{3, 3}, float32(0), 0, 0, 0, 2, 0, 0, 4, 0)
}

// "`padding_value` ... scalar of type `T` to fill in the added padding":
// an empty operand yields only padding.
func TestPadEmptyOperand(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = s8[0] parameter(0)
  v = s8[] constant(-3)
  ROOT r = s8[3] pad(p, v), padding=1_2_5
}`
	got := laRunHLO(t, text, laLit(t, []int8{}, 0))
	mvWant(t, got, []int64{3}, int8(-3), -3, -3)
}

// DynamicSlice: "start_indices[i] = clamp(start_indices[i], 0,
// operand.dimension_size[i] - size_indices[i])" — "This ensures that the
// extracted slice is always in-bounds with respect to the operand array."
func TestDynamicSliceClampsStarts(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = f32[4,3] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT r = f32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}
}`
	b := laLit(t, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 4, 3)
	// The doc's own example: s = {2, 1} gives {{7, 8}, {10, 11}}.
	got := laRunHLO(t, text, b, hlo.ScalarLiteral[int32](2), hlo.ScalarLiteral[int32](1))
	mvWant(t, got, []int64{2, 2}, float32(7), 8, 10, 11)
	// {5, -1} clamps to {4-2, 0} = {2, 0}: rows 2..3, columns 0..1.
	got = laRunHLO(t, text, b, hlo.ScalarLiteral[int32](5), hlo.ScalarLiteral[int32](-1))
	mvWant(t, got, []int64{2, 2}, float32(6), 7, 9, 10)
}

// Same clamp; an unsigned index beyond every dimension clamps to the top.
func TestDynamicSliceClampsUnsignedStart(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = s32[5] parameter(0)
  i = u32[] parameter(1)
  ROOT r = s32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}
}`
	got := laRunHLO(t, text, laLit(t, []int32{0, 1, 2, 3, 4}), hlo.ScalarLiteral[uint32](4294967295))
	mvWant(t, got, []int64{2}, int32(3), 4)
}

// DynamicUpdateSlice: "start_indices[i] = clamp(start_indices[i], 0,
// operand.dimension_size[i] - update.dimension_size[i])".
func TestDynamicUpdateSliceClampsStarts(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = f32[4,3] parameter(0)
  u = f32[3,2] parameter(1)
  i = s64[] parameter(2)
  j = s64[] parameter(3)
  ROOT r = f32[4,3] dynamic-update-slice(p, u, i, j)
}`
	b := laLit(t, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 4, 3)
	u := laLit(t, []float32{12, 13, 14, 15, 16, 17}, 3, 2)
	// The doc's example, s = {1, 1}.
	got := laRunHLO(t, text, b, u, hlo.ScalarLiteral[int64](1), hlo.ScalarLiteral[int64](1))
	mvWant(t, got, []int64{4, 3}, float32(0), 1, 2, 3, 12, 13, 6, 14, 15, 9, 16, 17)
	// {-3, 5} clamps to {0, 3-2} = {0, 1}.
	got = laRunHLO(t, text, b, u, hlo.ScalarLiteral[int64](-3), hlo.ScalarLiteral[int64](5))
	mvWant(t, got, []int64{4, 3}, float32(0), 12, 13, 3, 14, 15, 6, 16, 17, 9, 10, 11)
}

// Slice: "The slice picks every `strides[d]` element in dimension `d`",
// from start_indices up to limit_indices (exclusive).
func TestSliceStrided(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = s32[4,3] parameter(0)
  ROOT r = s32[2,1] slice(p), slice={[0:4:3], [1:3:2]}
}`
	// Rows 0 and 3, column 1.
	got := laRunHLO(t, text, laLit(t, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 4, 3))
	mvWant(t, got, []int64{2, 1}, int32(1), 10)
}

// Transpose: "input_dimensions[permutation[i]] = output_dimensions[i]", so
// with permutation {2,0,1} result[a,b,c] = operand[b,c,a].
func TestTransposePermutationDirection(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = s32[2,3,4] parameter(0)
  ROOT r = s32[4,2,3] transpose(p), dimensions={2,0,1}
}`
	in := make([]int32, 24)
	for i := range in {
		in[i] = int32(i) // operand[i,j,k] = 12i + 4j + k
	}
	got := laRunHLO(t, text, laLit(t, in, 2, 3, 4))
	mvWant(t, got, []int64{4, 2, 3}, int32(0), 4, 8, 12, 16, 20,
		1, 5, 9, 13, 17, 21,
		2, 6, 10, 14, 18, 22,
		3, 7, 11, 15, 19, 23)
}

// BroadcastInDim: "the i'th dimension of the operand is mapped to the
// broadcast_dimension[i]'th dimension of the output shape". With
// dimensions={2,0}, result[a,b,c] = operand[c,a].
func TestBroadcastDimensionMapping(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  ROOT r = s32[3,4,2] broadcast(p), dimensions={2,0}
}`
	got := laRunHLO(t, text, laLit(t, []int32{1, 2, 3, 4, 5, 6}, 2, 3))
	mvWant(t, got, []int64{3, 4, 2}, int32(1), 4, 1, 4, 1, 4, 1, 4,
		2, 5, 2, 5, 2, 5, 2, 5,
		3, 6, 3, 6, 3, 6, 3, 6)
}

// Same statement for a vector mapped to the minor dimension.
func TestBroadcastVectorToColumns(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = u8[2] parameter(0)
  ROOT r = u8[3,2] broadcast(p), dimensions={1}
}`
	got := laRunHLO(t, text, laLit(t, []uint8{10, 20}))
	mvWant(t, got, []int64{3, 2}, uint8(10), 20, 10, 20, 10, 20)
}

// Rev: "if a dimension of size N is one of the reversing dimensions, its
// index i is transformed into N - 1 - i".
func TestReverseSelectedDimensions(t *testing.T) {
	text := `HloModule m
ENTRY e {
  p = pred[2,3] parameter(0)
  ROOT r = pred[2,3] reverse(p), dimensions={1}
}`
	got := laRunHLO(t, text, laLit(t, []bool{true, false, false, false, true, true}, 2, 3))
	mvWant(t, got, []int64{2, 3}, false, false, true, true, true, false)

	text = `HloModule m
ENTRY e {
  p = c64[2,2] parameter(0)
  ROOT r = c64[2,2] reverse(p), dimensions={0,1}
}`
	got = laRunHLO(t, text, laLit(t, []complex64{1, 2i, 3, 4i}, 2, 2))
	mvWant(t, got, []int64{2, 2}, complex64(4i), 3, 2i, 1)
}

// Concatenate: the result "contains the arguments in the order that they
// were specified", along `dimension`.
func TestConcatenateMinorDimension(t *testing.T) {
	text := `HloModule m
ENTRY e {
  a = s16[2,1] parameter(0)
  b = s16[2,2] parameter(1)
  c = s16[2,0] parameter(2)
  ROOT r = s16[2,3] concatenate(a, c, b), dimensions={1}
}`
	got := laRunHLO(t, text, laLit(t, []int16{1, 2}, 2, 1), laLit(t, []int16{3, 4, 5, 6}, 2, 2), laLit(t, []int16{}, 2, 0))
	mvWant(t, got, []int64{2, 3}, int16(1), 3, 4, 2, 5, 6)
}

// Iota: "For floating-point types, the produced array is equivalent to
// `ConvertElementType(Iota(...))`"; bf16 0, 1, 2 are 0x0000, 0x3F80, 0x4000
// and f16 ones are 0x0000, 0x3C00, 0x4000.
func TestIotaNarrowFloats(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  ROOT r = bf16[2,3] iota(), iota_dimension=1
}`)
	mvWant(t, got, []int64{2, 3}, uint16(0), 0x3F80, 0x4000, 0, 0x3F80, 0x4000)
	got = laRunHLO(t, `HloModule m
ENTRY e {
  ROOT r = f16[3,2] iota(), iota_dimension=0
}`)
	mvWant(t, got, []int64{3, 2}, uint16(0), 0, 0x3C00, 0x3C00, 0x4000, 0x4000)
}

// Reshape: "As a special case, reshape can transform a single-element
// array to a scalar and vice versa."
func TestReshapeScalarRoundTrip(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  p = f64[1,1] parameter(0)
  s = f64[] reshape(p)
  ROOT r = f64[1,1,1] reshape(s)
}`, laLit(t, []float64{5}, 1, 1))
	mvWant(t, got, []int64{1, 1, 1}, float64(5))
}

// A bitcast reinterprets the buffer, which is in layout order: f32[2,3]{1,0}
// read as f32[3,2]{0,1} (dimension 0 minor) is the transpose.
func TestBitcastFollowsLayouts(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT r = f32[3,2]{0,1} bitcast(p)
}`, laLit(t, []float32{1, 2, 3, 4, 5, 6}, 2, 3))
	mvWant(t, got, []int64{3, 2}, float32(1), 4, 2, 5, 3, 6)
}

func TestBitcastChangingTypeIsUnimplemented(t *testing.T) {
	_, err := mvTry(t, `HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = s32[2] bitcast(p)
}`, laLit(t, []float32{1, 2}))
	if !errors.Is(err, eval.ErrUnimplemented) {
		t.Fatalf("got %v, want ErrUnimplemented", err)
	}
}

// set-dimension-size records a live size that get-dimension-size reads back.
func TestSetThenGetDimensionSize(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  n = s32[] constant(2)
  d = s32[<=4] set-dimension-size(p, n), dimensions={0}
  ROOT r = s32[] get-dimension-size(d), dimensions={0}
}`, laLit(t, []int32{1, 2, 3, 4}))
	mvWant(t, got, []int64{}, int32(2))
}

// copy-start/copy-done complete the copy at once.
func TestCopyStartDone(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  p = s64[2] parameter(0)
  s = (s64[2], s64[2], u32[]) copy-start(p)
  ROOT r = s64[2] copy-done(s)
}`, laLit(t, []int64{7, -7}))
	mvWant(t, got, []int64{2}, int64(7), -7)
}
