package hloproto

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

const addModule = `HloModule add, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}

ENTRY main {
  x = f32[2]{0} parameter(0)
  y = f32[2]{0} parameter(1)
  ROOT sum = f32[2]{0} add(x, y)
}
`

// TestProtocDecodes checks Axle's bytes against an independent decoder:
// protoc --decode with XLA's own .proto files (from AXLE_XLA_PROTO_DIR)
// must show the fields XLA reads (opcode names, shapes, ids, operand ids).
func TestProtocDecodes(t *testing.T) {
	protoc, xlaDir := xlaProtoc(t)
	m, err := hlotext.Parse(addModule, hlotext.Options{File: "add.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := Write(m)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(protoc, "-I", xlaDir, "--decode=xla.HloModuleProto", "xla/service/hlo.proto")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	text := string(out)
	// Expected from XLA's schema: F32 is PrimitiveType 11 (printed by
	// name), parameters 1 and 2 are ids 1 and 2, the add's operands.
	for _, want := range []string{
		`name: "add"`,
		`entry_computation_name: "main"`,
		`opcode: "parameter"`,
		`opcode: "add"`,
		`element_type: F32`,
		"dimensions: 2",
		"minor_to_major: 0",
		"parameter_number: 1",
		"operand_ids: 1\n    operand_ids: 2",
		"root_id: 3",
		"entry_computation_id: 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("protoc's decoding lacks %q:\n%s", want, text)
		}
	}
}

// TestProtocEncodes reads a proto encoded by protoc from a text proto
// written by hand as XLA writes modules (testdata/while_xla.textproto);
// the expected HLO text is what XLA prints for it, worked out by hand.
func TestProtocEncodes(t *testing.T) {
	protoc, xlaDir := xlaProtoc(t)
	src, err := os.ReadFile("testdata/while_xla.textproto")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(protoc, "-I", xlaDir, "--encode=xla.HloModuleProto", "xla/service/hlo.proto")
	cmd.Stdin = bytes.NewReader(src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		t.Fatalf("protoc: %v\n%s", err, stderr.String())
	}
	m, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	want := `HloModule loop, entry_computation_layout={()->s32[]}

%cond (p.1: s32[]) -> pred[] {
  %p.1 = s32[] parameter(0)
  %ten = s32[] constant(10)
  ROOT %lt = pred[] compare(s32[] %p.1, s32[] %ten), direction=LT
}

%body (p.2: s32[]) -> s32[] {
  %p.2 = s32[] parameter(0)
  %one = s32[] constant(1)
  ROOT %inc = s32[] add(s32[] %p.2, s32[] %one), metadata={op_type="add" op_name="jit(f)/add" source_file="f.py" source_line=3}
}

ENTRY %main () -> s32[] {
  %zero = s32[] constant(0)
  ROOT %w = s32[] while(s32[] %zero), condition=%cond, body=%body, frontend_attributes={a="x\"y",b="2"}
}

`
	if got := hlotext.Print(m, hlotext.Default); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if err := hlo.Verify(m); err != nil {
		t.Errorf("verify: %v", err)
	}
}

const whileDotModule = `HloModule w, entry_computation_layout={(f32[2,3]{1,0}, f32[3,4]{1,0})->f32[2,4]{1,0}}

c {
  p.1 = f32[2,4]{1,0} parameter(0)
  ROOT t = pred[] constant(false)
}

b {
  ROOT p.2 = f32[2,4]{1,0} parameter(0)
}

ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[3,4]{1,0} parameter(1)
  d = f32[2,4]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT w = f32[2,4]{1,0} while(d), condition=c, body=b
}
`

// TestProtocDecodesWhileDot: a while's called computations go body first
// (XLA's kBodyComputationIndex is 0): computations are numbered 1 (c), 2
// (b), 3 (e) in module order; the dot's dimension numbers are XLA's
// DotDimensionNumbers.
func TestProtocDecodesWhileDot(t *testing.T) {
	protoc, xlaDir := xlaProtoc(t)
	m, err := hlotext.Parse(whileDotModule, hlotext.Options{File: "w.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := Write(m)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(protoc, "-I", xlaDir, "--decode=xla.HloModuleProto", "xla/service/hlo.proto")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("protoc: %v", err)
	}
	for _, want := range []string{
		"called_computation_ids: 2\n    called_computation_ids: 1\n",
		"dot_dimension_numbers {\n      lhs_contracting_dimensions: 1\n      rhs_contracting_dimensions: 0\n    }",
		`opcode: "while"`,
		"preds: false",
		"entry_computation_id: 3",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("protoc's decoding lacks %q:\n%s", want, out)
		}
	}
}
