package hloproto

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// extField is the field number under which Axle's additions (the Axle*
// messages) ride in an XLA message's unknown fields. XLA keeps unknown fields
// and never reads them, so a proto Axle writes means to XLA what its XLA
// fields say. The number is near the top of the range, far from XLA's own.
const extField protowire.Number = 536870000

// setExt stores ext in m's unknown fields, replacing any earlier one.
func setExt(m, ext proto.Message) error {
	b, err := proto.Marshal(ext)
	if err != nil {
		return err
	}
	raw := protowire.AppendTag(nil, extField, protowire.BytesType)
	raw = protowire.AppendBytes(raw, b)
	m.ProtoReflect().SetUnknown(raw)
	return nil
}

// getExt reads Axle's additions from m's unknown fields into ext and reports
// whether there were any.
func getExt(m, ext proto.Message) (bool, error) {
	unknown := m.ProtoReflect().GetUnknown()
	for len(unknown) > 0 {
		num, typ, n := protowire.ConsumeTag(unknown)
		if n < 0 {
			return false, protowire.ParseError(n)
		}
		unknown = unknown[n:]
		if num == extField && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(unknown)
			if n < 0 {
				return false, protowire.ParseError(n)
			}
			if err := proto.Unmarshal(v, ext); err != nil {
				return false, fmt.Errorf("axle extension: %w", err)
			}
			return true, nil
		}
		n = protowire.ConsumeFieldValue(num, typ, unknown)
		if n < 0 {
			return false, protowire.ParseError(n)
		}
		unknown = unknown[n:]
	}
	return false, nil
}
