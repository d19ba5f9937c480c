package hlotext

import (
	"os"
	"path/filepath"
	"testing"
)

// benchFiles are the largest real modules in the corpus.
var benchFiles = []string{
	"xla/hlo/translate/hlo_to_mhlo/tests/import.hlo",
	"xla/backends/cpu/benchmarks/hlo/ssd_mobilenet_tf.hlo",
}

func BenchmarkParse(b *testing.B) {
	for _, rel := range benchFiles {
		text, err := os.ReadFile(filepath.Join(corpusDir, rel))
		if err != nil {
			b.Skipf("shared corpus not found: %v", err)
		}
		b.Run(filepath.Base(rel), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseFile(string(text), Options{File: rel}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPrint(b *testing.B) {
	text, err := os.ReadFile(filepath.Join(corpusDir, benchFiles[1]))
	if err != nil {
		b.Skipf("shared corpus not found: %v", err)
	}
	m, err := Parse(string(text), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Print(m, Default)
	}
}
