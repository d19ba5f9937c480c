// Package gen writes ahead-of-time packages (`axle aot`): it compiles a
// module with the full compiler, records what compiling decided and the
// machine code the JIT generated, and writes a Go package that runs it
// with package aot, optionally with a command beside it.
package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/axle-ml/axle/aot"
	"github.com/axle-ml/axle/backend/cpu"
	_ "github.com/axle-ml/axle/backend/cpu/compiler" // Compile needs it
	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlobin"
	"github.com/axle-ml/axle/hlo/randlit"
)

// Options say what to write.
type Options struct {
	// Package is the Go package's name (an identifier).
	Package string
	// Dir is the folder the package is written to (made if missing).
	Dir string
	// Main also writes a command running the package, in Dir/cmd/Package.
	Main bool
	// ImportPath is the package's import path, which the command imports;
	// empty: worked out from the go.mod above Dir.
	ImportPath string
	// Seed seeds the values of constants elided as {...} (and the
	// command's random arguments), as `axle run --seed` does (0: 1).
	Seed uint64
	// EmbedLimit is the largest plan embedded in the package (go:embed);
	// a larger one is loaded from its file beside the package at run
	// time (0: 256 MiB).
	EmbedLimit int64
}

// Result says what was written.
type Result struct {
	Files     []string
	PlanBytes int
	Embedded  bool
	Lowering  map[string]int
}

// Generate compiles m (a copy: m is left alone) and writes its package.
func Generate(m *hlo.Module, opts Options) (*Result, error) {
	if err := checkOptions(&opts); err != nil {
		return nil, err
	}
	// A package runs one program on one device: its API has no devices
	// to launch on together, so a module written for several is refused
	// here rather than failing at its first collective in a user's binary.
	if n := max(m.ReplicaCount, 1) * max(m.NumPartitions, 1); n > 1 {
		return nil, fmt.Errorf("aot: %s runs on %d devices (replica_count %d, num_partitions %d); ahead-of-time packages run a single device", m.Name, n, m.ReplicaCount, m.NumPartitions)
	}
	plan, lowering, err := compilePlan(m, opts.Seed)
	if err != nil {
		return nil, err
	}
	data, err := plan.Marshal()
	if err != nil {
		return nil, err
	}
	// What the package will load must load: a module the proto cannot
	// carry, or a plan cpu.Load cannot follow, fails here, not in a
	// user's binary.
	if _, err := aot.Load(data, aot.Options{}); err != nil {
		return nil, fmt.Errorf("aot: the plan does not load back: %w", err)
	}
	return write(plan, data, lowering, opts)
}

func checkOptions(opts *Options) error {
	if !token.IsIdentifier(opts.Package) || token.IsKeyword(opts.Package) || opts.Package == "main" {
		return fmt.Errorf("aot: package name %q is not a Go identifier (or is main)", opts.Package)
	}
	if opts.Dir == "" {
		return errors.New("aot: no output folder")
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.EmbedLimit <= 0 {
		opts.EmbedLimit = 256 << 20
	}
	if opts.Main && opts.ImportPath == "" {
		p, err := importPath(opts.Dir)
		if err != nil {
			return err
		}
		opts.ImportPath = p
	}
	return nil
}

// compilePlan fills m's elided constants as `axle run` does, compiles it
// recording the plan and the generated code, and returns the plan.
func compilePlan(m *hlo.Module, seed uint64) (*aot.Plan, map[string]int, error) {
	if m.Entry == nil {
		return nil, nil, fmt.Errorf("aot: module %s has no entry computation", m.Name)
	}
	var params []string // as written: cloning may rename them
	for _, p := range m.Entry.Params {
		params = append(params, p.Name)
	}
	m = m.Clone()
	src := randlit.Source(seed)
	randlit.FillElidedConstants(m, rand.New(src))
	state, err := src.MarshalBinary()
	if err != nil {
		return nil, nil, err
	}
	// The book keeps the code of every program compiled while recording:
	// the compile's own, the ones it found in the book included.
	was := jit.Record(true)
	x, err := cpu.Compile(m, cpu.Options{RecordPlan: true})
	jit.Record(was)
	book := jit.Recorded()
	if err != nil {
		return nil, nil, err
	}
	if x.Plan() == nil {
		return nil, nil, fmt.Errorf("aot: module %s compiled to the evaluator, not to kernels", m.Name)
	}
	// A package links no evaluator: what only the evaluator runs cannot
	// be in one (it would fail at load, in the user's binary).
	if len(x.Fallbacks) > 0 {
		return nil, nil, fmt.Errorf("aot: module %s has instructions no kernel takes, which run on the evaluator an ahead-of-time package does not link: %s",
			m.Name, strings.Join(x.Fallbacks, "; "))
	}
	mod, err := hlobin.Encode(x.Module())
	if err != nil {
		return nil, nil, fmt.Errorf("aot: writing the fused module: %w", err)
	}
	vendor, family, model := kernels.CPUModel()
	h := aot.Header{Module: m.Name, Entry: m.Entry.Name, Params: params, Plan: *x.Plan(), ArgSource: state, Seed: seed,
		Host:     fmt.Sprintf("%s family %d model %d; kernels %s", vendor, family, model, kernels.Kernels()),
		Features: book.Features()}
	return &aot.Plan{Header: h, Module: mod, Code: book.Marshal()}, x.Lowering, nil
}

// write writes the plan and the package's Go files.
func write(plan *aot.Plan, data []byte, lowering map[string]int, opts Options) (*Result, error) {
	r := &Result{PlanBytes: len(data), Embedded: int64(len(data)) <= opts.EmbedLimit, Lowering: lowering}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	planFile := opts.Package + ".axleplan"
	src, err := packageSource(plan, opts.Package, planFile, r.Embedded)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		filepath.Join(opts.Dir, planFile):           data,
		filepath.Join(opts.Dir, opts.Package+".go"): src,
	}
	if opts.Main {
		main, err := mainSource(opts.Package, opts.ImportPath, plan.Header.Module, r.Embedded)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(opts.Dir, "cmd", opts.Package)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		files[filepath.Join(dir, "main.go")] = main
	}
	for path, b := range files {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, err
		}
		r.Files = append(r.Files, path)
	}
	return r, nil
}

// gofmt formats generated source, which must parse.
func gofmt(b *bytes.Buffer) ([]byte, error) {
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("aot: generated code does not parse (a bug): %w\n%s", err, b.String())
	}
	return out, nil
}

// importPath is dir's import path from the go.mod above it.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			mod := modulePath(data)
			if mod == "" {
				return "", fmt.Errorf("aot: %s has no module line", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return mod, nil
			}
			return mod + "/" + filepath.ToSlash(rel), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("aot: %s is in no Go module (no go.mod above it): give the import path", dir)
		}
	}
}

// modulePath is go.mod's module path.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
