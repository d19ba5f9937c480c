package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/npy"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
)

// onnxRun is what `axle run` needs to run an ONNX model.
type onnxRun struct {
	path, inputs, saveOutputs, dumpTo string
	cpuProfile                        string // pprof CPU profile of the timed runs
	memProfile                        string // pprof profile of every allocation (--memprofile)
	backend                           string
	threads, warmup, repeat           int
	seed                              uint64
	asJSON, logPlacement, noSoft      bool
	noCluster, profile                bool
	profileRows                       int // kernels --profile lists (0: all)
}

// isONNX says whether a file given to axle run is an ONNX model.
func isONNX(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".onnx") }

// runONNX loads the model (placing and clustering its nodes), feeds it the
// --inputs arrays by graph input name (or seeded random tensors), runs it
// warmup+repeat times and prints as axle run does for HLO.
func runONNX(o onnxRun, stdout, stderr io.Writer) int {
	start := time.Now()
	opts := graph.Options{Backend: o.backend, Threads: o.threads, DumpDir: o.dumpTo,
		NoSoftPlacement: o.noSoft, NoClustering: o.noCluster, Compile: axle.CompileOptions{Profile: o.profile}}
	if o.logPlacement {
		opts.LogPlacement = stdout
	}
	sess, err := graph.Open(o.path, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer sess.Close()
	in, err := onnxInputs(sess, o)
	if err != nil {
		fmt.Fprintf(stderr, "axle run: %v\n", err)
		return 1
	}
	meter := &allocMeter{profile: o.memProfile}
	out, times, first, err := timeONNX(sess, in, o, start, meter)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	allocs, allocBytes, err := meter.stop(len(times))
	if err != nil {
		fmt.Fprintf(stderr, "axle run: %v\n", err)
		return 1
	}
	if o.saveOutputs != "" {
		var arrays []npy.Array
		for i, v := range out {
			if v.Kind != onnx.KindTensor || v.Tensor.IsString() {
				fmt.Fprintf(stderr, "axle run: --save-outputs: output %q is %v, not a numeric tensor\n", sess.Outputs()[i].Name, v)
				return 1
			}
			arrays = append(arrays, npy.Array{Name: sess.Outputs()[i].Name, Lit: v.Tensor.Lit})
		}
		if err := npy.WriteNPZ(o.saveOutputs, arrays); err != nil {
			fmt.Fprintf(stderr, "axle run: --save-outputs: %v\n", err)
			return 1
		}
	}
	type output struct {
		Name     string    `json:"name"`
		Shape    string    `json:"shape"`
		Checksum jsonFloat `json:"checksum"`
	}
	var outs []output
	for i, v := range out {
		name := sess.Outputs()[i].Name
		if v.Kind == onnx.KindTensor && !v.Tensor.IsString() {
			r := output{name, v.Tensor.Lit.Shape().HumanString(), jsonFloat(checksum(v.Tensor.Lit))}
			outs = append(outs, r)
			fmt.Fprintf(stdout, "result %s checksum %.9g (%s)\n", r.Shape, r.Checksum, r.Name)
			continue
		}
		fmt.Fprintf(stdout, "result %s (%s)\n", describeValue(v), name) // strings, sequences, maps: no checksum
	}
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	fmt.Fprintf(stdout, "load and first run %.3f ms; run min %.3f ms, median %.3f ms, max %.3f ms over %d runs\n",
		ms(first), ms(times[0]), ms(times[len(times)/2]), ms(times[len(times)-1]), len(times))
	fmt.Fprintln(stdout, allocLine(allocs, allocBytes))
	if o.profile {
		fmt.Fprint(stdout, sess.ProfileTable(o.profileRows))
	}
	if o.asJSON {
		printJSON(stdout, map[string]any{
			"compile_ms": ms(first),
			"run_ms":     map[string]float64{"min": ms(times[0]), "median": ms(times[len(times)/2]), "max": ms(times[len(times)-1])},
			"outputs":    outs,
			"allocs":     map[string]float64{"per_run": allocs, "bytes_per_run": allocBytes},
		})
	}
	return 0
}

// onnxInputs reads --inputs (an .npz archive; arrays named after the graph
// inputs, or arr_0, arr_1, ... in input order) or makes seeded random
// tensors of the declared shapes (symbolic dimensions 1).
func onnxInputs(sess *graph.Session, o onnxRun) ([]*onnx.Value, error) {
	return modelInputs(sess.Inputs(), o)
}

// modelInputs are the --inputs arrays for the graph inputs gin, or seeded
// random tensors of their shapes.
func modelInputs(gin []*onnx.ValueInfo, o onnxRun) ([]*onnx.Value, error) {
	out := make([]*onnx.Value, len(gin))
	if o.inputs != "" {
		arrays, err := npy.ReadNPZ(o.inputs)
		if err != nil {
			return nil, fmt.Errorf("--inputs: %w", err)
		}
		byName := map[string]*hlo.Literal{}
		for _, a := range arrays {
			byName[a.Name] = a.Lit
		}
		for i, vi := range gin {
			l, ok := byName[vi.Name]
			if !ok {
				l, ok = byName[fmt.Sprintf("arr_%d", i)]
			}
			if !ok {
				return nil, fmt.Errorf("--inputs: %s has no array %q (nor arr_%d)", o.inputs, vi.Name, i)
			}
			out[i] = onnx.LiteralValue(l)
		}
		return out, nil
	}
	rng := rand.New(rand.NewPCG(o.seed, 0))
	for i, vi := range gin {
		if vi.Type == nil || vi.Type.Kind != onnx.KindTensor || vi.Type.Elem.HLO() == hlo.Invalid {
			return nil, fmt.Errorf("input %q: give it with --inputs (Axle makes up numeric tensors only)", vi.Name)
		}
		dims := make([]int64, len(vi.Type.Dims))
		for k, d := range vi.Type.Dims {
			dims[k] = max(d, 1)
		}
		s := hlo.ArrayShape(vi.Type.Elem.HLO(), dims...)
		l := eval.RandomLiteral(s, rng)
		if s.DType.IsInteger() {
			for k := range l.Len() { // small indices: safe for Gather and Embedding inputs
				l.SetInt64(k, int64(rng.IntN(2)))
			}
		}
		out[i] = onnx.LiteralValue(l)
	}
	return out, nil
}

// timeONNX runs the session warmup+repeat times, timing the repeats (under
// a CPU profile with --cpuprofile), and returns the last outputs, the
// timed runs and the time from start to the end of the first run.
func timeONNX(sess *graph.Session, in []*onnx.Value, o onnxRun, start time.Time, meter *allocMeter) (out []*onnx.Value, times []time.Duration, first time.Duration, err error) {
	stopProfile := func() {}
	defer func() { stopProfile() }()
	for i := range o.warmup + max(o.repeat, 1) {
		if i == o.warmup && o.cpuProfile != "" {
			if stopProfile, err = startCPUProfile(o.cpuProfile); err != nil {
				stopProfile = func() {}
				return nil, nil, 0, fmt.Errorf("axle run: %w", err)
			}
		}
		if i == o.warmup {
			meter.start()
		}
		t0 := time.Now()
		if out, err = sess.RunOrdered(context.Background(), in); err != nil {
			return nil, nil, 0, err
		}
		if i == 0 {
			first = time.Since(start)
		}
		if i >= o.warmup {
			times = append(times, time.Since(t0))
		}
	}
	return out, times, first, nil
}

// describeValue is a non-numeric output as a result line shows it: a
// string tensor's shape, a sequence's length and first element, a map's
// key and value types.
func describeValue(v *onnx.Value) string {
	if v == nil {
		return "<none>"
	}
	if v.Kind == onnx.KindSequence {
		if len(v.Elems) == 0 {
			return "seq(empty)"
		}
		return fmt.Sprintf("seq(%d × %s)", len(v.Elems), describeValue(v.Elems[0]))
	}
	return v.String()
}
