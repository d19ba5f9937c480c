package mlir

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzParse checks that no input panics or hangs the parser, that every
// failure is an *Error with a position inside the input, and that printing
// is a fixed point: what Parse accepts prints as text that parses and
// prints the same again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(genericModule))
	for _, c := range prettyPairs {
		f.Add([]byte("func.func @f(" + c.args + ") {\n" + c.pretty + "\n}\n"))
		f.Add([]byte("func.func @f(" + c.args + ") {\n" + c.generic + "\n}\n"))
	}
	files := corpusFilesOrNil()
	for i, name := range files {
		if i%25 != 0 && !strings.Contains(name, "interpret") {
			continue
		}
		if src, err := os.ReadFile(name); err == nil {
			for _, sec := range SplitFile(src) {
				f.Add(sec)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		// Go's fuzzer does not report hangs; a parse this slow is one.
		tm := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("parse hangs on %q", src)) })
		defer tm.Stop()
		m, err := Parse("fuzz.mlir", src)
		if err == nil {
			text := m.String()
			m2, err := Parse("printed.mlir", []byte(text))
			if err != nil {
				t.Fatalf("printed text does not parse: %v\n%s", err, text)
			}
			if again := m2.String(); again != text {
				t.Fatalf("printing is not a fixed point:\n%s\nthen\n%s", text, again)
			}
			return
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is not an *Error", err)
		}
		lines := strings.Count(string(src), "\n") + 1
		if pe.Pos.Line < 1 || pe.Pos.Line > lines || pe.Pos.Col < 1 {
			t.Fatalf("error position %v outside the input (%d lines)", pe.Pos, lines)
		}
	})
}

// corpusFilesOrNil lists the corpus files without needing a testing.T.
func corpusFilesOrNil() []string {
	var files []string
	for _, dir := range []string{"testdata", "interpret"} {
		entries, _ := os.ReadDir(corpusDir + "/" + dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".mlir") {
				files = append(files, corpusDir+"/"+dir+"/"+e.Name())
			}
		}
	}
	return files
}

// gen1000 writes a module of 1,000 ops in the shapes JAX lowers to:
// constants, elementwise ops, broadcasts, compares, selects, dot_general
// and a compact reduce, all in pretty syntax.
func gen1000() []byte {
	var sb strings.Builder
	sb.WriteString("module @bench attributes {mhlo.num_partitions = 1 : i32} {\n")
	sb.WriteString("  func.func public @main(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>) -> (tensor<64x64xf32> {jax.result_info = \"\"}) {\n")
	last := "%arg0"
	n := 0
	emit := func(format string, args ...any) {
		fmt.Fprintf(&sb, "    %%%d = "+format+"\n", append([]any{n}, args...)...)
		last = fmt.Sprintf("%%%d", n)
		n++
	}
	for n < 998 {
		switch n % 8 {
		case 0:
			emit("stablehlo.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>")
			emit("stablehlo.constant dense<5.000000e-01> : tensor<f32>")
		case 2:
			emit("stablehlo.broadcast_in_dim %%%d, dims = [] : (tensor<f32>) -> tensor<64x64xf32>", n-1)
		case 3:
			emit("stablehlo.add %s, %%%d : tensor<64x64xf32>", last, n-1)
		case 4:
			emit("stablehlo.multiply %s, %%arg1 : tensor<64x64xf32>", last)
		case 5:
			emit("stablehlo.compare  GT, %s, %%arg1,  FLOAT : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xi1>", last)
			emit("stablehlo.select %%%d, %%%d, %%arg1 : tensor<64x64xi1>, tensor<64x64xf32>", n-1, n-2)
		case 7:
			emit("stablehlo.dot_general %s, %%arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>", last)
		default:
			emit("stablehlo.exponential %s : tensor<64x64xf32>", last)
		}
	}
	fmt.Fprintf(&sb, "    return %s : tensor<64x64xf32>\n  }\n}\n", last)
	return []byte(sb.String())
}

// BenchmarkParse1000Ops parses a generated module of about 1,000 ops.
func BenchmarkParse1000Ops(b *testing.B) {
	src := gen1000()
	m, err := Parse("bench.mlir", src)
	if err != nil {
		b.Fatal(err)
	}
	if got := len(m.Ops[0].Regions[0].Blocks[0].Ops); got < 1000 {
		b.Fatalf("%d ops, want at least 1000", got)
	}
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Parse("bench.mlir", src); err != nil {
			b.Fatal(err)
		}
	}
}
