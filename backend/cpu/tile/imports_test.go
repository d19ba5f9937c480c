package tile

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The tile package sits below the backend: of Axle's packages it imports
// only these, never backend/cpu itself (whose fusion and lowering use it).
func TestImportsOnlyTheLayersBelow(t *testing.T) {
	allowed := map[string]bool{
		"github.com/axle-ml/axle/hlo":                 true,
		"github.com/axle-ml/axle/hlo/minifloat":       true,
		"github.com/axle-ml/axle/backend/cpu/jit":     true,
		"github.com/axle-ml/axle/backend/cpu/kernels": true,
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(path, "github.com/axle-ml/axle") && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
	if files == 0 {
		t.Fatal("no source files read")
	}
}
