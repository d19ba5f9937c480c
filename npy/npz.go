package npy

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/axle-ml/axle/hlo"
)

// Array is one array of a .npz archive: its name (the member's file name
// without ".npy", the key np.load gives it; np.savez names positional
// arrays arr_0, arr_1, ...) and its value.
type Array struct {
	Name string
	Lit  *hlo.Literal
}

// ReadNPZ reads every array of the .npz archive at path, in archive order.
// Errors name the file and the member.
func ReadNPZ(path string) ([]Array, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, withPath(path, err)
	}
	defer z.Close()
	arrays, err := readMembers(&z.Reader)
	if err != nil {
		return nil, withPath(path, err)
	}
	return arrays, nil
}

// ReadNPZFrom reads the arrays of a .npz archive of size bytes held by r,
// in archive order. Errors name the member.
func ReadNPZFrom(r io.ReaderAt, size int64) ([]Array, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	arrays, err := readMembers(z)
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	return arrays, nil
}

// withPath prefixes err with path unless it already names it.
func withPath(path string, err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

func readMembers(z *zip.Reader) ([]Array, error) {
	var arrays []Array
	seen := map[string]bool{}
	for _, f := range z.File {
		if strings.HasSuffix(f.Name, "/") {
			continue // a directory entry holds no data
		}
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("member %q is not a .npy file", f.Name)
		}
		if seen[name] {
			return nil, fmt.Errorf("member %q appears twice", f.Name)
		}
		seen[name] = true
		l, err := readMember(f)
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", f.Name, err)
		}
		arrays = append(arrays, Array{name, l})
	}
	return arrays, nil
}

func readMember(f *zip.File) (*hlo.Literal, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	l, err := read(bufio.NewReader(rc))
	if err != nil {
		return nil, err
	}
	// Reading to the end is what makes the zip reader check the CRC.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return nil, err
	}
	return l, nil
}

// WriteNPZ writes arrays to a .npz archive at path with the members
// stored, as np.savez does; names get ".npy" appended.
func WriteNPZ(path string, arrays []Array) error {
	return writeNPZFile(path, arrays, zip.Store)
}

// WriteNPZCompressed is WriteNPZ with deflated members, as
// np.savez_compressed writes them.
func WriteNPZCompressed(path string, arrays []Array) error {
	return writeNPZFile(path, arrays, zip.Deflate)
}

func writeNPZFile(path string, arrays []Array, method uint16) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = writeNPZ(f, arrays, method)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return withPath(path, err)
	}
	return nil
}

// zipTime is the members' modification time: a fixed one, so that the
// same arrays make the same bytes.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func writeNPZ(w io.Writer, arrays []Array, method uint16) error {
	z := zip.NewWriter(w)
	seen := map[string]bool{}
	for _, a := range arrays {
		if a.Name == "" || seen[a.Name] {
			return fmt.Errorf("array name %q is empty or repeated", a.Name)
		}
		seen[a.Name] = true
		mw, err := z.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: method, Modified: zipTime})
		if err != nil {
			return err
		}
		if err := write(mw, a.Lit); err != nil {
			return fmt.Errorf("member %q: %w", a.Name+".npy", err)
		}
	}
	return z.Close()
}
