package jit

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"
)

// testBook is a book of made-up entries (their keys start with a byte no
// program's key starts with, so loading them changes no program's code).
func testBook() *Book {
	return &Book{abi: codeABI(), entries: map[string]entry{
		"\xffa": {code: []byte{0xc3}, pool: []uint32{1, 2, 3, 4, 5, 6, 7, 8}, width: 0, features: featuresFor(false)},
		"\xffb": {code: []byte{0x90, 0xc3}, pool: make([]uint32, 16), width: 24, features: featuresFor(true)},
	}}
}

// Marshal's bytes read back as the same book, and the same entries give
// the same bytes.
func TestBookBytesRoundTrip(t *testing.T) {
	b := testBook()
	data := b.Marshal()
	got, err := parseBook(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Fatalf("read back %+v, want %+v", got, b)
	}
	if !bytes.Equal(got.Marshal(), data) || !bytes.Equal(testBook().Marshal(), data) {
		t.Fatal("one book, other bytes")
	}
	empty, err := parseBook((&Book{}).Marshal())
	if err != nil || empty.Len() != 0 {
		t.Fatalf("the empty book read back as %+v, %v", empty, err)
	}
}

// A book cut short, or with any byte changed, is refused.
func TestBookDamageRefused(t *testing.T) {
	data := testBook().Marshal()
	for n := range len(data) {
		if _, err := parseBook(data[:n]); err == nil {
			t.Fatalf("the first %d of %d bytes read as a book", n, len(data))
		}
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x10
		if err := LoadBook(bad); err == nil {
			t.Fatalf("byte %d changed, the book loads", i)
		}
	}
}

// withCRC is body with its checksum: the bytes of a book, if body is
// one's.
func withCRC(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.ChecksumIEEE(body))
}

// FuzzLoadBook loads any bytes, and the same bytes given their checksum
// (so that the fuzzer's changes reach the entries): a book or an error,
// never a panic; what reads as a book marshals to bytes that read as the
// same book.
func FuzzLoadBook(f *testing.F) {
	data := testBook().Marshal()
	body := data[:len(data)-4]
	f.Add(body)
	f.Add(body[:len(body)/2])
	f.Add(data)
	f.Add([]byte(bookMagic))
	f.Add([]byte{})
	// Past the magic, version and ABI: 2^32 entries and none there, and
	// an entry whose pool would be two million words.
	count := len(bookMagic) + 1 + 8
	f.Add(append(bytes.Clone(body[:count]), 0xff, 0xff, 0xff, 0xff, 0x0f))
	f.Add(append(bytes.Clone(body[:count]), 1, 2, 0xff, 0x61, 0, 1, 0xc3, 0xff, 0xff, 0x7f, 0))
	f.Cleanup(ClearBook)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, data := range [][]byte{data, withCRC(data)} {
			err := LoadBook(data)
			b, perr := parseBook(data)
			if perr != nil {
				if err == nil {
					t.Fatalf("the bytes do not read (%v), but LoadBook took them", perr)
				}
				continue
			}
			again, err := parseBook(b.Marshal())
			if err != nil || !reflect.DeepEqual(again, b) {
				t.Fatalf("marshaled again, read as %+v, %v; want %+v", again, err, b)
			}
		}
	})
}
