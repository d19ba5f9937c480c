package axle_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ADDING_AN_OP.md is checked where it can be: the coverage of each table
// (evaluator, builder, gradients, random modules) by the tests it names,
// and here that every path and Go name it writes in backticks exists, so
// that the list cannot silently fall behind a move or a rename.

var (
	backtickSpan = regexp.MustCompile("`([^`]+)`")
	goName       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
	goWord       = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// docPath reports whether a backtick span names a file or directory: no
// spaces, and a slash or a file extension the repository uses.
func docPath(s string) bool {
	if strings.ContainsAny(s, " ()") {
		return false
	}
	return strings.Contains(s, "/") || strings.HasSuffix(s, ".go") || strings.HasSuffix(s, ".md")
}

// goWords holds the words of the .go files of one directory, or of the
// whole repository under the key ".../".
type goWords map[string]map[string]bool

func (w goWords) dir(t *testing.T, dir string) map[string]bool {
	if words, ok := w[dir]; ok {
		return words
	}
	words := map[string]bool{}
	add := func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, word := range goWord.FindAll(b, -1) {
			words[string(word)] = true
		}
	}
	if dir == ".../" {
		err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") {
				add(path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			add(f)
		}
	}
	w[dir] = words
	return words
}

type docUnit struct {
	line int // 0-based index of its first line
	text string
}

// docUnits splits markdown into table rows and paragraphs (a list item
// with its indented continuation lines): a name and its file may sit on
// two lines of one item.
func docUnits(text string) []docUnit {
	var units []docUnit
	for n, line := range strings.Split(text, "\n") {
		cont := strings.HasPrefix(line, " ") && len(units) > 0 && !strings.HasPrefix(units[len(units)-1].text, "|")
		if cont {
			units[len(units)-1].text += line
			continue
		}
		units = append(units, docUnit{n, line})
	}
	return units
}

// TestAddingAnOpNamesExist: every path ADDING_AN_OP.md writes in
// backticks exists (globs match something; paths under ../shared are
// skipped when it is absent; a path marked "(new)" may be absent, and
// must lose the mark once it exists), and every Go name it writes in
// backticks occurs in the .go files of the directories its table row or
// paragraph names,
// or anywhere in the repository in a paragraph that names none.
func TestAddingAnOpNamesExist(t *testing.T) {
	text, err := os.ReadFile("ADDING_AN_OP.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sharedErr := os.Stat("../shared")
	words := goWords{}
	for _, u := range docUnits(string(text)) {
		n, line := u.line, u.text
		var dirs, names []string
		pending := false
		for _, m := range backtickSpan.FindAllStringSubmatchIndex(line, -1) {
			span := line[m[2]:m[3]]
			marked := strings.HasPrefix(line[m[1]:], " (new)")
			if !docPath(span) {
				if goName.MatchString(span) {
					names = append(names, span)
				}
				continue
			}
			if strings.HasPrefix(span, "../shared") && sharedErr != nil {
				continue
			}
			matches, err := filepath.Glob(strings.TrimSuffix(span, "/"))
			if err != nil {
				t.Fatalf("ADDING_AN_OP.md:%d: %s: %v", n+1, span, err)
			}
			switch {
			case marked && len(matches) == 0:
				pending = true
			case marked:
				t.Errorf("ADDING_AN_OP.md:%d: %s exists now: drop its (new) mark", n+1, span)
			case len(matches) == 0:
				t.Errorf("ADDING_AN_OP.md:%d: %s does not exist: update the list", n+1, span)
			}
			for _, p := range matches {
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					dirs = append(dirs, p)
				} else {
					dirs = append(dirs, filepath.Dir(p))
				}
			}
		}
		slices.Sort(dirs)
		dirs = slices.Compact(dirs)
		if len(dirs) == 0 && !pending {
			dirs = []string{".../"}
		}
		for _, name := range names {
			word := name[strings.LastIndex(name, ".")+1:]
			found := false
			for _, d := range dirs {
				if words.dir(t, d)[word] {
					found = true
					break
				}
			}
			if !found && !pending {
				t.Errorf("ADDING_AN_OP.md:%d: %s is not in the Go files of %s: update the list", n+1, name, strings.Join(dirs, ", "))
			}
		}
	}
}
