package hloproto

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// wireError finds where data stops being a valid encoding of md: the byte
// offset of the first field that is truncated or malformed, looking inside
// nested messages. proto.Unmarshal says only that something is wrong.
func wireError(data []byte, md protoreflect.MessageDescriptor) (int, string, bool) {
	return scanMessage(data, 0, md, 0)
}

func scanMessage(data []byte, base int, md protoreflect.MessageDescriptor, depth int) (int, string, bool) {
	off := 0
	for off < len(data) {
		num, typ, n := protowire.ConsumeTag(data[off:])
		if n < 0 {
			return base + off, "field tag: " + protowire.ParseError(n).Error(), true
		}
		var fd protoreflect.FieldDescriptor
		if md != nil {
			fd = md.Fields().ByNumber(num)
		}
		name := "field " + itoa(int64(num))
		if fd != nil {
			name = string(md.Name()) + "." + string(fd.Name())
		}
		start := off + n
		m := protowire.ConsumeFieldValue(num, typ, data[start:])
		if m < 0 {
			return base + off, name + ": " + protowire.ParseError(m).Error(), true
		}
		if fd != nil && typ == protowire.BytesType && fd.Kind() == protoreflect.MessageKind && depth < 64 {
			v, vn := protowire.ConsumeBytes(data[start:])
			if at, msg, bad := scanMessage(v, base+start+(m-len(v)), fd.Message(), depth+1); bad && vn >= 0 {
				return at, msg, true
			}
		}
		off = start + m
	}
	return 0, "", false
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
