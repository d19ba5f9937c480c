// Package command is the command an ahead-of-time package ships with
// (`axle aot --main`): it loads the plan, feeds it the arrays of an .npz
// archive or the seeded random arguments `axle run` feeds the module,
// runs it, and prints as `axle run` does, so that the two compare line by
// line. It links what package aot links, and NumPy's formats.
package command

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/axle-ml/axle/aot"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/randlit"
	"github.com/axle-ml/axle/npy"
)

// started is when this package was initialized: as early in the process
// as a Go package can see, so "first result" counts the runtime's start
// too, loosely (the kernel's exec and Go's own start before it are not).
var started = time.Now()

// Main runs the command with args (flags, no file: the plan is the
// package's) and returns its exit status.
func Main(load func(aot.Options) (*aot.Program, error), args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("aot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threads := fs.Int("threads", 0, "worker threads (0: GOMAXPROCS)")
	warmup := fs.Int("warmup", 0, "untimed runs before the timed ones")
	repeat := fs.Int("repeat", 1, "timed runs")
	asJSON := fs.Bool("json", false, "end with one JSON line of the results")
	inputs := fs.String("inputs", "", "arguments from NumPy: an .npz archive or comma-separated .npy files, by parameter name or as arg0, arg1, ...")
	saveOutputs := fs.String("save-outputs", "", "write the results to this .npz archive as output_0, output_1, ...")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "the plan is built in: give flags only")
		return 2
	}
	restoreGC := quietStart()
	p, err := load(aot.Options{Threads: *threads})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	loaded := time.Since(started)
	t := time.Now()
	argv, err := arguments(p, *inputs)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	r := &report{p: p, load: loaded, args: time.Since(t), afterFirst: restoreGC}
	if err := r.run(argv, max(*warmup, 0), max(*repeat, 1)); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *saveOutputs != "" {
		if err := save(*saveOutputs, r.result); err != nil {
			fmt.Fprintf(stderr, "--save-outputs: %v\n", err)
			return 1
		}
	}
	r.print(stdout, *asJSON)
	return 0
}

// arguments are the arrays of spec bound to the parameters, or the
// seeded random ones `axle run` draws after the elided constants.
func arguments(p *aot.Program, spec string) ([]*hlo.Literal, error) {
	m := p.Module()
	if spec != "" {
		arrays, err := npy.LoadInputs(spec)
		if err != nil {
			return nil, err
		}
		args, err := npy.BindInputs(arrays, spec, m, nil)
		if err != nil {
			return nil, fmt.Errorf("--inputs: %w", err)
		}
		return args, nil
	}
	h := p.Header()
	src := randlit.Source(h.Seed)
	if len(h.ArgSource) > 0 {
		if err := src.UnmarshalBinary(h.ArgSource); err != nil {
			return nil, fmt.Errorf("the plan's argument stream: %w", err)
		}
	}
	return randlit.Arguments(randlit.ParamShapes(m), rand.New(src)), nil
}

// report is one command's runs.
type report struct {
	p      *aot.Program
	load   time.Duration // process (package) start to a loaded plan
	args   time.Duration // making or reading the arguments (not counted in first)
	first  time.Duration // process (package) start to the first result, args excluded
	times  []time.Duration
	result []*hlo.Literal
	// afterFirst runs once the first result is in (quietStart's undo).
	afterFirst func()
}

func (r *report) run(argv []*hlo.Literal, warmup, repeat int) error {
	for i := range warmup + repeat {
		t := time.Now()
		out, err := r.p.Run(context.Background(), argv...)
		if err != nil {
			return err
		}
		if i == 0 {
			r.first = time.Since(started) - r.args
			if r.afterFirst != nil {
				r.afterFirst()
			}
		}
		if i >= warmup {
			r.times = append(r.times, time.Since(t))
		}
		r.result = out
	}
	slices.Sort(r.times)
	return nil
}

type output struct {
	Shape    string  `json:"shape"`
	Checksum float64 `json:"checksum"`
}

func (r *report) print(w io.Writer, asJSON bool) {
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	vendor, family, model := kernels.CPUModel()
	fmt.Fprintf(w, "cpu: %s family %d model %d; kernels %s\n", vendor, family, model, kernels.Kernels())
	fmt.Fprintf(w, "engine: ahead-of-time (planned on %s)\n", r.p.Header().Host)
	fmt.Fprintf(w, "lowered %s\n", aot.LoweringSummary(r.p.Lowering()))
	var outs []output
	for _, l := range r.result {
		outs = append(outs, output{l.Shape().HumanString(), aot.Checksum(l)})
	}
	for _, o := range outs {
		fmt.Fprintf(w, "result %s checksum %.9g\n", o.Shape, o.Checksum)
	}
	t := r.times
	fmt.Fprintf(w, "load %.3f ms; run min %.3f ms, median %.3f ms, max %.3f ms over %d runs\n",
		ms(r.load), ms(t[0]), ms(t[len(t)/2]), ms(t[len(t)-1]), len(t))
	fmt.Fprintf(w, "first result %.3f ms after start (making the arguments, %.3f ms, not counted)\n", ms(r.first), ms(r.args))
	fmt.Fprintf(w, "measured peak: %d bytes in one execution (arguments excluded)\n", r.p.PeakBytes())
	if asJSON {
		line, _ := json.Marshal(map[string]any{
			"load_ms":         ms(r.load),
			"first_result_ms": ms(r.first),
			"run_ms":          map[string]float64{"min": ms(t[0]), "median": ms(t[len(t)/2]), "max": ms(t[len(t)-1])},
			"outputs":         outs,
			"cpu":             map[string]any{"vendor": vendor, "family": family, "model": model, "kernels": kernels.Kernels()},
		})
		fmt.Fprintln(w, string(line))
	}
}

// save writes the results as output_0, output_1, ... (as `axle run`).
func save(path string, results []*hlo.Literal) error {
	arrays := make([]npy.Array, len(results))
	for i, l := range results {
		arrays[i] = npy.Array{Name: fmt.Sprintf("output_%d", i), Lit: l}
	}
	return npy.WriteNPZ(path, arrays)
}

// quietStart turns the garbage collector off until the first result
// (unless GOGC says how to run it), and returns its undo. Until then
// nearly everything the command allocates stays live (the plan's module
// and code, the arguments, the first outputs): a collection would find
// little to free, yet its marking and assists ran during the first
// execution (mlp_b256: first result 4.7–6.6 ms median with it, 3.7–4.3
// without, alternated on one host). A memory limit keeps a large plan's
// load from growing without bound meanwhile: the collector runs when the
// heap nears it.
func quietStart() (undo func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(startLimit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// startLimit bounds the heap while the collector is off at start.
const startLimit = 2 << 30
