package pass_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

func runWithDumps(t *testing.T, formats ...string) string {
	t.Helper()
	dir := t.TempDir()
	m := parse(t, small)
	d, err := pass.NewDumper(m, pass.DumpOptions{Dir: dir, PassRE: "rew", Formats: formats})
	if err != nil {
		t.Fatal(err)
	}
	pl := &pass.Pipeline{Label: "p", Passes: []pass.Pass{
		pass.Func("noop", func(*hlo.Module) (bool, error) { return false, nil }),
		&pass.Fix{Label: "fix", Passes: []pass.Pass{pass.Func("rewrite", negToAbs)}},
	}}
	if _, err := pl.RunWith(m, pass.Options{Observers: []pass.Observer{d.Observe}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDumpFilesFollowRegexpAndChanges(t *testing.T) {
	dir := runWithDumps(t, "text", "dot")
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// noop does not match the regexp; rewrite runs twice (seq 2 and 3)
	// but changes the module only on its first run.
	want := "m.0000.input.dot m.0000.input.hlo m.0002.rewrite.dot m.0002.rewrite.hlo"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "m.0002.rewrite.hlo"))
	if !strings.Contains(string(text), "abs(p)") {
		t.Fatalf("dump after rewrite:\n%s", text)
	}
	dot, _ := os.ReadFile(filepath.Join(dir, "m.0002.rewrite.dot"))
	for _, s := range []string{"subgraph cluster_0", `label="e"`, "-> ", "abs"} {
		if !strings.Contains(string(dot), s) {
			t.Errorf("DOT lacks %q:\n%s", s, dot)
		}
	}
}

func TestDumpHTMLColumns(t *testing.T) {
	dir := runWithDumps(t, "html")
	page, err := os.ReadFile(filepath.Join(dir, "m.html"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	// Input, the changing run, and the unchanged second run collapsed.
	if n := strings.Count(s, `<div class="col"`) + strings.Count(s, `<div class="col collapsed"`); n != 3 {
		t.Errorf("%d columns, want 3", n)
	}
	if strings.Count(s, `class="col collapsed"`) != 1 {
		t.Error("the unchanged run is not collapsed")
	}
	if !strings.Contains(s, `<div class="l chg">  <span class="v" data-v="n">n</span> = f32[4]{0} abs(<span class="v" data-v="p">p</span>)`) {
		t.Errorf("changed line not highlighted or names not clickable:\n%s", s)
	}
}

// TestDumpHTMLInBrowser renders the page in headless Chromium (Debian's
// chromium package) and checks the screenshot is not blank. Skipped where
// no Chromium is installed.
func TestDumpHTMLInBrowser(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed")
	}
	dir := runWithDumps(t, "html")
	shot := filepath.Join(dir, "page.png")
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,700",
		"--screenshot="+shot, "file://"+filepath.Join(dir, "m.html"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	colors, err := distinctColors(shot)
	if err != nil {
		t.Fatal(err)
	}
	if colors < 8 {
		t.Fatalf("screenshot has %d colours: the page did not render", colors)
	}
}
