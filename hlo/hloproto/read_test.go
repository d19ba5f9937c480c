package hloproto

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func f32(dims ...int64) *ShapeProto {
	s := &ShapeProto{ElementType: PrimitiveType_F32, Dimensions: dims, Layout: &LayoutProto{}}
	for i := range dims {
		s.IsDynamicDimension = append(s.IsDynamicDimension, false)
		s.Layout.MinorToMajor = append(s.Layout.MinorToMajor, int64(len(dims)-1-i))
	}
	return s
}

// xlaProto is a module as XLA writes it (no Axle extension): a compare and a
// get-tuple-element of index 0, whose proto fields are at their zero value.
func xlaProto() *HloModuleProto {
	pred := &ShapeProto{ElementType: PrimitiveType_PRED, Dimensions: []int64{2}, IsDynamicDimension: []bool{false}, Layout: &LayoutProto{MinorToMajor: []int64{0}}}
	tuple := &ShapeProto{ElementType: PrimitiveType_TUPLE, TupleShapes: []*ShapeProto{f32(2), f32(2)}}
	return &HloModuleProto{
		Name: "m", EntryComputationName: "main", EntryComputationId: 7,
		Computations: []*HloComputationProto{{
			Name: "main", Id: 7, RootId: 12,
			Instructions: []*HloInstructionProto{
				{Name: "p", Opcode: "parameter", Shape: tuple, Id: 10},
				{Name: "x", Opcode: "get-tuple-element", Shape: f32(2), Id: 11, OperandIds: []int64{10}},
				{Name: "lt", Opcode: "compare", Shape: pred, Id: 12, OperandIds: []int64{11, 11}, ComparisonDirection: "LT"},
			},
		}},
	}
}

// TestXLAProto reads a proto without Axle's extension; the expected text is
// what XLA prints for it (written by hand).
func TestXLAProto(t *testing.T) {
	m, err := ToModule(xlaProto())
	if err != nil {
		t.Fatal(err)
	}
	got := hlotext.Print(m, hlotext.Short)
	want := `HloModule m, entry_computation_layout={((f32[2]{0}, f32[2]{0}))->pred[2]{0}}

ENTRY main {
  p = (f32[2]{0}, f32[2]{0}) parameter(0)
  x = f32[2]{0} get-tuple-element(p), index=0
  ROOT lt = pred[2]{0} compare(x, x), direction=LT
}

`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestReadErrors: malformed protos are errors that say where, never panics.
func TestReadErrors(t *testing.T) {
	good, err := proto.Marshal(xlaProto())
	if err != nil {
		t.Fatal(err)
	}
	bad := func(edit func(p *HloModuleProto)) []byte {
		p := xlaProto()
		edit(p)
		b, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		// A length prefix promises more bytes than remain (the exact
		// offset: TestTruncatedOffset).
		{"truncated", good[:len(good)-5], "byte "},
		{"operand", bad(func(p *HloModuleProto) { p.Computations[0].Instructions[2].OperandIds[1] = 99 }),
			"instruction lt: operand_ids[1] = 99 names no instruction"},
		{"opcode", bad(func(p *HloModuleProto) { p.Computations[0].Instructions[1].Opcode = "frobnicate" }),
			`instruction x: opcode "frobnicate"`},
		{"entry", bad(func(p *HloModuleProto) { p.EntryComputationId, p.EntryComputationName = 3, "" }),
			"entry_computation_id 3"},
		{"root", bad(func(p *HloModuleProto) { p.Computations[0].RootId = 5 }), "computation main: root_id 5"},
		{"duplicate id", bad(func(p *HloModuleProto) { p.Computations[0].Instructions[1].Id = 10 }),
			"instruction x: id 10 is also instruction p's"},
		{"shape", bad(func(p *HloModuleProto) { p.Computations[0].Instructions[1].Shape.Dimensions = []int64{-3} }),
			"instruction x: shape"},
		{"self operand", bad(func(p *HloModuleProto) { p.Computations[0].Instructions[2].OperandIds[0] = 12 }),
			"instruction lt: operand_ids[0] = 12 names lt, which comes after it"},
		{"parameter gap", bad(func(p *HloModuleProto) { p.Computations[0].Instructions[0].ParameterNumber = 1 }),
			"computation main: has parameter 1 but no parameter_number 0"},
		{"called", bad(func(p *HloModuleProto) { p.Computations[0].Instructions[2].CalledComputationIds = []int64{4} }),
			"called_computation_ids[0] = 4 names no computation"},
	} {
		_, err := Read(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestTruncatedOffset: the offset reported for a cut-off file is that of
// the field cut off. The module is a name field (tag, length, "m": bytes
// 0-2) and then a computation (field 3) whose body is cut.
func TestTruncatedOffset(t *testing.T) {
	p := &HloModuleProto{Name: "m", Computations: []*HloComputationProto{{Name: "main"}}}
	b, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read(b[:len(b)-1])
	if err == nil || !strings.Contains(err.Error(), "byte 3: HloModuleProto.computations") {
		t.Errorf("got %v, want the error at byte 3, the computations field", err)
	}
}

// FuzzRead: no input makes Read panic.
func FuzzRead(f *testing.F) {
	good, _ := proto.Marshal(xlaProto())
	f.Add(good)
	if m, err := hlotext.Parse(addModule, hlotext.Options{}); err == nil {
		if b, err := Write(m); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(data)
		if err == nil {
			hlotext.Print(m, hlotext.Default)
		}
	})
}

// TestPermuteSliceSizesEmptyTuple: an in-place collective-permute whose input
// is an empty tuple (only a malformed proto says so) reads without a
// division by zero.
func TestPermuteSliceSizesEmptyTuple(t *testing.T) {
	got := permuteSliceSizes([]int64{4, 5}, hlo.TupleShape())
	if len(got) != 2 || got[0][0] != 4 || got[1][0] != 5 {
		t.Errorf("got %v, want [[4] [5]]", got)
	}
	// The common case, hand-worked: two rank-2 buffers.
	got = permuteSliceSizes([]int64{64, 32, 64, 32}, hlo.ArrayShape(hlo.F32, 128, 32))
	if len(got) != 2 || len(got[0]) != 2 || got[1][1] != 32 {
		t.Errorf("got %v, want [[64 32] [64 32]]", got)
	}
}

// TestReadWrapped: the HloProto XLA's dump writes (the module in field 1,
// a buffer assignment beside it), plain and gzipped, reads as the module.
func TestReadWrapped(t *testing.T) {
	m, err := hlotext.Parse(addModule, hlotext.Options{File: "add.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	mp, err := FromModule(m)
	if err != nil {
		t.Fatal(err)
	}
	data, err := proto.Marshal(&HloProto{HloModule: mp})
	if err != nil {
		t.Fatal(err)
	}
	// XLA's HloProto.buffer_assignment (field 3), holding one
	// LogicalBufferProto (field 1: id 1, size 8); Axle's schema leaves it out,
	// so it must be skipped as an unknown field.
	buffer := protowire.AppendTag(nil, 1, protowire.VarintType)
	buffer = protowire.AppendVarint(buffer, 1)
	buffer = protowire.AppendTag(buffer, 2, protowire.VarintType)
	buffer = protowire.AppendVarint(buffer, 8)
	assignment := protowire.AppendTag(nil, 1, protowire.BytesType)
	assignment = protowire.AppendBytes(assignment, buffer)
	data = protowire.AppendTag(data, 3, protowire.BytesType)
	data = protowire.AppendBytes(data, assignment)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(data)
	zw.Close()
	for name, b := range map[string][]byte{"HloProto": data, "gzipped": zipped.Bytes()} {
		got, err := Read(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if hlotext.Print(got, hlotext.Default) != hlotext.Print(m, hlotext.Default) {
			t.Errorf("%s: got\n%s", name, hlotext.Print(got, hlotext.Default))
		}
	}
	if _, err := Read([]byte{0x1f, 0x8b, 1, 2}); err == nil || !strings.HasPrefix(err.Error(), "gzip: ") {
		t.Errorf("a broken gzip file: %v", err)
	}
}

// TestSchedule: a scheduled module's proto holds XLA's schedule, the
// instruction ids of each non-fusion computation in order (ids numbered
// from 1 in module order: the fusion's two instructions are 1 and 2), and
// a proto with a schedule reads as scheduled without Axle's extension.
func TestSchedule(t *testing.T) {
	text := `HloModule s, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

f {
  a = f32[2]{0} parameter(0)
  ROOT n = f32[2]{0} negate(a)
}

ENTRY e {
  x = f32[2]{0} parameter(0)
  y = f32[2]{0} fusion(x), kind=kLoop, calls=f
  ROOT z = f32[2]{0} add(y, x)
}
`
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := FromModule(m)
	if err != nil {
		t.Fatal(err)
	}
	s := p.GetSchedule().GetSequences()
	if len(s) != 1 || len(s[2].GetInstructionIds()) != 3 || s[2].InstructionIds[0] != 3 || s[2].InstructionIds[2] != 5 {
		t.Errorf("schedule = %v, want computation 2: [3 4 5]", s)
	}
	if !p.Computations[0].IsFusionComputation || p.Computations[1].IsFusionComputation {
		t.Error("is_fusion_computation should mark f only")
	}
	b, _ := proto.Marshal(p)
	bare := &HloModuleProto{}
	if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, bare); err != nil {
		t.Fatal(err)
	}
	m2, err := ToModule(bare)
	if err != nil || !m2.IsScheduled {
		t.Errorf("read without the extension: scheduled %v, %v", m2 != nil && m2.IsScheduled, err)
	}
}
