// Package onnxtest runs ONNX backend-test folders: model.onnx beside
// test_data_set_*/input_N.pb and output_N.pb (the layout of ONNX's
// backend tests and of ../shared/corpus/onnx and onnx-models). Every data
// set of a folder runs on one session, so a model compiles once per input
// signature. Outputs compare as ONNX's runner does: same count, shape and
// element type; strings exact; otherwise |got-want| <= atol + rtol*|want|
// (rtol 1e-3, atol 1e-7 unless MANIFEST.tsv gives rtol and atol columns),
// NaN equal to NaN.
package onnxtest

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
)

// Status is a test's outcome.
type Status int

// The outcomes.
const (
	Pass Status = iota
	Fail
	Skip
)

func (s Status) String() string { return [...]string{"PASS", "FAIL", "SKIP"}[s] }

// Result is one test folder's outcome.
type Result struct {
	Name   string
	Dir    string
	Status Status
	Reason string
	// Ops are the op keys the model uses (subgraphs included), with the
	// opset version of their domain; Types the element types of its
	// inputs. Filled when the model loads.
	Ops   map[string]int
	Types []string
}

// Tolerance is the comparison rule's rtol and atol.
type Tolerance struct{ RTol, ATol float64 }

// DefaultTolerance is ONNX's backend runner's.
var DefaultTolerance = Tolerance{RTol: 1e-3, ATol: 1e-7}

// Find lists the test folders under dirs (folders holding model.onnx),
// sorted.
func Find(dirs ...string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, de os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !de.IsDir() && de.Name() == "model.onnx" {
				out = append(out, filepath.Dir(path))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// Manifest reads the rtol/atol columns of the MANIFEST.tsv files found in
// dirs or their parents (test name -> tolerance).
func Manifest(dirs ...string) map[string]Tolerance {
	tol := map[string]Tolerance{}
	seen := map[string]bool{}
	for _, d := range dirs {
		for p := d; ; p = filepath.Dir(p) {
			f := filepath.Join(p, "MANIFEST.tsv")
			if !seen[f] {
				seen[f] = true
				readManifest(f, tol)
			}
			if filepath.Dir(p) == p {
				break
			}
		}
	}
	return tol
}

func readManifest(path string, tol map[string]Tolerance) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var rt, at = -1, -1
	for first := true; sc.Scan(); first = false {
		cols := strings.Split(sc.Text(), "\t")
		if first {
			for i, c := range cols {
				switch c {
				case "rtol":
					rt = i
				case "atol":
					at = i
				}
			}
			if rt < 0 || at < 0 {
				return
			}
			continue
		}
		if len(cols) <= max(rt, at) {
			continue
		}
		r, err1 := strconv.ParseFloat(cols[rt], 64)
		a, err2 := strconv.ParseFloat(cols[at], 64)
		if err1 == nil && err2 == nil {
			tol[cols[0]] = Tolerance{RTol: r, ATol: a}
		}
	}
}

// Run runs one test folder.
func Run(ctx context.Context, dir string, tol Tolerance, opts graph.Options) (res Result) {
	res = Result{Name: filepath.Base(dir), Dir: dir}
	defer func() {
		if r := recover(); r != nil {
			res.Status, res.Reason = Fail, fmt.Sprintf("panic: %v", r)
		}
	}()
	m, err := onnx.Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		res.Status, res.Reason = Fail, "load: "+err.Error()
		return res
	}
	res.Ops, res.Types = usage(m)
	sess, err := graph.New(m, opts)
	if err != nil {
		res.Status, res.Reason = Fail, "load: "+err.Error()
		return res
	}
	defer sess.Close()
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	if len(sets) == 0 {
		res.Status, res.Reason = Skip, "no test_data_set_* folder"
		return res
	}
	for _, set := range sets {
		if err := runSet(ctx, sess, set, tol); err != nil {
			res.Status, res.Reason = Fail, filepath.Base(set)+": "+err.Error()
			return res
		}
	}
	return res
}

func runSet(ctx context.Context, sess *graph.Session, set string, tol Tolerance) error {
	g := sess.Model().Graph
	inputs := map[string]*onnx.Value{}
	for k := 0; ; k++ {
		path := filepath.Join(set, fmt.Sprintf("input_%d.pb", k))
		if _, err := os.Stat(path); err != nil {
			break
		}
		if k >= len(g.Inputs) {
			return fmt.Errorf("input_%d.pb: the graph has %d inputs", k, len(g.Inputs))
		}
		vi := g.Inputs[k]
		v, err := onnx.ReadValueFile(path, vi.Type)
		if err != nil {
			return err
		}
		inputs[vi.Name] = v
	}
	got, err := sess.Run(ctx, inputs)
	if err != nil {
		return err
	}
	for k, vi := range g.Outputs {
		path := filepath.Join(set, fmt.Sprintf("output_%d.pb", k))
		want, err := onnx.ReadValueFile(path, vi.Type)
		if err != nil {
			return err
		}
		if err := Compare(got[vi.Name], want, tol); err != nil {
			return fmt.Errorf("output %d (%q): %w", k, vi.Name, err)
		}
	}
	return nil
}

// Compare applies the backend runner's rule to one value.
func Compare(got, want *onnx.Value, tol Tolerance) error {
	if got == nil {
		return fmt.Errorf("missing")
	}
	if got.Kind != want.Kind {
		return fmt.Errorf("got %v, want %v", got, want)
	}
	switch want.Kind {
	case onnx.KindSequence:
		if len(got.Elems) != len(want.Elems) {
			return fmt.Errorf("sequence of %d, want %d", len(got.Elems), len(want.Elems))
		}
		for i := range want.Elems {
			if err := Compare(got.Elems[i], want.Elems[i], tol); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	case onnx.KindOptional:
		if (got.Elem == nil) != (want.Elem == nil) {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		if want.Elem == nil {
			return nil
		}
		return Compare(got.Elem, want.Elem, tol)
	case onnx.KindMap:
		if got.Keys == nil || want.Keys == nil {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		if err := compareTensor(got.Keys, want.Keys, Tolerance{}); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
		if len(got.Elems) != len(want.Elems) {
			return fmt.Errorf("map of %d values, want %d", len(got.Elems), len(want.Elems))
		}
		for i := range want.Elems {
			if err := Compare(got.Elems[i], want.Elems[i], tol); err != nil {
				return fmt.Errorf("value %d: %w", i, err)
			}
		}
		return nil
	}
	return compareTensor(got.Tensor, want.Tensor, tol)
}

func compareTensor(got, want *onnx.Tensor, tol Tolerance) error {
	if got.ElemType() != want.ElemType() {
		return fmt.Errorf("element type %v, want %v", got.ElemType(), want.ElemType())
	}
	gd, wd := got.Dims(), want.Dims()
	if len(gd) != len(wd) {
		return fmt.Errorf("shape %v, want %v", gd, wd)
	}
	for i := range gd {
		if gd[i] != wd[i] {
			return fmt.Errorf("shape %v, want %v", gd, wd)
		}
	}
	if want.IsString() {
		for i := range want.Strs {
			if got.Strs[i] != want.Strs[i] {
				return fmt.Errorf("element %d: %q, want %q", i, got.Strs[i], want.Strs[i])
			}
		}
		return nil
	}
	gl, wl := got.Lit, want.Lit
	t := wl.DType()
	bad, worst, worstAt := 0, 0.0, -1
	for i := 0; i < wl.Len(); i++ {
		var diff, lim float64
		switch {
		case t.IsComplex():
			g, w := gl.GetComplex128(i), wl.GetComplex128(i)
			if cmplx.IsNaN(g) && cmplx.IsNaN(w) {
				continue
			}
			diff, lim = cmplx.Abs(g-w), tol.ATol+tol.RTol*cmplx.Abs(w)
		case t.IsFloat():
			g, w := gl.GetFloat64(i), wl.GetFloat64(i)
			if math.IsNaN(g) && math.IsNaN(w) || g == w {
				continue
			}
			diff, lim = math.Abs(g-w), tol.ATol+tol.RTol*math.Abs(w)
			if math.IsNaN(diff) {
				diff = math.Inf(1)
			}
		case t.IsUnsigned():
			g, w := gl.GetUint64(i), wl.GetUint64(i)
			if g == w {
				continue
			}
			diff, lim = math.Abs(float64(g)-float64(w)), tol.ATol+tol.RTol*float64(w)
		case t.IsPred():
			if gl.GetBool(i) == wl.GetBool(i) {
				continue
			}
			diff, lim = 1, 0
		default:
			g, w := gl.GetInt64(i), wl.GetInt64(i)
			if g == w {
				continue
			}
			diff, lim = math.Abs(float64(g)-float64(w)), tol.ATol+tol.RTol*math.Abs(float64(w))
		}
		if diff > lim {
			bad++
			if diff-lim > worst || worstAt < 0 {
				worst, worstAt = diff-lim, i
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements differ; worst at %d: got %v, want %v", bad, wl.Len(), worstAt,
			elemString(gl, worstAt), elemString(wl, worstAt))
	}
	return nil
}

// elemString prints element i of l in its own kind: integers exactly,
// complex numbers as pairs, the rest as floats.
func elemString(l *hlo.Literal, i int) string {
	switch t := l.DType(); {
	case t.IsComplex():
		return fmt.Sprint(l.GetComplex128(i))
	case t.IsUnsigned():
		return strconv.FormatUint(l.GetUint64(i), 10)
	case t.IsInteger():
		return strconv.FormatInt(l.GetInt64(i), 10)
	case t.IsPred():
		return strconv.FormatBool(l.GetBool(i))
	}
	return strconv.FormatFloat(l.GetFloat64(i), 'g', 9, 64)
}
