package jit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"slices"
	"strings"
)

// A book as bytes: the magic, the format's version, the generated code's
// ABI (codeABI: what the code assumes of the package running it), the
// entries in key order (so that one set of programs always gives the
// same bytes), and a CRC-32 of everything before it, so that a damaged
// book is refused rather than run. An entry is its key, its features,
// its code and its pool, each with its length, and its fold width.

const (
	bookMagic   = "axle-jit-book\n"
	bookVersion = 1
)

// Book is a set of programs' machine code: Recorded's, to be marshaled
// into a package compiled ahead of time, whose binary loads it
// (LoadBook).
type Book struct {
	abi     uint64
	entries map[string]entry
}

// Len is the number of programs' code the book holds (a program's
// streaming loop counts as one more).
func (b *Book) Len() int { return len(b.entries) }

// Marshal returns the book as bytes, for LoadBook.
func (b *Book) Marshal() []byte {
	out := binary.AppendUvarint([]byte(bookMagic), bookVersion)
	out = binary.LittleEndian.AppendUint64(out, b.abi)
	keys := slices.Sorted(maps.Keys(b.entries))
	out = binary.AppendUvarint(out, uint64(len(keys)))
	for _, k := range keys {
		out = appendEntry(out, k, b.entries[k])
	}
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

func appendBytes(out, b []byte) []byte {
	return append(binary.AppendUvarint(out, uint64(len(b))), b...)
}

func appendEntry(out []byte, key string, e entry) []byte {
	out = appendBytes(out, []byte(key))
	out = appendBytes(out, []byte(e.features))
	out = appendBytes(out, e.code)
	out = binary.AppendUvarint(out, uint64(len(e.pool)))
	for _, w := range e.pool {
		out = binary.LittleEndian.AppendUint32(out, w)
	}
	return binary.AppendUvarint(out, uint64(e.width))
}

var (
	errNotABook = errors.New("jit: not a code book (or a damaged one)")
	errBadBook  = errors.New("jit: malformed code book")
	// ErrBookStale: the book was made for other generated code (another
	// version of this package); its programs run without it, the same bits.
	ErrBookStale = errors.New("jit: code book of another format version")
)

// parseBook reads a book from Marshal's bytes. It checks every length
// against the bytes left before it allocates, so no input makes it
// panic or allocate more than the input's size.
func parseBook(data []byte) (*Book, error) {
	n := len(bookMagic)
	if len(data) < n+4 || string(data[:n]) != bookMagic {
		return nil, errNotABook
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errNotABook
	}
	r := bookReader{b: body[n:]}
	if v := r.uvarint(); r.err == nil && v != bookVersion {
		return nil, ErrBookStale
	}
	b := &Book{abi: r.uint64(), entries: map[string]entry{}}
	for count := r.uvarint(); count > 0 && r.err == nil; count-- {
		key, e := r.entry()
		if r.err == nil {
			b.entries[key] = e
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = errBadBook // bytes after the last entry
	}
	if r.err != nil {
		return nil, r.err
	}
	return b, nil
}

// bookReader reads a book's fields; after the first error it reads
// zeros and keeps the error.
type bookReader struct {
	b   []byte
	err error
}

func (r *bookReader) fail() { r.b, r.err = nil, errBadBook }

func (r *bookReader) uvarint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *bookReader) uint64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	x := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return x
}

// field reads a length and as many bytes (still the input's).
func (r *bookReader) field() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	f := r.b[:n]
	r.b = r.b[n:]
	return f
}

// entry reads an entry, copied out of the input, and checks what the
// code's runs rely on: code to call, a pool to point at, a fold width a
// caller's buffers can be sized by.
func (r *bookReader) entry() (string, entry) {
	key := string(r.field())
	e := entry{features: string(r.field()), code: bytes.Clone(r.field())}
	words := r.uvarint()
	if words > uint64(len(r.b)/4) {
		r.fail()
		return "", entry{}
	}
	e.pool = make([]uint32, words)
	for i := range e.pool {
		e.pool[i] = binary.LittleEndian.Uint32(r.b[4*i:])
	}
	r.b = r.b[4*words:]
	width := r.uvarint()
	if key == "" || len(e.code) == 0 || len(e.pool) == 0 || width > MaxFoldWidth {
		r.fail()
		return "", entry{}
	}
	e.width = int(width)
	return key, e
}

// Features are the CPU features the book's code needs, each named once
// ("avx2", "fma", "avx512f", "avx512dq", "f16c"), sorted.
func (b *Book) Features() []string {
	seen := map[string]bool{}
	for _, e := range b.entries {
		for _, f := range strings.Split(e.features, ",") {
			if f != "" {
				seen[f] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
