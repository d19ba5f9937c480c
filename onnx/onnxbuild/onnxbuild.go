// Package onnxbuild writes small ONNX models from Go, for tests and
// examples: a graph of nodes over typed inputs, serialized as a
// ModelProto.
package onnxbuild

import (
	"google.golang.org/protobuf/proto"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// Graph is a model under construction.
type Graph struct {
	G      *onnxpb.GraphProto
	Opsets map[string]int64
}

// New starts a model importing ai.onnx at opset.
func New(name string, opset int64) *Graph {
	return &Graph{G: &onnxpb.GraphProto{Name: proto.String(name)}, Opsets: map[string]int64{"": opset}}
}

// TensorType is a tensor type of elem with dims (-1: a symbolic dim).
func TensorType(elem onnx.ElemType, dims ...int64) *onnxpb.TypeProto {
	sh := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		if d < 0 {
			sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}})
			continue
		}
		sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
		ElemType: proto.Int32(int32(elem)), Shape: sh}}}
}

// Input declares a graph input.
func (g *Graph) Input(name string, t *onnxpb.TypeProto) {
	g.G.Input = append(g.G.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: t})
}

// Output declares a graph output.
func (g *Graph) Output(name string, t *onnxpb.TypeProto) {
	g.G.Output = append(g.G.Output, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: t})
}

// Floats adds a float initializer.
func (g *Graph) Floats(name string, vals []float32, dims ...int64) {
	g.G.Initializer = append(g.G.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims,
		DataType: proto.Int32(int32(onnx.Float)), FloatData: vals})
}

// Raw adds an initializer of any element type from its little-endian
// bytes (an int8 or uint8 tensor: one byte an element).
func (g *Graph) Raw(name string, elem onnx.ElemType, raw []byte, dims ...int64) {
	g.G.Initializer = append(g.G.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims,
		DataType: proto.Int32(int32(elem)), RawData: raw})
}

// Ints adds an int64 initializer.
func (g *Graph) Ints(name string, vals []int64, dims ...int64) {
	g.G.Initializer = append(g.G.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims,
		DataType: proto.Int32(int32(onnx.Int64)), Int64Data: vals})
}

// Node adds a node; attrs are built with IntAttr, FloatAttr, ...
func (g *Graph) Node(op, name string, inputs, outputs []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	n := &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: inputs, Output: outputs, Attribute: attrs}
	g.G.Node = append(g.G.Node, n)
	return n
}

// IntAttr is an INT attribute.
func IntAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// IntsAttr is an INTS attribute.
func IntsAttr(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

// FloatAttr is a FLOAT attribute.
func FloatAttr(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

// Bytes serializes the model.
func (g *Graph) Bytes() ([]byte, error) {
	m := &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g.G, ProducerName: proto.String("axle onnxbuild")}
	for dom, v := range g.Opsets {
		m.OpsetImport = append(m.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(dom), Version: proto.Int64(v)})
	}
	return proto.Marshal(m)
}

// Model decodes the model as onnx.Load would.
func (g *Graph) Model() (*onnx.Model, error) {
	b, err := g.Bytes()
	if err != nil {
		return nil, err
	}
	return onnx.LoadBytes(b, "")
}
