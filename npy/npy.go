package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Read reads one .npy array from r and returns it as a literal in
// row-major order with the default layout (Fortran-order files are
// transposed on the way in, big-endian ones byte-swapped).
func Read(r io.Reader) (*hlo.Literal, error) {
	l, err := read(r)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return l, nil
}

// ReadFile reads the .npy file at path; errors name the file.
func ReadFile(path string) (*hlo.Literal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

func read(r io.Reader) (*hlo.Literal, error) {
	h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	e, err := parseDescr(h.descr)
	if err != nil {
		return nil, err
	}
	size, err := byteCount(h.shape, e.size)
	if err != nil {
		return nil, err
	}
	body, err := readData(r, size)
	if err != nil {
		return nil, fmt.Errorf("reading the data: %w", err)
	}
	if len(body) < size {
		return nil, fmt.Errorf("truncated data: %d of the %d bytes of a %s array of shape %v", len(body), size, h.descr, h.shape)
	}
	if h.fortran {
		body = fortranToC(body, h.shape, e.size)
	}
	shape := hlo.ArrayShape(e.dtype, h.shape...)
	if e.order == binary.ByteOrder(binary.LittleEndian) && littleHost && e.dtype != hlo.Pred {
		// The file's bytes are the storage's: one copy, not a loop over
		// elements (4x faster on 64 MiB). Not for pred, whose bytes
		// other than 0 and 1 are not valid Go bools.
		l := hlo.NewLiteral(shape)
		copy(l.RawBytes(), body)
		return l, nil
	}
	return hlo.NewLiteralFromData(shape, decode(e, body))
}

// littleHost reports that the machine stores numbers little-endian, as
// NumPy on x86 and ARM and this package write them.
var littleHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// readData reads up to size bytes, fewer if r ends first. It allocates
// as the data arrives, doubling from 1 MiB, rather than all that the
// header claims: a damaged header must not cost gigabytes.
func readData(r io.Reader, size int) ([]byte, error) {
	buf := make([]byte, 0, min(size, 1<<20))
	for len(buf) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(size-len(buf), len(buf)))
		}
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// byteCount is the size of the data of an array of dims, each element
// size bytes, or an error if it overflows.
func byteCount(dims []int64, size int) (int, error) {
	n := uint64(size)
	zero := false
	for _, d := range dims {
		if d == 0 {
			zero = true
			continue
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt {
			return 0, fmt.Errorf("shape %v is too large", dims)
		}
		n = lo
	}
	if zero {
		return 0, nil
	}
	return int(n), nil
}

// Write writes l as a .npy file (format 1.0 unless the header needs 2.0,
// C order, little-endian). l must be an array of a type NumPy has (see the
// package comment); of a dynamic shape, the live elements are written.
func Write(w io.Writer, l *hlo.Literal) error {
	if err := write(w, l); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// WriteFile writes l to a .npy file at path; errors name the file.
func WriteFile(path string, l *hlo.Literal) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw, l)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func write(w io.Writer, l *hlo.Literal) error {
	s := l.Shape()
	switch {
	case !s.IsArray():
		return fmt.Errorf("cannot write a %s literal: only arrays", s)
	case l.IsElided():
		return fmt.Errorf("cannot write an elided %s literal: its values are unknown", s)
	}
	descr, err := descrFor(s.DType)
	if err != nil {
		return err
	}
	if s.IsDynamic() {
		l = live(l)
	}
	if l.Data() == nil {
		return fmt.Errorf("%s literal has no storage", s)
	}
	// The storage's bytes are the file's on a little-endian machine.
	body := l.RawBytes()
	if !littleHost {
		body = encode(l.Data())
	}
	dims := l.Shape().Dims
	if _, err := w.Write(formatHeader(header{descr: descr, shape: dims})); err != nil {
		return err
	}
	_, err = w.Write(body)
	return err
}

// live copies the live elements of a literal of dynamic shape into a
// static one of their dimensions.
func live(l *hlo.Literal) *hlo.Literal {
	dims := make([]int64, l.Shape().Rank())
	for d := range dims {
		dims[d] = l.DynamicSize(d)
	}
	compact := hlo.NewLiteral(hlo.ArrayShape(l.DType(), dims...))
	idx := make([]int64, len(dims))
	for i := range compact.Len() {
		if j := l.LinearIndex(idx); l.DType().IsComplex() {
			compact.SetComplex128(i, l.GetComplex128(j))
		} else {
			compact.SetBits(i, l.Bits(j))
		}
		for d := len(dims) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
	return compact
}
