package npy

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// want is one array as NumPy saw it (testdata/expected.json, written by
// testdata/make.py): element type, shape, row-major bit patterns.
type want struct {
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Bits  []uint64
}

func loadExpected(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]json.RawMessage
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	return exp
}

// literalBits is l's elements as bit patterns, row-major, complex numbers
// as real then imaginary part (as make.py lists them).
func literalBits(l *hlo.Literal) []uint64 {
	out := []uint64{}
	for i := range l.Len() {
		switch d := l.Data().(type) {
		case []complex64:
			out = append(out, uint64(math.Float32bits(real(d[i]))), uint64(math.Float32bits(imag(d[i]))))
		case []complex128:
			out = append(out, math.Float64bits(real(d[i])), math.Float64bits(imag(d[i])))
		default:
			out = append(out, l.Bits(i))
		}
	}
	return out
}

func checkArray(t *testing.T, what string, l *hlo.Literal, w want) {
	t.Helper()
	s := l.Shape()
	if s.DType.String() != w.DType || !slices.Equal(s.Dims, w.Shape) {
		t.Errorf("%s: %s, want %s%v", what, s, w.DType, w.Shape)
		return
	}
	if got := literalBits(l); !slices.Equal(got, w.Bits) {
		t.Errorf("%s: bits %v, want %v", what, got, w.Bits)
	}
}

// TestReadNumPyFiles: every file NumPy wrote (each dtype, 0-d, empty,
// Fortran order, big-endian, format 2.0 and 3.0, bf16 as '<V2', savez and
// savez_compressed) reads as the element type, shape and bits NumPy
// reported for it.
func TestReadNumPyFiles(t *testing.T) {
	exp := loadExpected(t)
	for file, raw := range exp {
		path := filepath.Join("testdata", file)
		if strings.HasSuffix(file, ".npy") {
			var w want
			json.Unmarshal(raw, &w)
			l, err := ReadFile(path)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			checkArray(t, file, l, w)
			continue
		}
		var ws map[string]want
		json.Unmarshal(raw, &ws)
		arrays, err := ReadNPZ(path)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		var names []string
		for _, a := range arrays {
			names = append(names, a.Name)
			checkArray(t, file+":"+a.Name, a.Lit, ws[a.Name])
		}
		if len(names) != len(ws) || !slices.IsSorted(names) {
			t.Errorf("%s: members %v, want the %d of expected.json in archive order", file, names, len(ws))
		}
	}
	if len(exp) < 20 {
		t.Errorf("expected.json lists %d files", len(exp))
	}
}

// TestWriteMatchesNumPy: writing what was read from a C-order,
// little-endian, format 1.0 file gives NumPy's bytes exactly (header
// padding included).
func TestWriteMatchesNumPy(t *testing.T) {
	for _, name := range []string{"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
		"f2", "f4", "f8", "c8", "c16", "scalar_f8", "empty_f4", "bf16"} {
		path := filepath.Join("testdata", name+".npy")
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Read(bytes.NewReader(orig))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, l); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(buf.Bytes(), orig) {
			t.Errorf("%s: wrote\n%q\nNumPy wrote\n%q", name, buf.Bytes(), orig)
		}
	}
}

// TestRoundTrip: Fortran-order, big-endian and version 2/3 files, and
// both kinds of archive, read back equal after Go writes them.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"fortran_i4", "big_f4", "big_i8", "big_c16", "big_fortran_u2", "v2_f8", "v3_u1"} {
		l, err := ReadFile(filepath.Join("testdata", name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".npy")
		if err := WriteFile(out, l); err != nil {
			t.Fatal(err)
		}
		back, err := ReadFile(out)
		if err != nil || !back.Equal(l) {
			t.Errorf("%s: read back %v (%v), want %v", name, back, err, l)
		}
	}
	for _, name := range []string{"savez", "savez_compressed"} {
		arrays, err := ReadNPZ(filepath.Join("testdata", name+".npz"))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".npz")
		write := WriteNPZ
		if name == "savez_compressed" {
			write = WriteNPZCompressed
		}
		if err := write(out, arrays); err != nil {
			t.Fatal(err)
		}
		back, err := ReadNPZ(out)
		if err != nil || len(back) != len(arrays) {
			t.Fatalf("%s: read back %d arrays (%v)", name, len(back), err)
		}
		for i := range back {
			if back[i].Name != arrays[i].Name || !back[i].Lit.Equal(arrays[i].Lit) {
				t.Errorf("%s: member %d is %s %v, want %s %v", name, i, back[i].Name, back[i].Lit, arrays[i].Name, arrays[i].Lit)
			}
		}
	}
}

// TestWriteDynamic: a literal of dynamic shape is written with its live
// elements only: f32[<=4] holding 2 of {1, 2, 3, 4} is the array [1, 2].
func TestWriteDynamic(t *testing.T) {
	l, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4})
	if err := l.SetDynamicSize(0, 2); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, l); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hlo.LiteralFromSlice([]float32{1, 2})
	if !back.Equal(want) {
		t.Errorf("read back %v, want %v", back, want)
	}
}

// TestWriteErrors: what NumPy cannot hold is an error naming it.
func TestWriteErrors(t *testing.T) {
	f, _ := hlo.LiteralFromSlice([]float32{1})
	for _, c := range []struct {
		l    *hlo.Literal
		want string
	}{
		{hlo.MakeTupleLiteral(f), "only arrays"},
		{hlo.NewLiteral(hlo.ArrayShape(hlo.S4, 2)), "s4 has no NumPy dtype"},
		{hlo.NewLiteral(hlo.ArrayShape(hlo.F8E4M3FN, 2)), "f8e4m3fn has no NumPy dtype"},
		{hlo.NewElidedLiteral(hlo.ArrayShape(hlo.F32, 2)), "elided"},
	} {
		if err := Write(&bytes.Buffer{}, c.l); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.l.Shape(), err, c.want)
		}
	}
	err := WriteNPZ(filepath.Join(t.TempDir(), "x.npz"), []Array{{"a", f}, {"a", f}})
	if err == nil || !strings.Contains(err.Error(), `"a" is empty or repeated`) {
		t.Errorf("repeated name: %v", err)
	}
}

// TestNumPyReadsOurFiles: NumPy loads what Go writes. Every test file is
// read and written again by Go (Fortran order and big-endian ones come
// out C order, little-endian), both archives too, and make.py --verify
// compares them with the arrays it made them from. Skipped without
// /usr/bin/python3 and numpy.
func TestNumPyReadsOurFiles(t *testing.T) {
	const python = "/usr/bin/python3"
	if exec.Command(python, "-c", "import numpy").Run() != nil {
		t.Skip("no python3 with numpy")
	}
	dir := t.TempDir()
	files, _ := filepath.Glob("testdata/*.np[yz]")
	for _, p := range files {
		out := filepath.Join(dir, filepath.Base(p))
		switch {
		case strings.HasSuffix(p, "object.npy"):
		case strings.HasSuffix(p, ".npy"):
			l, err := ReadFile(p)
			if err == nil {
				err = WriteFile(out, l)
			}
			if err != nil {
				t.Fatal(err)
			}
		default:
			arrays, err := ReadNPZ(p)
			write := WriteNPZCompressed
			if filepath.Base(p) == "savez.npz" {
				write = WriteNPZ
			}
			if err == nil {
				err = write(out, arrays)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := exec.Command(python, "testdata/make.py", "--verify", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), " passed, 0 failed") {
		t.Errorf("make.py --verify: %v\n%s", err, out)
	}
	t.Logf("make.py --verify: %s", bytes.TrimSpace(out))
}

// TestCodecMatchesStorage: the element loops that big-endian files (and
// big-endian machines) use agree with the storage bytes of the one-copy
// path, for every test file's element type.
func TestCodecMatchesStorage(t *testing.T) {
	if !littleHost {
		t.Skip("the one-copy path is for little-endian machines")
	}
	files, _ := filepath.Glob("testdata/*.npy")
	for _, p := range files {
		l, err := ReadFile(p)
		if err != nil {
			continue // object.npy
		}
		e, err := parseDescr(descrs[l.DType()])
		if err != nil {
			t.Fatal(err)
		}
		raw := l.RawBytes()
		if enc := encode(l.Data()); !bytes.Equal(enc, raw) {
			t.Errorf("%s: encode gives %x, storage is %x", p, enc, raw)
		}
		dec, _ := hlo.NewLiteralFromData(l.Shape(), decode(e, raw))
		if !dec.Equal(l) {
			t.Errorf("%s: decode gives %v, want %v", p, dec, l)
		}
	}
}
