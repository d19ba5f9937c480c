package hlo_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// corpusDir is the shared HLO corpus, relative to this package.
const corpusDir = "../../shared/corpus/hlo"

// corpusSkips are corpus modules that legitimately fail verification, by
// file (and #index for files holding several modules), with the reason.
var corpusSkips = map[string]string{
	// XLA's VerifyAsyncComputation requires an async-wrapped computation to
	// hold only parameters and its root; this one unpacks a tuple first.
	// The C++ round-trip test parses it unverified.
	"parser/roundtrip/AsyncStartWithAliasing.hlo": "async computation with a get-tuple-element",
	// The same rule, on a test that says so in its name and is unverified.
	"parser/valid/NontrivialAsyncOpRoundTrip.hlo": "async computation with more than one instruction",
	// transpose(a), dimensions={0,1} of f32[256,512] is written
	// f32[512,256]; the print_indexing tool parses without verifying.
	"xla/tools/print_indexing_test.hlo#0": "invalid transpose shape",
	// An importer test (hlo-translate parses without verifying) with HLO
	// XLA's verifier rejects on purpose: a convolution whose window does
	// not match its kernel, reducers returning arrays or 1-tuples.
	"xla/hlo/translate/hlo_to_mhlo/tests/import.hlo#0": "deliberately unverifiable importer input",
	// A while whose condition and body take two parameters; the C++ test
	// only checks the canonical print of the root, unverified.
	"parser/valid/CanonicalOpWithNested.hlo": "while computations with two parameters",
}

func needCorpus(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("shared corpus not found at %s (%v): clone the project with ../shared beside it to run corpus tests", corpusDir, err)
	}
}

// verifyCorpusModule verifies m, failing t unless key is in corpusSkips,
// in which case it must still fail (so the list stays honest).
func verifyCorpusModule(t *testing.T, key string, m *hlo.Module) {
	t.Helper()
	err := hlo.Verify(m)
	reason, skip := corpusSkips[key]
	switch {
	case skip && err == nil:
		t.Errorf("%s verifies, but corpusSkips says it should not (%s); remove it from the list", key, reason)
	case skip:
		t.Logf("%s fails as expected (%s): %v", key, reason, err)
	case err != nil:
		t.Errorf("%s: %v", key, err)
	}
}

// TestVerifyCorpusModules verifies every module of XLA's real HLO files.
func TestVerifyCorpusModules(t *testing.T) {
	needCorpus(t)
	root := filepath.Join(corpusDir, "xla")
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, path)
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			mods, err := hlotext.ParseFile(string(b), hlotext.Options{File: rel})
			if err != nil {
				// The parser's own corpus test reports this.
				t.Skipf("does not parse: %v", err)
			}
			for i, m := range mods {
				key := rel + "#" + strconv.Itoa(i)
				if _, ok := corpusSkips[rel]; ok {
					key = rel
				}
				verifyCorpusModule(t, key, m)
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type parserCase struct {
	file, kind, name string
	replicas         int64
	note             string
}

func loadParserCases(t *testing.T) []parserCase {
	t.Helper()
	needCorpus(t)
	f, err := os.Open(filepath.Join(corpusDir, "parser/CASES.tsv"))
	if err != nil {
		t.Skipf("parser cases not found: %v", err)
	}
	defer f.Close()
	var cases []parserCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		for len(cols) < 6 {
			cols = append(cols, "")
		}
		n, _ := strconv.ParseInt(cols[3], 10, 64)
		cases = append(cases, parserCase{cols[0], cols[1], cols[2], n, cols[5]})
	}
	return cases
}

// TestVerifyParserCases verifies XLA's parser test inputs that must be
// valid HLO: round-trip cases, sugar inputs and the other valid inputs.
func TestVerifyParserCases(t *testing.T) {
	for _, c := range loadParserCases(t) {
		switch c.kind {
		case "parser-roundtrip", "parser-roundtrip-short", "parser-valid", "parser-nonroundtrip":
		default:
			continue
		}
		if strings.HasSuffix(c.file, ".expected.hlo") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(corpusDir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			m, err := hlotext.Parse(string(b), hlotext.Options{File: c.file, ReplicaCount: c.replicas})
			if err != nil {
				t.Skipf("does not parse: %v", err)
			}
			verifyCorpusModule(t, c.file, m)
		})
	}
}

// TestVerifyParserErrorsThroughVerifier checks the error cases whose C++
// test goes through the verifier (ParseAndReturnVerifiedModule): parsing
// and verifying together must reject them.
func TestVerifyParserErrorsThroughVerifier(t *testing.T) {
	n := 0
	for _, c := range loadParserCases(t) {
		if c.kind != "parser-error" || !strings.Contains(c.note, "ParseAndReturnVerifiedModule") {
			continue
		}
		n++
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(corpusDir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			m, err := hlotext.Parse(string(b), hlotext.Options{File: c.file, ReplicaCount: c.replicas})
			if err == nil {
				err = hlo.Verify(m)
			}
			if err == nil {
				t.Fatalf("%s parses and verifies, but XLA rejects it", c.file)
			}
			if want, rerr := os.ReadFile(filepath.Join(corpusDir, strings.TrimSuffix(c.file, ".hlo")+".error.txt")); rerr == nil &&
				!strings.Contains(err.Error(), string(want)) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		})
	}
	if n != 2 {
		t.Errorf("found %d error cases that go through the verifier, want the 2 CASES.tsv lists", n)
	}
}

// TestInferParserCases checks the shapes XLA's parser tests expect it to
// infer for roots written without a shape.
func TestInferParserCases(t *testing.T) {
	needCorpus(t)
	for name, want := range map[string]string{
		"InferUnaryShape":              "f32[2,10]{1,0}",
		"InferBinaryShape":             "f32[2,10]{1,0}",
		"InferTernaryShape":            "s32[]",
		"InferDotShape":                "f32[2]{0}",
		"InferTupleShape":              "s32[2,3]{1,0}",
		"InferShapeMixedExplicitShape": "f32[]",
	} {
		t.Run(name, func(t *testing.T) {
			file := "parser/valid/" + name + ".hlo"
			b, err := os.ReadFile(filepath.Join(corpusDir, file))
			if err != nil {
				t.Skipf("not in the corpus: %v", err)
			}
			m, err := hlotext.Parse(string(b), hlotext.Options{File: file})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := m.Entry.Root.Shape.String(); got != want {
				t.Errorf("root shape %s, want %s", got, want)
			}
		})
	}
}

// TestVerifyConformanceModules verifies the modules of the numerical
// conformance cases: HLO written for XLA's semantics by people other than
// this verifier's author.
func TestVerifyConformanceModules(t *testing.T) {
	root := "../../shared/conformance"
	if _, err := os.Stat(root); err != nil {
		t.Skipf("shared conformance cases not found at %s (%v)", root, err)
	}
	n := 0
	for _, dir := range []string{"cases", "xla-tests"} {
		err := filepath.Walk(filepath.Join(root, dir), func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || filepath.Ext(path) != ".json" {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var c struct {
				HLO string `json:"hlo"`
			}
			if err := json.Unmarshal(b, &c); err != nil || c.HLO == "" {
				t.Errorf("%s: no hlo module (%v)", path, err)
				return nil
			}
			m, err := hlotext.Parse(c.HLO, hlotext.Options{File: path})
			if err != nil {
				t.Logf("%s does not parse: %v", path, err)
				return nil
			}
			n++
			if err := hlo.Verify(m); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Skip("no conformance modules found")
	}
}

// TestVerifyRejectsMutations shows that the verifier checks every result
// shape: in the conformance modules, growing the first dimension or
// changing the element type of any instruction's result must be rejected,
// except for ops whose result shape is free by definition.
func TestVerifyRejectsMutations(t *testing.T) {
	dir := "../../shared/conformance/cases"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared conformance cases not found at %s (%v)", dir, err)
	}
	// Their written shape is the definition (or an unmapped broadcast
	// dimension may take any size).
	free := map[hlo.Opcode]bool{
		hlo.OpParameter: true, hlo.OpConstant: true, hlo.OpBroadcast: true, hlo.OpIota: true, hlo.OpRng: true,
		hlo.OpBitcast: true, hlo.OpCustomCall: true, hlo.OpRngBitGenerator: true, hlo.OpInfeed: true, hlo.OpRecv: true,
	}
	mutations := []func(s *hlo.Shape) bool{
		func(s *hlo.Shape) bool {
			if s.Rank() == 0 {
				return false
			}
			s.Dims[0]++
			return true
		},
		func(s *hlo.Shape) bool {
			switch {
			case s.DType == hlo.S32:
				s.DType = hlo.U32
			case s.DType.IsFloat():
				s.DType = hlo.S32
			default:
				s.DType = hlo.F32
			}
			return true
		},
	}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var c struct {
			HLO string `json:"hlo"`
		}
		if json.Unmarshal(b, &c) != nil {
			return nil
		}
		m, err := hlotext.Parse(c.HLO, hlotext.Options{})
		if err != nil {
			return nil
		}
		for _, comp := range m.Computations {
			for _, in := range comp.Instructions {
				if free[in.Opcode] || !in.Shape.IsArray() {
					continue
				}
				for i, mutate := range mutations {
					orig := in.Shape
					in.Shape = orig.Clone()
					if mutate(&in.Shape) && hlo.Verify(m) == nil {
						t.Errorf("%s: %s %s changed from %s to %s (mutation %d) still verifies", path, in.Opcode, in.Name, orig.HumanString(), in.Shape.HumanString(), i)
					}
					in.Shape = orig
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
