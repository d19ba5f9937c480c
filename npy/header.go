package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// magic starts every .npy file; the format version's two bytes follow.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the header a reader accepts, so that a damaged length
// field cannot make it allocate gigabytes. NumPy itself refuses headers
// over 10000 bytes unless told otherwise; real ones are under 200.
const maxHeaderLen = 1 << 20

// header is the dictionary of a .npy file: the array's dtype descr,
// whether its elements are in column-major order, and its dimensions.
type header struct {
	descr   string
	fortran bool
	shape   []int64
}

// readHeader reads the magic string, the version and the header
// dictionary, leaving r at the first byte of the array data.
func readHeader(r io.Reader) (header, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return header{}, fmt.Errorf("reading the magic string: %w", noEOF(err))
	}
	if string(pre[:6]) != magic {
		return header{}, fmt.Errorf("not a .npy file: it starts %q, not %q", pre[:6], magic)
	}
	major, minor := pre[6], pre[7]
	var n int
	switch major {
	case 1:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return header{}, fmt.Errorf("reading the header length: %w", noEOF(err))
		}
		n = int(binary.LittleEndian.Uint16(l[:]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return header{}, fmt.Errorf("reading the header length: %w", noEOF(err))
		}
		n = int(min(binary.LittleEndian.Uint32(l[:]), maxHeaderLen+1))
	default:
		return header{}, fmt.Errorf("unsupported .npy format version %d.%d (known: 1.0, 2.0, 3.0)", major, minor)
	}
	if n > maxHeaderLen {
		return header{}, fmt.Errorf("header length over %d bytes", maxHeaderLen)
	}
	text := make([]byte, n)
	if _, err := io.ReadFull(r, text); err != nil {
		return header{}, fmt.Errorf("reading the %d-byte header: %w", n, noEOF(err))
	}
	h, err := parseHeader(text)
	if err != nil {
		return header{}, fmt.Errorf("header %q: %w", bytes.TrimRight(text, " \n"), err)
	}
	return h, nil
}

// noEOF turns a bare EOF into ErrUnexpectedEOF: a reader that stops inside
// a file has found a truncated one.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseHeader reads the header dictionary, a Python literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }. As in
// NumPy, the three keys are required and no others are allowed.
func parseHeader(text []byte) (header, error) {
	p := &pyParser{src: string(text)}
	v, err := p.value(0)
	if err != nil {
		return header{}, err
	}
	if p.skipSpace(); p.pos != len(p.src) {
		return header{}, fmt.Errorf("unexpected %q after the dictionary", p.rest())
	}
	d, ok := v.(pyDict)
	if !ok {
		return header{}, errors.New("the header is not a dictionary")
	}
	var keys []string
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"descr", "fortran_order", "shape"}) {
		return header{}, fmt.Errorf("header keys are %q, want descr, fortran_order and shape", keys)
	}
	var h header
	switch descr := d["descr"].(type) {
	case string:
		h.descr = descr
	case pyList:
		return header{}, errors.New("structured dtypes (a list descr) are not supported")
	default:
		return header{}, fmt.Errorf("descr is %v, not a string", d["descr"])
	}
	if h.fortran, ok = d["fortran_order"].(bool); !ok {
		return header{}, fmt.Errorf("fortran_order is %v, not True or False", d["fortran_order"])
	}
	dims, ok := d["shape"].(pyList)
	if !ok || !dims.tuple {
		return header{}, fmt.Errorf("shape is %v, not a tuple", d["shape"])
	}
	for _, x := range dims.elems {
		n, ok := x.(int64)
		if !ok || n < 0 {
			return header{}, fmt.Errorf("shape has %v, not a non-negative integer", x)
		}
		h.shape = append(h.shape, n)
	}
	return h, nil
}

// formatHeader returns the header block of a .npy file, magic string to
// the final newline, padded as NumPy pads it: the array data starts at a
// multiple of 64 bytes. Version 2.0 is used only when the dictionary does
// not fit version 1.0's 16-bit length.
func formatHeader(h header) []byte {
	var dims strings.Builder
	dims.WriteByte('(')
	for i, d := range h.shape {
		if i > 0 {
			dims.WriteString(", ")
		}
		dims.WriteString(strconv.FormatInt(d, 10))
	}
	if len(h.shape) == 1 {
		dims.WriteByte(',')
	}
	dims.WriteByte(')')
	order := "False"
	if h.fortran {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", h.descr, order, dims.String())
	out := []byte(magic)
	lenBytes := 2
	if len(dict)+1+10 > 1<<16-1 {
		lenBytes = 4
	}
	pad := (64 - (len(magic)+2+lenBytes+len(dict)+1)%64) % 64
	n := len(dict) + pad + 1
	if lenBytes == 2 {
		out = append(out, 1, 0)
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
	} else {
		out = append(out, 2, 0)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	out = append(out, dict...)
	out = append(out, bytes.Repeat([]byte{' '}, pad)...)
	return append(out, '\n')
}
