package hlobin_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlobin"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/hlo/randlit"
)

// corpus is every module of ../shared/corpus/hlo that parses, by file,
// with its elided constants given values (an elided literal has none to
// store).
func corpus(t testing.TB) map[string]*hlo.Module {
	root := "../../../shared/corpus/hlo"
	if _, err := os.Stat(root); err != nil {
		t.Skip("../shared is absent")
	}
	out := map[string]*hlo.Module{}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".hlo") && !strings.HasSuffix(path, ".txt") {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		m, err := hlotext.Parse(string(text), hlotext.Options{})
		if err != nil {
			return nil // error cases of the parser corpus
		}
		if fillSmall(m) {
			out[path] = m
		}
		return nil
	})
	if len(out) < 100 {
		t.Fatalf("only %d corpus modules parse", len(out))
	}
	return out
}

// fillSmall gives the elided constants values, unless one is too large
// to be worth it here.
func fillSmall(m *hlo.Module) bool {
	rng := rand.New(randlit.Source(1))
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode != hlo.OpConstant || in.Literal == nil || !in.Literal.IsElided() {
				continue
			}
			if n, err := in.Shape.ByteSize(); err != nil || n > 1<<24 {
				return false
			}
			in.Literal = randlit.RandomLiteral(in.Shape, rng)
		}
	}
	return true
}

// TestRoundTripCorpus: every corpus module reads back equal to what was
// written (hlo's Diff: names, shapes, layouts, attributes, literals) and
// prints the same text.
func TestRoundTripCorpus(t *testing.T) {
	for path, m := range corpus(t) {
		b, err := hlobin.Encode(m)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		got, err := hlobin.Decode(b)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if d := m.Diff(got); d != "" {
			t.Errorf("%s: read back differs: %s", path, d)
			continue
		}
		if a, b := hlotext.Print(m, hlotext.PrintOptions{}), hlotext.Print(got, hlotext.PrintOptions{}); a != b {
			t.Errorf("%s: prints differently", path)
		}
	}
}

// TestDecodeRefusesDamage: every truncation and a byte flipped anywhere
// give an error or a module, never a panic; truncations always an error.
func TestDecodeRefusesDamage(t *testing.T) {
	m, err := hlotext.Parse(`HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c = f32[3] constant({1, 2, 3})
  b = f32[2,3] broadcast(c), dimensions={1}
  ROOT a = f32[2,3] add(p, b)
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := hlobin.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := hlobin.Decode(b[:n]); !errors.Is(err, hlobin.ErrCorrupt) {
			t.Fatalf("%d of %d bytes: %v", n, len(b), err)
		}
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x5a
		if got, err := hlobin.Decode(c); err == nil {
			hlo.Verify(got) // must not panic either
		}
	}
}

// TestEncodeRefusesElided: an elided constant has no values to store.
func TestEncodeRefusesElided(t *testing.T) {
	m, err := hlotext.Parse("HloModule m\nENTRY e {\n  ROOT c = f32[4] constant({...})\n}", hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hlobin.Encode(m); err == nil || !strings.Contains(err.Error(), "elided") {
		t.Errorf("elided constant: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, text := range []string{
		"HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}",
		"HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[4,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add\n}",
	} {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			f.Fatal(err)
		}
		b, err := hlobin.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := hlobin.Decode(b); err == nil {
			hlo.Verify(m)
		}
	})
}
