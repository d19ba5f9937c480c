package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/backend/cpu/compiler"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

// optFlags are the pipeline choices shared by `axle opt` and
// `axle test-cases --opt`.
type optFlags struct {
	passes, skip string
	verifyEach   bool
}

func (f *optFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.passes, "passes", "", "comma-separated pass names to run (default: the whole pipeline)")
	fs.StringVar(&f.skip, "skip-passes", "", "comma-separated pass names not to run")
	fs.BoolVar(&f.verifyEach, "verify-each", false, "verify the module after every pass and check that unchanged passes changed nothing")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (f *optFlags) options() pass.Options {
	return pass.Options{Only: splitList(f.passes), Skip: splitList(f.skip), Verify: f.verifyEach, CheckUnchanged: f.verifyEach}
}

// cmdOpt: axle opt [--backend cpu] [--passes p,q] [--skip-passes p]
// [--verify-each] [--timings] [--dump-to DIR --dump-pass-re RE
// --dump-format text,dot,html] FILE.hlo
func cmdOpt(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("opt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var of optFlags
	of.register(fs)
	backend := fs.String("backend", "", "run this backend's pipeline (cpu: the standard passes, then fusion) rather than the standard one")
	timings := fs.Bool("timings", false, "print per-pass times to stderr")
	short := fs.Bool("short", false, "print the result in XLA's short parsable form")
	var df dumpFlags
	df.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "axle opt: want exactly one input file")
		return 2
	}
	pipeline, err := backendPipeline(*backend)
	if err != nil {
		fmt.Fprintln(stderr, "axle opt:", err)
		return 2
	}
	path := fs.Arg(0)
	mods, err := loadModules(path, 0, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	status := 0
	for _, m := range mods {
		if err := optimize(m, pipeline(), of, df, *timings, stderr); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, err)
			status = 1
			continue
		}
		fmt.Fprint(stdout, hlotext.Print(m, hlotext.PrintOptions{Short: *short}))
	}
	return status
}

// backendPipeline returns what builds the pipeline --backend names, one
// per module (a backend's passes may keep per-module state).
func backendPipeline(name string) (func() *pass.Pipeline, error) {
	switch name {
	case "":
		return opt.Standard, nil
	case "cpu":
		return func() *pass.Pipeline {
			return compiler.Pipeline(true, cpu.FusionPasses(cpu.Options{}, compiler.Compiler{}), cpu.FusionOrders)
		}, nil
	}
	return nil, fmt.Errorf("unknown backend %q (want cpu)", name)
}

func optimize(m *hlo.Module, pl *pass.Pipeline, of optFlags, df dumpFlags, timings bool, stderr io.Writer) error {
	if err := hlo.Verify(m); err != nil {
		return err
	}
	opts := of.options()
	if timings {
		opts.Timings = &pass.Timings{}
	}
	d, err := df.observer(m)
	if err != nil {
		return err
	}
	if d != nil {
		opts.Observers = append(opts.Observers, d.Observe)
	}
	_, err = pl.RunWith(m, opts)
	if d != nil {
		if ferr := d.Finish(); err == nil {
			err = ferr
		}
	}
	if timings {
		fmt.Fprint(stderr, opts.Timings)
	}
	return err
}
