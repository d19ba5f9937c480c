package fashion

import (
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeIDX(t *testing.T, path string, magic uint32, dims []uint32, data []uint8) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	binary.Write(z, binary.BigEndian, append([]uint32{magic}, dims...))
	z.Write(data)
	z.Close()
	f.Close()
}

func TestLoadSynthetic(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"train", "t10k"} {
		pix := make([]uint8, 3*Side*Side)
		for i := range pix {
			pix[i] = uint8(i % 251)
		}
		writeIDX(t, filepath.Join(dir, p+"-images-idx3-ubyte.gz"), 0x803, []uint32{3, Side, Side}, pix)
		writeIDX(t, filepath.Join(dir, p+"-labels-idx1-ubyte.gz"), 0x801, []uint32{3}, []uint8{9, 0, 4})
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.N != 3 || d.Test.Labels[2] != 4 || d.Train.Pixels[Side*Side+5] != uint8((Side*Side+5)%251) {
		t.Fatalf("loaded %+v", d.Train.Labels)
	}
	out := make([]float32, Side*Side)
	d.Train.Floats(out, []int{1}, 0.5)
	if out[5] != float32((Side*Side+5)%251)*0.5 {
		t.Fatalf("Floats: %v", out[5])
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "dataset-fashion-mnist") ||
		!strings.Contains(err.Error(), "train-images-idx3-ubyte.gz") {
		t.Fatalf("missing files: %v", err)
	}
	writeIDX(t, filepath.Join(dir, "train-images-idx3-ubyte.gz"), 0x801, []uint32{1, Side, Side}, make([]uint8, Side*Side))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("bad magic: %v", err)
	}
	writeIDX(t, filepath.Join(dir, "train-images-idx3-ubyte.gz"), 0x803, []uint32{2, Side, Side}, make([]uint8, Side*Side))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "bytes of data") {
		t.Fatalf("truncated: %v", err)
	}
}

func TestLoadReal(t *testing.T) {
	d, err := Load(DefaultDir)
	if err != nil {
		t.Skipf("no Fashion-MNIST here: %v", err)
	}
	if d.Train.N != 60000 || d.Test.N != 10000 {
		t.Fatalf("%d training and %d test images", d.Train.N, d.Test.N)
	}
	var counts [10]int
	for _, l := range d.Test.Labels {
		counts[l]++
	}
	for c, n := range counts {
		if n != 1000 {
			t.Fatalf("class %d has %d test images, want 1000", c, n)
		}
	}
}

func TestSynthetic(t *testing.T) {
	d := Synthetic(30, 10, 1)
	if d.Train.N != 30 || len(d.Train.Pixels) != 30*Side*Side || d.Test.N != 10 || len(d.Test.Labels) != 10 {
		t.Fatalf("sizes: %d, %d", d.Train.N, d.Test.N)
	}
	for i, l := range d.Train.Labels {
		if l < 0 || l > 9 || d.Train.Pixels[i*Side*Side+2*int(l)*Side] < 200 {
			t.Fatalf("example %d of class %d is not bright in its rows", i, l)
		}
	}
}
