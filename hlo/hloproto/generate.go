package hloproto

// proto/axle/xla_wire.proto is Axle's own schema for the part of XLA's HloModuleProto wire format
// that Axle uses, in package xla; it is wire-compatible with xla/service/hlo.proto and
// xla/xla_data.proto of openxla/xla at commit 2c731115ef3bbd9457cfbc46cd5fba5a35ee74bb, which are
// not in this repository. proto/axle/axle.proto holds Axle's additions (the Axle* messages). To
// check the schema against XLA's, put those two files (and xla/service/metrics.proto, which
// hlo.proto imports) under a directory as xla/service/hlo.proto etc. and run
//
//	AXLE_XLA_PROTO_DIR=dir go test ./hlo/hloproto -run 'TestSchemaMatchesXLA|TestProtoc'
//
// Regenerating needs protoc (Debian's protobuf-compiler, 3.21.12 here) and protoc-gen-go at the
// go.mod's google.golang.org/protobuf version:
// go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12

//go:generate protoc -I proto --go_out=. --go_opt=module=github.com/axle-ml/axle/hlo/hloproto --go_opt=Maxle/xla_wire.proto=github.com/axle-ml/axle/hlo/hloproto;hloproto --go_opt=Maxle/axle.proto=github.com/axle-ml/axle/hlo/hloproto;hloproto axle/xla_wire.proto axle/axle.proto
