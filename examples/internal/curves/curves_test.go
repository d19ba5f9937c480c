package curves

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestWritePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	loss := []Series{{Name: "train", X: []float64{100, 200, 300}, Y: []float64{2, 1, 0.7}}}
	acc := []Series{{Name: "train", X: []float64{100, 200, 300}, Y: []float64{0.5, 0.7, 0.8}},
		{Name: "test", X: []float64{300}, Y: []float64{0.78}}}
	if err := WritePNG(path, "dense", loss, acc); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 300 {
		t.Fatalf("image is %v", b)
	}
	bad := []Series{{Name: "x", X: []float64{1}, Y: nil}}
	if err := WritePNG(path, "bad", bad, nil); err == nil {
		t.Fatal("mismatched series accepted")
	}
}
