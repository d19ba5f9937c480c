// Package onnxpb holds the Go types of ONNX's protobuf schema (ModelProto,
// TensorProto, SequenceProto, ...), generated with protoc-gen-go from the
// schema files in ../shared/corpus/onnx/proto (onnx-ml.proto, a superset of
// onnx.proto, and onnx-data.proto). Nothing here is written by hand but
// this file; regenerate with go generate after the schema changes.
package onnxpb

//go:generate sh -c "protoc -I ../../../shared/corpus/onnx/proto --go_out=. --go_opt=paths=source_relative --go_opt=Monnx/onnx-ml.proto=github.com/axle-ml/axle/onnx/onnxpb --go_opt=Monnx/onnx-data.proto=github.com/axle-ml/axle/onnx/onnxpb onnx/onnx-ml.proto onnx/onnx-data.proto && mv onnx/*.pb.go . && rmdir onnx"
