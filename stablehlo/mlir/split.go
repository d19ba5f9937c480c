package mlir

import "bytes"

// SplitFile splits a file at its `// -----` lines, MLIR's -split-input-file
// marker, as the reference interpreter's tests use it. Each section keeps
// its place in the file: the lines before it are kept as empty lines, so
// Parse reports the file's own line numbers. A file without markers is one
// section.
func SplitFile(src []byte) [][]byte {
	var sections [][]byte
	start, lines := 0, 0 // start of the current section and lines before it
	for off := 0; off <= len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		if bytes.HasPrefix(bytes.TrimSpace(src[off:end]), []byte("// -----")) {
			sections = append(sections, section(src[start:off], lines))
			lines = bytes.Count(src[:end], []byte("\n")) + 1
			start = end + 1
			if start > len(src) {
				start = len(src)
			}
		}
		off = end + 1
	}
	return append(sections, section(src[start:], lines))
}

// section prefixes text with n newlines.
func section(text []byte, n int) []byte {
	out := make([]byte, 0, n+len(text))
	out = append(out, bytes.Repeat([]byte("\n"), n)...)
	return append(out, text...)
}
