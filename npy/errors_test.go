package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// npyBytes is a format 1.0 file with the given header dictionary and data.
func npyBytes(dict string, data []byte) []byte {
	b := []byte(magic + "\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)+1))
	b = append(b, dict...)
	b = append(b, '\n')
	return append(b, data...)
}

// TestReadErrors: damaged and unsupported files are errors that say what
// is wrong, never panics.
func TestReadErrors(t *testing.T) {
	f4, err := os.ReadFile("testdata/f4.npy")
	if err != nil {
		t.Fatal(err)
	}
	hdr := func(descr, order, shape string) []byte {
		return npyBytes("{'descr': "+descr+", 'fortran_order': "+order+", 'shape': "+shape+", }", make([]byte, 8))
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "reading the magic string: unexpected EOF"},
		{"not npy", []byte("PK\x03\x04 a zip file"), "not a .npy file"},
		{"version 4", []byte(magic + "\x04\x00\x10\x00"), "unsupported .npy format version 4.0"},
		{"short header", f4[:40], "reading the 118-byte header: unexpected EOF"},
		{"truncated data", f4[:len(f4)-1], "truncated data: 23 of the 24 bytes"},
		{"header length", []byte(magic + "\x02\x00\xff\xff\xff\xff"), "header length over"},
		{"not a dict", npyBytes("[1, 2]", nil), "not a dictionary"},
		{"missing key", npyBytes("{'descr': '<f4', 'shape': (2,)}", nil), "header keys"},
		{"extra key", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", nil), "header keys"},
		{"unterminated", npyBytes("{'descr': '<f4", nil), "unterminated string"},
		{"garbage", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", nil), "after the dictionary"},
		{"deep", npyBytes(strings.Repeat("(", 100000), nil), "nested deeper"},
		{"object", hdr("'|O'", "False", "(1,)"), "object array"},
		{"string", hdr("'<U2'", "False", "(1,)"), `unsupported dtype "<U2"`},
		{"float128", hdr("'<f16'", "False", "(1,)"), `unsupported dtype "<f16"`},
		{"structured", hdr("[('a', '<f4')]", "False", "(1,)"), "structured dtypes"},
		{"order", hdr("'<f4'", "1", "(1,)"), "fortran_order is 1"},
		{"shape list", hdr("'<f4'", "False", "[2]"), "not a tuple"},
		{"negative", hdr("'<f4'", "False", "(-2,)"), "not a non-negative integer"},
		{"huge", hdr("'<f8'", "False", "(4611686018427387904, 4)"), "too large"},
		{"huge claim", hdr("'<f8'", "False", "(1000000000000,)"), "truncated data: 8 of the 8000000000000 bytes"},
		{"big int", hdr("'<f8'", "False", "(99999999999999999999,)"), "value out of range"},
	} {
		_, err := Read(bytes.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

// TestReadObjectFile: NumPy's pickled object array is refused by name.
func TestReadObjectFile(t *testing.T) {
	_, err := ReadFile("testdata/object.npy")
	if err == nil || !strings.Contains(err.Error(), `testdata/object.npy: dtype "|O" is an object array`) {
		t.Errorf("error %v", err)
	}
}

// TestReadNPZErrors: errors name the archive and the member.
func TestReadNPZErrors(t *testing.T) {
	dir := t.TempDir()
	f4, _ := os.ReadFile("testdata/f4.npy")
	archive := func(name string, members map[string][]byte, order ...string) string {
		path := filepath.Join(dir, name)
		f, _ := os.Create(path)
		z := zip.NewWriter(f)
		for _, m := range order {
			w, _ := z.Create(m)
			w.Write(members[m])
		}
		z.Close()
		f.Close()
		return path
	}
	bad := archive("bad.npz", map[string][]byte{"ok.npy": f4, "cut.npy": f4[:len(f4)-4]}, "ok.npy", "cut.npy")
	notNpy := archive("notnpy.npz", map[string][]byte{"readme.txt": []byte("hi")}, "readme.txt")
	for _, c := range []struct{ path, want string }{
		{bad, bad + `: member "cut.npy": truncated data`},
		{notNpy, notNpy + `: member "readme.txt" is not a .npy file`},
		{"testdata/f4.npy", "testdata/f4.npy: zip: not a valid zip file"},
		{filepath.Join(dir, "none.npz"), "open " + filepath.Join(dir, "none.npz") + ": no such file"},
	} {
		_, err := ReadNPZ(c.path)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want one starting %q", err, c.want)
		}
	}
	// A damaged deflated member fails its CRC check.
	z, _ := os.ReadFile("testdata/savez_compressed.npz")
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	off, _ := zr.File[0].DataOffset()
	z[off+int64(zr.File[0].CompressedSize64)/2] ^= 0x40
	if _, err := ReadNPZFrom(bytes.NewReader(z), int64(len(z))); err == nil || !strings.Contains(err.Error(), `member "x.npy"`) {
		t.Errorf("damaged member: %v", err)
	}
}

// FuzzRead: no input makes Read panic, and whatever it reads is written
// and read back equal. The seeds are NumPy's files.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.npy")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		l, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, l); err != nil {
			t.Fatalf("read %s but cannot write it: %v", l.Shape(), err)
		}
		back, err := Read(&buf)
		if err != nil || !back.Equal(l) {
			t.Fatalf("%s does not read back (%v)", l.Shape(), err)
		}
	})
}

// FuzzReadNPZ: no archive makes ReadNPZFrom panic.
func FuzzReadNPZ(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.npz")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ReadNPZFrom(bytes.NewReader(in), int64(len(in)))
	})
}
