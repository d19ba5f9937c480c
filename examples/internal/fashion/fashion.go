// Package fashion loads Fashion-MNIST from the IDX files Debian's package
// dataset-fashion-mnist installs.
package fashion

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// DefaultDir is where dataset-fashion-mnist puts the files.
const DefaultDir = "/usr/share/datasets/fashion-mnist"

// Side is the images' height and width.
const Side = 28

// Split is one half of the dataset: N images of Side×Side bytes (0..255,
// row-major, image after image) and their labels 0..9.
type Split struct {
	N      int
	Pixels []uint8
	Labels []int32
}

// Dataset is the training and test splits.
type Dataset struct {
	Train, Test Split
}

// Load reads the four .gz files from dir.
func Load(dir string) (*Dataset, error) {
	var d Dataset
	var err error
	if d.Train, err = loadSplit(dir, "train"); err != nil {
		return nil, err
	}
	if d.Test, err = loadSplit(dir, "t10k"); err != nil {
		return nil, err
	}
	return &d, nil
}

func loadSplit(dir, prefix string) (Split, error) {
	imgPath := filepath.Join(dir, prefix+"-images-idx3-ubyte.gz")
	lblPath := filepath.Join(dir, prefix+"-labels-idx1-ubyte.gz")
	pixels, dims, err := readIDX(imgPath, 0x803, 3)
	if err != nil {
		return Split{}, err
	}
	if dims[1] != Side || dims[2] != Side {
		return Split{}, fmt.Errorf("%s: images are %dx%d, want %dx%d", imgPath, dims[1], dims[2], Side, Side)
	}
	raw, ldims, err := readIDX(lblPath, 0x801, 1)
	if err != nil {
		return Split{}, err
	}
	if ldims[0] != dims[0] {
		return Split{}, fmt.Errorf("%s has %d labels for %d images in %s", lblPath, ldims[0], dims[0], imgPath)
	}
	labels := make([]int32, len(raw))
	for i, l := range raw {
		if l > 9 {
			return Split{}, fmt.Errorf("%s: label %d of example %d is not a class 0..9", lblPath, l, i)
		}
		labels[i] = int32(l)
	}
	return Split{N: dims[0], Pixels: pixels, Labels: labels}, nil
}

// readIDX reads a gzipped IDX file of unsigned bytes: a big-endian magic
// number (0x08 for ubyte, then the rank), the dimensions, the data.
func readIDX(path string, magic uint32, rank int) ([]uint8, []int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s is missing: install Fashion-MNIST with `apt-get install dataset-fashion-mnist` (Debian's package), or pass the directory holding the IDX .gz files", path)
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	hdr := make([]uint32, 1+rank)
	if err := binary.Read(z, binary.BigEndian, hdr); err != nil {
		return nil, nil, fmt.Errorf("%s: reading the IDX header: %w", path, err)
	}
	if hdr[0] != magic {
		return nil, nil, fmt.Errorf("%s: IDX magic number %#x, want %#x", path, hdr[0], magic)
	}
	dims := make([]int, rank)
	n := 1
	for i := range dims {
		dims[i] = int(hdr[1+i])
		n *= dims[i]
	}
	if n > 1<<30 {
		return nil, nil, fmt.Errorf("%s: %v elements is not Fashion-MNIST", path, dims)
	}
	data := make([]uint8, n)
	if _, err := io.ReadFull(z, data); err != nil {
		return nil, nil, fmt.Errorf("%s: %d bytes of data expected: %w", path, n, err)
	}
	return data, dims, nil
}

// Floats fills dst with the pixels of examples idx, image after image,
// each pixel times scale. A table of the 256 possible values makes the
// inner loop a load and a store: converting each byte costs more, and
// this runs once per training step.
func (s *Split) Floats(dst []float32, idx []int, scale float32) {
	const n = Side * Side
	var table [256]float32
	for v := range table {
		table[v] = float32(v) * scale
	}
	for k, i := range idx {
		src := s.Pixels[i*n : (i+1)*n]
		out := dst[k*n : (k+1)*n]
		for j, p := range src {
			out[j] = table[p]
		}
	}
}
