// Package ops lowers ONNX operators to HLO, one registered lowering per op
// (and per opset version where the op changed), so that every ONNX op runs
// through the same passes, fusion and kernels as any other module. Ops
// that HLO cannot express (strings, outputs whose shape depends on data,
// sequences, control flow run on concrete values) register a host kernel
// instead or as well: Go code on concrete values, which the graph
// executor runs op by op.
//
// A lowering sees its inputs as xb ops with static shapes; inputs whose
// values it needs at compile time (a Reshape's shape, a Slice's starts)
// are declared in its registration's ConstInputs, and the executor makes
// them known: folded from constants and shapes, or fed by value as part
// of the compile cache key.
//
// Adding an op: see registry.go's Op, then put its lowering in the file of
// its family (elementwise.go, reduce.go, ...), and register it in that
// file's init.
package ops
