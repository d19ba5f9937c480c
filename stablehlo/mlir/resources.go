package mlir

import (
	"bytes"
	"strings"
)

// MLIR writes large constants as `dense_resource<name> : tensor<...>` and
// their bytes in a trailing section:
//
//	{-#
//	  dialect_resources: {
//	    builtin: {
//	      name: "0x04000000<little-endian data>"
//	    }
//	  }
//	#-}
//
// (PyTorch/XLA's exporter does this). The blob's first four bytes are its
// alignment; the data follows. The section is read before the module, so
// a dense_resource becomes an ordinary DenseAttr with Hex set.

// splitResources finds the resource section at the end of src: the
// offset where it starts (len(src) if none) and its range's end.
func splitResources(src []byte) (start, end int) {
	start = bytes.LastIndex(src, []byte("{-#"))
	if start < 0 || (start > 0 && src[start-1] != '\n') {
		return len(src), len(src)
	}
	end = bytes.LastIndex(src, []byte("#-}"))
	if end < start {
		return len(src), len(src)
	}
	return start, end
}

// parseResources reads `{-# key: { dialect: { name: "0x..." } } #-}`
// between from and to (the `{-#` and `#-}`), keeping the builtin
// dialect's blobs.
func (p *parser) parseResources(from, to int) {
	q := &parser{lx: &lexer{src: p.lx.src, end: to, off: from + len("{-#"), lines: p.lx.lines, file: p.lx.file, names: p.lx.names}}
	q.next()
	p.resources = map[string][]byte{}
	for q.tok.kind != tEOF {
		q.resourceKey() // dialect_resources, external_resources
		q.expect(":")
		q.expect("{")
		for !q.is("}") {
			dialect := q.resourceKey()
			q.expect(":")
			q.expect("{")
			for !q.is("}") {
				name := q.resourceKey()
				q.expect(":")
				if q.tok.kind != tString {
					q.fail(q.tok.off, "expected a resource blob string, found %s", q.describe())
				}
				blob, off := q.tok.text, q.tok.off
				q.next()
				if dialect == "builtin" && strings.HasPrefix(blob, "0x") {
					b := decodeHex(q, blob[2:], off)
					if len(b) < 4 {
						q.fail(off, "resource blob %s is shorter than its alignment header", name)
					}
					p.resources[name] = b[4:]
				}
				if !q.accept(",") {
					break
				}
			}
			q.expect("}")
			if !q.accept(",") {
				break
			}
		}
		q.expect("}")
		q.accept(",")
	}
}

// resourceKey reads a key of the resource section: a bare or quoted name.
func (p *parser) resourceKey() string {
	if p.tok.kind != tIdent && p.tok.kind != tString {
		p.fail(p.tok.off, "expected a resource name, found %s", p.describe())
	}
	s := p.tok.text
	p.next()
	return s
}

// parseDenseResource reads `dense_resource<name> : type` as a DenseAttr
// holding the resource's bytes.
func (p *parser) parseDenseResource() Attr {
	p.next()
	p.expect("<")
	if p.tok.kind != tIdent && p.tok.kind != tString {
		p.fail(p.tok.off, "expected a resource name, found %s", p.describe())
	}
	name, off := p.tok.text, p.tok.off
	p.next()
	p.expect(">")
	p.expect(":")
	d := DenseAttr{Type: p.parseType()}
	b, ok := p.resources[name]
	if !ok {
		p.fail(off, "dense_resource %s has no data in the file", name)
	}
	d.Hex = b
	if d.Hex == nil {
		d.Hex = []byte{} // an empty blob is still a blob
	}
	return d
}
