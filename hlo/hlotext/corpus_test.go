package hlotext

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// corpusDir is the shared HLO corpus, relative to this package.
const corpusDir = "../../../shared/corpus/hlo"

type corpusCase struct {
	file, kind, name string
	replicas         int64
	check, note      string
}

func loadCases(t testing.TB) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "parser/CASES.tsv"))
	if err != nil {
		t.Skipf("shared corpus not found (%v): clone the project with ../shared beside it to run corpus tests", err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		for len(cols) < 6 {
			cols = append(cols, "")
		}
		n, _ := strconv.ParseInt(cols[3], 10, 64)
		cases = append(cases, corpusCase{cols[0], cols[1], cols[2], n, cols[4], cols[5]})
	}
	return cases
}

func readCorpus(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRoundTrip checks XLA's contract for its parser round-trip cases:
// parse, print, re-parse, print again: the result equals the file byte
// for byte (default form, or the short form for roundtrip_short).
func TestRoundTrip(t *testing.T) {
	for _, c := range loadCases(t) {
		if c.kind != "parser-roundtrip" && c.kind != "parser-roundtrip-short" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			text := readCorpus(t, c.file)
			opts := Default
			if c.kind == "parser-roundtrip-short" {
				opts = Short
			}
			m, err := Parse(text, Options{File: c.file, ReplicaCount: c.replicas})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			m2, err := Parse(Print(m, Default), Options{File: c.file + " (printed)", ReplicaCount: c.replicas})
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, Print(m, Default))
			}
			if d := m.Diff(m2); d != "" {
				t.Errorf("parse(print(m)) differs from m: %s", d)
			}
			if got := Print(m2, opts); got != text {
				t.Errorf("printed form differs\n--- got\n%s\n--- want\n%s", got, text)
			}
		})
	}
}

// TestNonRoundTrip checks sugar inputs print as XLA prints them.
func TestNonRoundTrip(t *testing.T) {
	for _, c := range loadCases(t) {
		if c.kind != "parser-nonroundtrip" || strings.HasSuffix(c.file, ".expected.hlo") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse(readCorpus(t, c.file), Options{File: c.file})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			want := strings.TrimSpace(readCorpus(t, strings.TrimSuffix(c.file, ".hlo")+".expected.hlo"))
			if got := strings.TrimSpace(Print(m, Short)); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestValid checks that XLA's other parser inputs parse.
func TestValid(t *testing.T) {
	for _, c := range loadCases(t) {
		if c.kind != "parser-valid" || strings.HasSuffix(c.file, ".expected.hlo") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			text := readCorpus(t, c.file)
			m, err := Parse(text, Options{File: c.file, ReplicaCount: c.replicas})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			// The exact print expectations the C++ tests make.
			switch {
			case strings.Contains(c.note, "ToString(HloPrintOptions()) must reproduce the input exactly"):
				if got := Print(m, PrintOptions{ElideLargeConstants: true}); got != text {
					t.Errorf("default ToString differs\n--- got\n%s\n--- want\n%s", got, text)
				}
			case strings.Contains(c.note, "root instruction ToString(HloPrintOptions::Canonical()) must reproduce the input exactly"):
				if got := PrintInstruction(m.Entry.Root, CanonicalForm); got != text {
					t.Errorf("canonical form differs\n--- got\n%s\n--- want\n%s", got, text)
				}
			case strings.HasPrefix(c.note, "expected ToString(HloPrintOptions::Canonical()"):
				want := readCorpus(t, strings.TrimSuffix(c.file, ".hlo")+".expected.hlo")
				if got := Print(m, CanonicalForm); got != want {
					t.Errorf("canonical form differs\n--- got\n%s\n--- want\n%s", got, want)
				}
			}
		})
	}
}

// TestErrors checks that XLA's error inputs are rejected with a position
// and, where XLA's message is known, the same message.
func TestErrors(t *testing.T) {
	for _, c := range loadCases(t) {
		if c.kind != "parser-error" || strings.HasSuffix(c.file, ".error.txt") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if want, ok := lenientCases[c.name]; ok {
				var warns []string
				_, err := ParseFile(readCorpus(t, c.file), Options{File: c.file, ReplicaCount: c.replicas, Warn: func(w Warning) { warns = append(warns, w.String()) }})
				if err != nil || len(warns) != 1 || !strings.Contains(warns[0], want) {
					t.Fatalf("want acceptance with one warning containing %q, got error %v, warnings %q", want, err, warns)
				}
				return
			}
			_, err := ParseFile(readCorpus(t, c.file), Options{File: c.file, ReplicaCount: c.replicas})
			if err == nil {
				t.Fatalf("accepted invalid input")
			}
			if !regexp.MustCompile(`^` + regexp.QuoteMeta(c.file) + `:\d+:\d+: error: `).MatchString(err.Error()) {
				t.Errorf("error lacks FILE:LINE:COL: %v", err)
			}
			msgFile := filepath.Join(corpusDir, strings.TrimSuffix(c.file, ".hlo")+".error.txt")
			if want, rerr := os.ReadFile(msgFile); rerr == nil && !strings.Contains(err.Error(), xlaMessage(string(want))) {
				t.Errorf("error %q does not contain XLA's message %q", err, want)
			}
		})
	}
}

// lenientCases are XLA error inputs Axle accepts on purpose, because real
// producers print them and their meaning is unambiguous (issue 37): each
// must parse with one warning containing the text given.
var lenientCases = map[string]string{
	// Older XLA versions print the proto's zero value; it meant the
	// original API.
	"CustomCallWithUnspecifiedVersion": ".hlo:5:43: warning: api_version=API_VERSION_UNSPECIFIED read as the original API",
}

// xlaMessage turns XLA's "was parsing L:C: error: msg" (its position
// prefix) into the "L:C: error: msg" our FILE:L:C: error: msg contains.
func xlaMessage(want string) string {
	return strings.TrimPrefix(want, "was parsing ")
}

// TestModules parses every real module file in the corpus.
func TestModules(t *testing.T) {
	root := filepath.Join(corpusDir, "xla")
	if _, err := os.Stat(root); err != nil {
		t.Skip("shared corpus not found")
	}
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, path)
		t.Run(rel, func(t *testing.T) {
			b, _ := os.ReadFile(path)
			mods, err := ParseFile(string(b), Options{File: rel})
			if err != nil {
				t.Fatalf("%v", err)
			}
			for _, m := range mods {
				// Our printer's output must parse back to the same text.
				p1 := Print(m, Default)
				m2, err := Parse(p1, Options{File: rel + " (printed)"})
				if err != nil {
					t.Fatalf("re-parse: %v", err)
				}
				if p2 := Print(m2, Default); p2 != p1 {
					t.Errorf("print is not a fixed point")
				}
				// parse(print(m)) == m, structurally. Not where an async
				// computation prints as sugar: XLA's text then loses its
				// name, and the parser names it async_wrapped.N.
				if d := m.Diff(m2); d != "" && len(hiddenComputations(m)) == 0 {
					t.Errorf("parse(print(m)) differs from m: %s", d)
				}
			}
		})
		return nil
	})
}
