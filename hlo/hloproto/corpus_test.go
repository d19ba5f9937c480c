package hloproto

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"google.golang.org/protobuf/proto"
)

// corpusDir is the shared HLO corpus, relative to this package.
const corpusDir = "../../../shared/corpus/hlo"

// replicaCounts are the replica counts the parser cases are parsed with
// (CASES.tsv), by file.
func replicaCounts(t *testing.T) map[string]int64 {
	out := map[string]int64{}
	f, err := os.Open(filepath.Join(corpusDir, "parser/CASES.tsv"))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) > 3 {
			n, _ := strconv.ParseInt(cols[3], 10, 64)
			out[cols[0]] = n
		}
	}
	return out
}

// corpusModules parses every .hlo and .txt file of the corpus that Axle
// parses (the parser's error cases are the ones it must not) and calls f on
// each module.
func corpusModules(t *testing.T, f func(t *testing.T, name string, m *hlo.Module)) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("shared corpus not found (%v)", err)
	}
	replicas := replicaCounts(t)
	filepath.Walk(corpusDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !(strings.HasSuffix(path, ".hlo") || strings.HasSuffix(path, ".txt")) {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, path)
		b, _ := os.ReadFile(path)
		mods, err := hlotext.ParseFile(string(b), hlotext.Options{File: rel, ReplicaCount: replicas[rel]})
		if err != nil {
			return nil
		}
		for i, m := range mods {
			t.Run(rel+"#"+strconv.Itoa(i), func(t *testing.T) { f(t, rel, m) })
		}
		return nil
	})
}

// TestCorpusRoundTrip: text -> module -> proto -> bytes -> proto -> module
// prints, in both of the printer's forms, exactly what the module parsed
// from the text prints.
func TestCorpusRoundTrip(t *testing.T) {
	n := 0
	corpusModules(t, func(t *testing.T, name string, m *hlo.Module) {
		n++
		data, err := Write(m)
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		m2, err := Read(data)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		for _, opts := range []hlotext.PrintOptions{hlotext.Default, hlotext.Short} {
			want, got := hlotext.Print(m, opts), hlotext.Print(m2, opts)
			if got != want {
				t.Fatalf("printed form (short=%v) differs after the proto round trip:\n%s", opts.Short, firstDiff(got, want))
			}
		}
	})
	t.Logf("%d modules round-tripped", n)
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + "\n got: " + gl + "\nwant: " + wl
		}
	}
	return ""
}

// TestCorpusWithoutExtension reads every corpus module from XLA's fields
// alone (Axle's extension discarded, as in a proto XLA wrote): the module
// must convert, and one that verified before must still verify. How many
// also print identically is logged: attribute order, sharding and the
// header's verbatim attributes are what only the extension keeps.
func TestCorpusWithoutExtension(t *testing.T) {
	same, total := 0, 0
	corpusModules(t, func(t *testing.T, name string, m *hlo.Module) {
		data, err := Write(m)
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		p := &HloModuleProto{}
		if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, p); err != nil {
			t.Fatal(err)
		}
		m2, err := ToModule(p)
		if err != nil {
			t.Fatalf("ToModule without Axle's extension: %v", err)
		}
		if hlo.Verify(m) == nil {
			if err := hlo.Verify(m2); err != nil {
				t.Errorf("verifies as text, not from XLA's fields: %v", err)
			}
		}
		total++
		if hlotext.Print(m2, hlotext.Short) == hlotext.Print(m, hlotext.Short) {
			same++
		}
	})
	t.Logf("from XLA's fields alone, %d of %d modules print identically (short form)", same, total)
}
