package mlir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir is the shared StableHLO corpus, beside the repository.
const corpusDir = "../../../shared/corpus/stablehlo"

// corpusFiles lists the corpus's .mlir files, skipping the test without it.
func corpusFiles(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"testdata", "interpret"} {
		fs, _ := filepath.Glob(filepath.Join(corpusDir, dir, "*.mlir"))
		files = append(files, fs...)
	}
	if len(files) == 0 {
		t.Skip("no corpus at " + corpusDir)
	}
	return files
}

// TestCorpusParses parses every section of every corpus file.
func TestCorpusParses(t *testing.T) {
	failed, sections, ops := 0, 0, 0
	for _, f := range corpusFiles(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range SplitFile(src) {
			if strings.TrimSpace(stripComments(sec)) == "" {
				continue
			}
			sections++
			m, err := Parse(f, sec)
			if err != nil {
				failed++
				if failed <= 30 {
					t.Error(err)
				}
				continue
			}
			walkOps(m.Ops, func(*Op) { ops++ })
			if err := checkValues(m.Ops, nil); err != "" {
				t.Errorf("%s: %s", f, err)
			}
		}
	}
	t.Logf("%d sections, %d ops", sections, ops)
	if failed > 0 {
		t.Errorf("%d sections failed", failed)
	}
}

// stripComments drops // comments, to recognize a section with no ops.
func stripComments(b []byte) string {
	var sb strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		sb.WriteString(line)
	}
	return sb.String()
}

// walkOps calls f on every op, nested ones included.
func walkOps(ops []*Op, f func(*Op)) {
	for _, op := range ops {
		f(op)
		for _, r := range op.Regions {
			for _, b := range r.Blocks {
				walkOps(b.Ops, f)
			}
		}
	}
}

// checkValues checks that every operand is a result of its defining op or
// an argument of an enclosing block, and that every value has a type.
func checkValues(ops []*Op, args map[*Value]bool) string {
	for _, op := range ops {
		for _, v := range op.Operands {
			switch {
			case v.Type == nil:
				return op.Pos.String() + ": operand " + v.Name + " has no type"
			case v.Def != nil && (v.Index >= len(v.Def.Results) || v.Def.Results[v.Index] != v):
				return op.Pos.String() + ": operand " + v.Name + " is not its op's result"
			case v.Def == nil && !args[v]:
				return op.Pos.String() + ": operand " + v.Name + " is no enclosing block's argument"
			}
		}
		for _, r := range op.Regions {
			for _, b := range r.Blocks {
				inner := map[*Value]bool{}
				for v := range args {
					inner[v] = true
				}
				for i, a := range b.Args {
					if a.Index != i || a.Type == nil {
						return op.Pos.String() + ": bad block argument " + a.Name
					}
					inner[a] = true
				}
				if err := checkValues(b.Ops, inner); err != "" {
					return err
				}
			}
		}
	}
	return ""
}
