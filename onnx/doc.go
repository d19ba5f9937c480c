// Package onnx reads ONNX models: ModelProto files (with external data),
// their graphs, nodes, attributes and initializers, and the values that
// flow along their edges (tensors, sequences, optionals).
//
// It decodes; it does not run. Lowering ONNX ops to HLO is package
// onnx/ops; running a graph (clusters compiled per input-shape signature,
// the rest op by op, devices with priorities and soft placement) is
// package onnx/graph; the backend-test folder runner is onnx/onnxtest.
//
// Every error names what it is about: the file, the node (by name and op)
// or the value. Nothing here panics on malformed input.
package onnx
