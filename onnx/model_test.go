package onnx_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxbuild"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

func relu(t *testing.T) []byte {
	t.Helper()
	g := onnxbuild.New("r", 17)
	g.Input("x", onnxbuild.TensorType(onnx.Float, 2))
	g.Node("Relu", "r", []string{"x"}, []string{"y"})
	g.Output("y", onnxbuild.TensorType(onnx.Float, 2))
	b, err := g.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTruncatedModelIsAnError(t *testing.T) {
	b := relu(t)
	for _, n := range []int{1, len(b) / 2, len(b) - 1} {
		if _, err := onnx.LoadBytes(b[:n], ""); err == nil {
			t.Errorf("%d of %d bytes: no error", n, len(b))
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.onnx")
	os.WriteFile(path, b[:len(b)/2], 0o644)
	if _, err := onnx.Load(path); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("error %v does not name the file", err)
	}
}

// externalModel has one initializer w of 3 floats kept in weights.bin at
// offset 4 (ONNX's external data: location, offset, length).
func externalModel(t *testing.T, dir, location string) string {
	t.Helper()
	g := onnxbuild.New("ext", 17)
	g.Input("x", onnxbuild.TensorType(onnx.Float, 3))
	g.G.Initializer = append(g.G.Initializer, &onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{3},
		DataType: proto.Int32(int32(onnx.Float)), DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*onnxpb.StringStringEntryProto{
			{Key: proto.String("location"), Value: proto.String(location)},
			{Key: proto.String("offset"), Value: proto.String("4")},
			{Key: proto.String("length"), Value: proto.String("12")}}})
	g.Node("Add", "a", []string{"x", "w"}, []string{"y"})
	g.Output("y", onnxbuild.TensorType(onnx.Float, 3))
	b, err := g.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	raw := make([]byte, 16)
	for i, v := range []float32{1.5, -2, 4} {
		binary.LittleEndian.PutUint32(raw[4+4*i:], math.Float32bits(v))
	}
	os.WriteFile(filepath.Join(dir, "weights.bin"), raw, 0o644)
	m, err := onnx.Load(externalModel(t, dir, "weights.bin"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := hlo.LiteralToSlice[float32](m.Graph.Initializers["w"].Lit)
	if len(got) != 3 || got[0] != 1.5 || got[1] != -2 || got[2] != 4 {
		t.Errorf("w = %v, want [1.5 -2 4]", got)
	}

	missing := t.TempDir()
	_, err = onnx.Load(externalModel(t, missing, "gone.bin"))
	if err == nil || !strings.Contains(err.Error(), `initializer: tensor "w": external data`) || !strings.Contains(err.Error(), "gone.bin") {
		t.Errorf("missing external file: %v", err)
	}
	_, err = onnx.Load(externalModel(t, t.TempDir(), "../../etc/passwd"))
	if err == nil || !strings.Contains(err.Error(), "leaves the model's folder") {
		t.Errorf("escaping location: %v", err)
	}
	short := t.TempDir()
	os.WriteFile(filepath.Join(short, "weights.bin"), raw[:8], 0o644)
	_, err = onnx.Load(externalModel(t, short, "weights.bin"))
	if err == nil || !strings.Contains(err.Error(), "past its end") {
		t.Errorf("short external file: %v", err)
	}
}

func TestRawDataSizeMismatch(t *testing.T) {
	tp := &onnxpb.TensorProto{Name: proto.String("t"), Dims: []int64{2, 2}, DataType: proto.Int32(int32(onnx.Float)), RawData: make([]byte, 12)}
	if _, err := onnx.DecodeTensor(tp, ""); err == nil || !strings.Contains(err.Error(), "raw_data holds 12 bytes, 4 float elements need 16") {
		t.Errorf("got %v", err)
	}
	huge := &onnxpb.TensorProto{Dims: []int64{1 << 40, 1 << 40}, DataType: proto.Int32(int32(onnx.Float))}
	if _, err := onnx.DecodeTensor(huge, ""); err == nil {
		t.Error("a tensor of 2^80 elements decoded")
	}
}

// TestInt4Packing: two 4-bit elements a byte, the first in the low nibble,
// sign-extended for int4 (ONNX's TensorProto rule).
func TestInt4Packing(t *testing.T) {
	tp := &onnxpb.TensorProto{Dims: []int64{3}, DataType: proto.Int32(int32(onnx.Int4)), RawData: []byte{0x8F, 0x07}}
	tt, err := onnx.DecodeTensor(tp, "")
	if err != nil {
		t.Fatal(err)
	}
	d := tt.Lit.Data().([]int8)
	if d[0] != -1 || d[1] != -8 || d[2] != 7 {
		t.Errorf("int4 = %v, want [-1 -8 7]", d)
	}
}
