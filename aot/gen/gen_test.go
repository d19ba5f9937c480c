package gen_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/axle-ml/axle/aot/gen"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/hlo/randlit"
	"github.com/axle-ml/axle/load"
	"github.com/axle-ml/axle/npy"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
)

// repoRoot is the module root (this package is aot/gen).
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// tempModule makes a Go module in a temporary folder that requires this
// repository's module from its folder, with its go.sum.
func tempModule(t *testing.T) string {
	root := repoRoot(t)
	dir := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.Replace(string(gomod), "module github.com/axle-ml/axle", "module example.com/aotuser", 1)
	mod += "\nrequire github.com/axle-ml/axle v0.0.0\n\nreplace github.com/axle-ml/axle => " + root + "\n"
	write(t, filepath.Join(dir, "go.mod"), []byte(mod))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.sum"), sum)
	return dir
}

func write(t *testing.T, path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCmd runs the go command in dir with extra environment.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// generate writes the AOT package (with its command) of the module file
// path as package pkg of module dir.
func generate(t *testing.T, dir, pkg, path string) *gen.Result {
	t.Helper()
	mods, err := load.File(path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := gen.Generate(mods[0], gen.Options{Package: pkg, Dir: filepath.Join(dir, pkg), Main: true})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// run runs a command and returns its stdout.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, out.String(), errb.String())
	}
	return out.String()
}

var (
	resultLine = regexp.MustCompile(`(?m)^result .*$`)
	lowered    = regexp.MustCompile(`(?m)^lowered .*$`)
)

// sameArrays: the two .npz files hold the same arrays, bit for bit.
func sameArrays(t *testing.T, pkg, got, want string) {
	g, err1 := npy.ReadNPZ(got)
	w, err2 := npy.ReadNPZ(want)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: %v %v", pkg, err1, err2)
	}
	if len(g) != len(w) {
		t.Fatalf("%s: %d outputs, axle run %d", pkg, len(g), len(w))
	}
	for i := range w {
		if !g[i].Lit.Shape().Equal(w[i].Lit.Shape()) || !bytes.Equal(g[i].Lit.RawBytes(), w[i].Lit.RawBytes()) {
			t.Errorf("%s: output %d differs from axle run's in its bits", pkg, i)
		}
	}
}

// results are the `result SHAPE checksum X` lines of a run's output.
func results(out string) []string { return resultLine.FindAllString(out, -1) }

// workloads are the module files the AOT packages must match `axle run`
// on: every ../shared/bench workload and XLA's CPU benchmark models.
func workloads(t *testing.T) map[string]string {
	shared := filepath.Join(repoRoot(t), "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		t.Skip("../shared is absent: no workloads to compile")
	}
	out := map[string]string{}
	for _, pattern := range []string{"bench/*.hlo", "corpus/hlo/xla/backends/cpu/benchmarks/hlo/*.hlo"} {
		files, _ := filepath.Glob(filepath.Join(shared, pattern))
		for _, f := range files {
			name := regexp.MustCompile(`[^a-z0-9]`).ReplaceAllString(strings.TrimSuffix(filepath.Base(f), ".hlo"), "")
			out[name] = f
		}
	}
	if len(out) == 0 {
		t.Fatal("no workloads found in ../shared")
	}
	return out
}

// TestAOTMatchesAxleRun generates, builds and runs the AOT package of
// every workload in a module of its own, and checks that its command
// prints the results `axle run --backend cpu` prints, bit for bit (the
// checksums to nine digits, and each result's first elements through
// --save-outputs would differ there first); then that the mlp_b256
// command links no compiler and is at most half axle's size, that the
// packages build for other platforms, and that under purego the results
// hold within the kernels' tolerance.
func TestAOTMatchesAxleRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds packages and binaries")
	}
	dir := tempModule(t)
	files := workloads(t)
	for pkg, path := range files {
		generate(t, dir, pkg, path)
	}
	bin := filepath.Join(dir, "bin")
	goCmd(t, dir, nil, "build", "-o", bin+string(filepath.Separator), "./...")
	axle := filepath.Join(bin, "axle")
	goCmd(t, repoRoot(t), nil, "build", "-o", axle, "./cmd/axle")
	outs := t.TempDir()
	for pkg, path := range files {
		wantNPZ, gotNPZ := filepath.Join(outs, pkg+"-axle.npz"), filepath.Join(outs, pkg+"-aot.npz")
		wantOut := run(t, nil, axle, "run", "--backend", "cpu", "--save-outputs", wantNPZ, path)
		gotOut := run(t, nil, filepath.Join(bin, pkg), "--save-outputs", gotNPZ)
		want, got := results(wantOut), results(gotOut)
		if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the AOT command prints\n%s\naxle run prints\n%s", pkg, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		sameArrays(t, pkg, gotNPZ, wantNPZ)
		// The same kernels: generated code came from the plan's book
		// (the binary has no generator), so jit-fusion counts match.
		if w, g := lowered.FindString(wantOut), lowered.FindString(gotOut); !strings.Contains(wantOut, "engine: evaluator") && g != w {
			t.Errorf("%s: the AOT command %s; axle run %s", pkg, g, w)
		}
	}
	if _, ok := files["mlpb256"]; ok {
		checkLinks(t, filepath.Join(bin, "mlpb256"), axle)
		checkPlatforms(t, dir, "mlpb256")
		checkPurego(t, dir, "mlpb256", filepath.Join(outs, "mlpb256-aot.npz"))
	}
}

// forbidden are the symbols an AOT binary must not link: the parser,
// the passes, the pass runner, the evaluator, the compiler front, the
// protobuf runtime (the plan is hlobin), and the JIT's code generator.
var forbidden = regexp.MustCompile(`github\.com/axle-ml/axle/(hlo/hlotext|opt|pass|eval|backend/cpu/compiler|hlo/hloproto)\.|` +
	`google\.golang\.org/protobuf/|` +
	`backend/cpu/jit\.(generate|newGen|InstallGenerator|allocate)($|\.)|backend/cpu/jit\.\(\*(gen|allocator|asm|vasm)\)`)

// checkLinks: no forbidden symbol in the binary, and it is at most half
// axle's size.
func checkLinks(t *testing.T, bin, axle string) {
	out := run(t, nil, "go", "tool", "nm", bin)
	bad := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && forbidden.MatchString(f[len(f)-1]) {
			if bad++; bad <= 10 {
				t.Errorf("%s links %s", filepath.Base(bin), f[len(f)-1])
			}
		}
	}
	if !strings.Contains(out, "github.com/axle-ml/axle/backend/cpu.Load") {
		t.Errorf("%s: no cpu.Load symbol: the check looks at the wrong binary", filepath.Base(bin))
	}
	a, err1 := os.Stat(bin)
	b, err2 := os.Stat(axle)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	t.Logf("%s: %d bytes; axle: %d bytes (%.2f)", filepath.Base(bin), a.Size(), b.Size(), float64(a.Size())/float64(b.Size()))
	if 2*a.Size() > b.Size() {
		t.Errorf("%s is %d bytes, more than half of axle's %d", filepath.Base(bin), a.Size(), b.Size())
	}
}

// checkPlatforms builds the package and its command for other systems.
func checkPlatforms(t *testing.T, dir, pkg string) {
	for _, p := range [][2]string{{"linux", "arm64"}, {"darwin", "arm64"}, {"js", "wasm"}} {
		goCmd(t, dir, []string{"CGO_ENABLED=0", "GOOS=" + p[0], "GOARCH=" + p[1]}, "build", "-o", os.DevNull, "./"+pkg+"/...")
	}
}

// checkPurego runs the command built with -tags purego (no assembly, no
// generated code) and compares its outputs with the assembly build's
// element by element within package aot's documented tolerance: the
// Go twins of the GEMM accumulate in another order than the AVX-512
// kernels (here: 2.7e-6 at most on mlp_b256's softmax outputs).
func checkPurego(t *testing.T, dir, pkg, want string) {
	if runtime.GOARCH != "amd64" {
		return // purego is what other architectures run anyway
	}
	bin := filepath.Join(t.TempDir(), pkg)
	goCmd(t, dir, nil, "build", "-tags", "purego", "-o", bin, "./"+pkg+"/cmd/"+pkg)
	got := filepath.Join(t.TempDir(), "purego.npz")
	run(t, nil, bin, "--save-outputs", got)
	g, err1 := npy.ReadNPZ(got)
	w, err2 := npy.ReadNPZ(want)
	if err1 != nil || err2 != nil || len(g) != len(w) {
		t.Fatalf("purego outputs: %v %v (%d, want %d)", err1, err2, len(g), len(w))
	}
	for i := range w {
		gs, ws := g[i].Lit.Data().([]float32), w[i].Lit.Data().([]float32)
		for j := range ws {
			if d := math.Abs(float64(gs[j] - ws[j])); d > 1e-5+1e-5*math.Abs(float64(ws[j])) {
				t.Fatalf("purego: output %d element %d = %g, assembly build %g", i, j, gs[j], ws[j])
			}
		}
	}
}

// TestPlanBesideBinary: a plan over the embed limit ships beside the
// binary (the command finds it there, or where AXLE_PLAN says) and
// gives the embedded plan's results bit for bit; without it, the command
// fails naming the file.
func TestPlanBesideBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := tempModule(t)
	src := filepath.Join(repoRoot(t), "examples", "jax", "mlp.mlir")
	mods, err := load.File(src, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pkg   string
		limit int64
	}{{"embedded", 0}, {"beside", 1}} {
		r, err := gen.Generate(mods[0], gen.Options{Package: c.pkg, Dir: filepath.Join(dir, c.pkg), Main: true, EmbedLimit: c.limit})
		if err != nil || r.Embedded != (c.limit == 0) {
			t.Fatalf("%s: %v (embedded %v)", c.pkg, err, r != nil && r.Embedded)
		}
	}
	bin := filepath.Join(dir, "bin")
	goCmd(t, dir, nil, "build", "-o", bin+string(filepath.Separator), "./...")
	cmd := exec.Command(filepath.Join(bin, "beside"))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "beside.axleplan") {
		t.Errorf("no plan beside the binary: %v\n%s", err, out)
	}
	plan := filepath.Join(dir, "beside", "beside.axleplan")
	want := results(run(t, nil, filepath.Join(bin, "embedded")))
	if got := results(run(t, []string{"AXLE_PLAN=" + plan}, filepath.Join(bin, "beside"))); strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) == 0 {
		t.Errorf("AXLE_PLAN: %v, embedded %v", got, want)
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(bin, "beside.axleplan"), data)
	if got := results(run(t, nil, filepath.Join(bin, "beside"))); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("beside the binary: %v, embedded %v", got, want)
	}
}

// TestONNXModel: an ONNX model whose every node compiles (the quantized
// dense layer of examples/onnx/qlinear: DynamicQuantizeLinear,
// MatMulInteger, the scales) becomes one module (graph.Module), and its
// AOT command gives, on the example's inputs, the bits the graph
// executor gives (what `axle run model.onnx` runs).
func TestONNXModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	ex := filepath.Join(repoRoot(t), "examples", "onnx", "qlinear")
	model, err := onnx.Load(filepath.Join(ex, "quant.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	arrays, err := npy.ReadNPZ(filepath.Join(ex, "in.npz"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]*onnx.Value{}
	ordered := make([]*onnx.Value, len(model.Graph.Inputs))
	for i, vi := range model.Graph.Inputs {
		for _, a := range arrays {
			if a.Name == vi.Name || a.Name == fmt.Sprintf("arr_%d", i) {
				inputs[vi.Name], ordered[i] = onnx.LiteralValue(a.Lit), onnx.LiteralValue(a.Lit)
			}
		}
	}
	m, err := graph.Module(model, inputs)
	if err != nil {
		t.Fatal(err)
	}
	dir := tempModule(t)
	if _, err := gen.Generate(m, gen.Options{Package: "qlinear", Dir: filepath.Join(dir, "qlinear"), Main: true}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	goCmd(t, dir, nil, "build", "-o", bin+string(filepath.Separator), "./...")
	got := filepath.Join(t.TempDir(), "aot.npz")
	run(t, nil, filepath.Join(bin, "qlinear"), "--inputs", filepath.Join(ex, "in.npz"), "--save-outputs", got)
	sess, err := graph.New(model, graph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	want, err := sess.RunOrdered(context.Background(), ordered)
	if err != nil {
		t.Fatal(err)
	}
	g, err := npy.ReadNPZ(got)
	if err != nil || len(g) != len(want) {
		t.Fatalf("%v: %d outputs, want %d", err, len(g), len(want))
	}
	for i, w := range want {
		if !bytes.Equal(g[i].Lit.RawBytes(), w.Tensor.Lit.RawBytes()) {
			t.Errorf("output %d (%s) differs from the graph executor's", i, model.Graph.Outputs[i].Name)
		}
	}
}

// TestTupleEntry: an entry taking a tuple gets no typed method (the
// package still builds, and says to use Program().Run), and its command
// draws the tuple argument axle run draws: the result is the evaluator's
// on the same seeded values.
func TestTupleEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	const text = `HloModule tup
ENTRY e {
  p = (f32[2], s32[3]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  ROOT n = f32[2] negate(a)
}`
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := tempModule(t)
	if _, err := gen.Generate(m, gen.Options{Package: "tup", Dir: filepath.Join(dir, "tup"), Main: true}); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "tup", "tup.go"))
	if err != nil || !strings.Contains(string(src), "Program().Run") {
		t.Errorf("no pointer to Program().Run: %v\n%s", err, src)
	}
	bin := filepath.Join(dir, "bin")
	goCmd(t, dir, nil, "build", "-o", bin+string(filepath.Separator), "./...")
	got := filepath.Join(t.TempDir(), "out.npz")
	run(t, nil, filepath.Join(bin, "tup"), "--save-outputs", got)
	want, err := eval.Run(m, randlit.RandomArguments(m.Clone(), 1)...)
	if err != nil {
		t.Fatal(err)
	}
	g, err := npy.ReadNPZ(got)
	if err != nil || len(g) != 1 || !bytes.Equal(g[0].Lit.RawBytes(), want.RawBytes()) {
		t.Errorf("result %v (%v), evaluator %v", g, err, want)
	}
}
