package hloproto

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// xlaProtoc returns protoc's path and the directory holding XLA's own .proto
// files (xla/service/hlo.proto, xla/service/metrics.proto, xla/xla_data.proto
// of openxla/xla at the commit generate.go names), which are not in the
// repository; it skips the test when either is missing.
func xlaProtoc(t *testing.T) (protoc, dir string) {
	t.Helper()
	dir = os.Getenv("AXLE_XLA_PROTO_DIR")
	if dir == "" {
		t.Skip("AXLE_XLA_PROTO_DIR unset: set it to a directory holding XLA's xla/service/hlo.proto, " +
			"xla/service/metrics.proto and xla/xla_data.proto to check against XLA's schema")
	}
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (Debian: protobuf-compiler)")
	}
	if _, err := os.Stat(filepath.Join(dir, "xla", "service", "hlo.proto")); err != nil {
		t.Fatalf("AXLE_XLA_PROTO_DIR: %v", err)
	}
	return protoc, dir
}

// descriptors runs protoc on files under include and returns the messages
// and enums they define, by full name (".xla.ShapeProto").
func descriptors(t *testing.T, protoc, include string, files ...string) (map[string]*descriptorpb.DescriptorProto, map[string]*descriptorpb.EnumDescriptorProto) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "set.pb")
	args := append([]string{"-I", include, "--include_imports", "--descriptor_set_out=" + out}, files...)
	if b, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	msgs := map[string]*descriptorpb.DescriptorProto{}
	enums := map[string]*descriptorpb.EnumDescriptorProto{}
	var add func(scope string, m *descriptorpb.DescriptorProto)
	add = func(scope string, m *descriptorpb.DescriptorProto) {
		name := scope + "." + m.GetName()
		msgs[name] = m
		for _, n := range m.NestedType {
			add(name, n)
		}
		for _, e := range m.EnumType {
			enums[name+"."+e.GetName()] = e
		}
	}
	for _, f := range set.File {
		scope := "." + f.GetPackage()
		for _, m := range f.MessageType {
			add(scope, m)
		}
		for _, e := range f.EnumType {
			enums[scope+"."+e.GetName()] = e
		}
	}
	return msgs, enums
}

// packed reports whether a field is written packed: proto3 packs repeated
// numeric fields unless told not to.
func packed(f *descriptorpb.FieldDescriptorProto) bool {
	if f.GetLabel() != descriptorpb.FieldDescriptorProto_LABEL_REPEATED {
		return false
	}
	switch f.GetType() {
	case descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_BYTES,
		descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, descriptorpb.FieldDescriptorProto_TYPE_GROUP:
		return false
	}
	o := f.GetOptions()
	return o == nil || o.Packed == nil || o.GetPacked()
}

// schemaDiffs lists how ours differs from XLA's in package xla: a message,
// field or enum XLA lacks, or a field whose number, type, type name, label or
// packedness is not XLA's, or an enum value XLA numbers otherwise. Our enums
// must also have every value XLA's have, since Axle maps enums by name.
func schemaDiffs(ours, xla map[string]*descriptorpb.DescriptorProto, oursE, xlaE map[string]*descriptorpb.EnumDescriptorProto) []string {
	var diffs []string
	for name, m := range ours {
		if len(name) < 5 || name[:5] != ".xla." {
			continue
		}
		x, ok := xla[name]
		if !ok {
			diffs = append(diffs, "message "+name+": not in XLA's schema")
			continue
		}
		byName := map[string]*descriptorpb.FieldDescriptorProto{}
		for _, f := range x.Field {
			byName[f.GetName()] = f
		}
		for _, f := range m.Field {
			xf, ok := byName[f.GetName()]
			where := name + "." + f.GetName()
			switch {
			case !ok:
				diffs = append(diffs, where+": not in XLA's schema")
			case f.GetNumber() != xf.GetNumber():
				diffs = append(diffs, fmt.Sprintf("%s: number %d, XLA's %d", where, f.GetNumber(), xf.GetNumber()))
			case f.GetType() != xf.GetType() || f.GetTypeName() != xf.GetTypeName():
				diffs = append(diffs, fmt.Sprintf("%s: type %v %s, XLA's %v %s", where, f.GetType(), f.GetTypeName(), xf.GetType(), xf.GetTypeName()))
			case f.GetLabel() != xf.GetLabel():
				diffs = append(diffs, fmt.Sprintf("%s: label %v, XLA's %v", where, f.GetLabel(), xf.GetLabel()))
			case packed(f) != packed(xf):
				diffs = append(diffs, fmt.Sprintf("%s: packed %v, XLA's %v", where, packed(f), packed(xf)))
			}
		}
	}
	for name, e := range oursE {
		if len(name) < 5 || name[:5] != ".xla." {
			continue
		}
		x, ok := xlaE[name]
		if !ok {
			diffs = append(diffs, "enum "+name+": not in XLA's schema")
			continue
		}
		ourNum := map[string]int32{}
		for _, v := range e.Value {
			ourNum[v.GetName()] = v.GetNumber()
		}
		for _, v := range x.Value {
			n, ok := ourNum[v.GetName()]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: XLA's value %d missing", name, v.GetName(), v.GetNumber()))
			case n != v.GetNumber():
				diffs = append(diffs, fmt.Sprintf("%s.%s: number %d, XLA's %d", name, v.GetName(), n, v.GetNumber()))
			}
			delete(ourNum, v.GetName())
		}
		for v := range ourNum {
			diffs = append(diffs, name+"."+v+": not in XLA's schema")
		}
	}
	return diffs
}

// TestSchemaMatchesXLA compiles XLA's .proto files and Axle's own schema
// (proto/axle/xla_wire.proto) with protoc and checks that every field of
// ours is XLA's field of that name, with XLA's number, type, label and
// packing, and every enum value has XLA's number: bytes either writes then
// mean the same to the other. It then breaks a copy of ours in each way and
// checks that the comparison notices.
func TestSchemaMatchesXLA(t *testing.T) {
	protoc, dir := xlaProtoc(t)
	xla, xlaE := descriptors(t, protoc, dir, "xla/service/hlo.proto", "xla/xla_data.proto")
	ours, oursE := descriptors(t, protoc, "proto", "axle/xla_wire.proto")
	for _, d := range schemaDiffs(ours, xla, oursE, xlaE) {
		t.Error(d)
	}
	fields, values := 0, 0
	for name, m := range ours {
		if name[:5] == ".xla." {
			fields += len(m.Field)
		}
	}
	for _, e := range oursE {
		values += len(e.Value)
	}
	t.Logf("%d messages, %d fields, %d enums, %d enum values of ours match XLA's", len(ours), fields, len(oursE), values)
	if fields < 200 {
		t.Errorf("only %d fields compared; the schema did not load", fields)
	}

	breaks := map[string]func(map[string]*descriptorpb.DescriptorProto, map[string]*descriptorpb.EnumDescriptorProto){
		"number": func(m map[string]*descriptorpb.DescriptorProto, _ map[string]*descriptorpb.EnumDescriptorProto) {
			m[".xla.ShapeProto"].Field[0].Number = proto.Int32(99)
		},
		"type": func(m map[string]*descriptorpb.DescriptorProto, _ map[string]*descriptorpb.EnumDescriptorProto) {
			m[".xla.HloInstructionProto"].Field[0].Type = descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()
		},
		"label": func(m map[string]*descriptorpb.DescriptorProto, _ map[string]*descriptorpb.EnumDescriptorProto) {
			m[".xla.HloModuleProto"].Field[0].Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		},
		"packing": func(m map[string]*descriptorpb.DescriptorProto, _ map[string]*descriptorpb.EnumDescriptorProto) {
			f := m[".xla.LayoutProto"].Field[0] // minor_to_major
			f.Options = &descriptorpb.FieldOptions{Packed: proto.Bool(false)}
		},
		"enum value": func(_ map[string]*descriptorpb.DescriptorProto, e map[string]*descriptorpb.EnumDescriptorProto) {
			e[".xla.PrimitiveType"].Value[1].Number = proto.Int32(77)
		},
	}
	for what, breakIt := range breaks {
		m2, e2 := map[string]*descriptorpb.DescriptorProto{}, map[string]*descriptorpb.EnumDescriptorProto{}
		for k, v := range ours {
			m2[k] = proto.Clone(v).(*descriptorpb.DescriptorProto)
		}
		for k, v := range oursE {
			e2[k] = proto.Clone(v).(*descriptorpb.EnumDescriptorProto)
		}
		breakIt(m2, e2)
		if d := schemaDiffs(m2, xla, e2, xlaE); len(d) != 1 {
			t.Errorf("a changed %s: got differences %q, want one", what, d)
		}
	}
}
