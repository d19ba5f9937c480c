package opt_test

import (
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/pass"
)

// runPass parses before, runs p under a pipeline with every check on, and
// returns the module in short text and whether p reported a change.
func runPass(t *testing.T, p pass.Pass, before string) (string, bool) {
	t.Helper()
	m, err := hlotext.Parse(before, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{p}}
	changed, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	return hlotext.Print(m, hlotext.Short), changed
}

// normalize parses and prints text the way runPass prints its result.
func normalize(t *testing.T, text string) string {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{File: t.Name() + "(want)"})
	if err != nil {
		t.Fatal(err)
	}
	return hlotext.Print(m, hlotext.Short)
}

// checkPass: after == "" means the pass must not fire.
func checkPass(t *testing.T, p pass.Pass, before, after string) {
	t.Helper()
	got, changed := runPass(t, p, before)
	if after == "" {
		if changed {
			t.Fatalf("%s fired on\n%s\ngiving\n%s", p.Name(), before, got)
		}
		return
	}
	if !changed {
		t.Fatalf("%s did not fire on\n%s", p.Name(), before)
	}
	if want := normalize(t, after); got != want {
		t.Fatalf("%s gave\n%s\nwant\n%s", p.Name(), got, want)
	}
}

func hloModule(parts ...string) string { return "HloModule m\n" + strings.Join(parts, "\n") }
